import Foundation
import MatterCrypto
import MatterModel
import MatterTLV

/// Door Lock cluster (Application Cluster spec 5.2): lock and unlock from a controller (Timed
/// Invoke, the model says so) or by hand, a PIN checked against the users' PIN credentials,
/// the wrong-code lockout, auto-relock on the node clock, and users and PIN credentials (USR,
/// PIN) kept in the state directory with each PIN stored as a salted HMAC, never in clear.
/// Every operation raises the events controllers follow: LockOperation, LockOperationError,
/// DoorLockAlarm, LockUserChange.
final class DoorLockServer: DoorLockHandler, PhysicallyOperated {
    static let clusterID = Clusters.DoorLock.id

    typealias Feature = Clusters.DoorLock.Feature
    typealias Attribute = Clusters.DoorLock.Attribute
    typealias Command = Clusters.DoorLock.Command
    typealias Commands = Clusters.DoorLock.Commands

    typealias Events = Clusters.DoorLock.Events
    typealias LockState = Clusters.DoorLock.LockStateEnum
    typealias Operation = Clusters.DoorLock.LockOperationTypeEnum
    typealias Source = Clusters.DoorLock.OperationSourceEnum
    typealias OperationError = Clusters.DoorLock.OperationErrorEnum
    typealias DataType = Clusters.DoorLock.LockDataTypeEnum
    typealias DataOperation = Clusters.DoorLock.DataOperationTypeEnum

    /// SetCredentialResponse's status (5.2.10.x): an IM status code, or one of the cluster's
    /// (StatusCodeEnum). The spec's INVALID_FIELD is the IM's INVALID_COMMAND code.
    struct CredentialStatus {
        let rawValue: UInt8
        static let success = Self(rawValue: StatusCode.success.rawValue)
        static let failure = Self(rawValue: StatusCode.failure.rawValue)
        static let duplicate = Self(rawValue: Clusters.DoorLock.StatusCodeEnum.duplicate.rawValue)
        static let occupied = Self(rawValue: Clusters.DoorLock.StatusCodeEnum.occupied.rawValue)
        static let invalidField = Self(rawValue: StatusCode.invalidCommand.rawValue)
        static let resourceExhausted = Self(rawValue: StatusCode.resourceExhausted.rawValue)
    }
    /// UserIndex / CredentialIndex meaning every one (ClearUser, ClearCredential).
    static let all: UInt64 = 0xFFFE
    /// UserStatusEnum.OccupiedEnabled / OccupiedDisabled.
    static let enabled: UInt64 = 1
    static let disabled: UInt64 = 3

    private static let relockTimer = "relock"
    private static let lockoutTimer = "lockout"

    /// One user (5.2.6.x UserStruct fields kept here) and one PIN credential.
    struct User: Codable, Sendable, Hashable {
        var name: String
        var uniqueID: UInt32?
        var status: UInt8
        var type: UInt8
        var credentialRule: UInt8
        var creatorFabric: UInt8
        var lastModifiedFabric: UInt8
    }

    struct PIN: Codable, Sendable, Hashable {
        var user: UInt16
        var salt: [UInt8]
        var digest: [UInt8]
        var creatorFabric: UInt8
        var lastModifiedFabric: UInt8

        init(_ code: [UInt8], user: UInt16, fabric: UInt8) {
            var generator = SystemRandomNumberGenerator()
            salt = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
            digest = MatterHash.hmacSHA256(key: salt, message: code)
            self.user = user
            creatorFabric = fabric
            lastModifiedFabric = fabric
        }

        /// Compared in constant time.
        func matches(_ code: [UInt8]) -> Bool { MatterHash.hmacSHA256IsValid(digest, key: salt, message: code) }
    }

    /// What the state directory keeps (`door-lock-<endpoint>.json`).
    struct Stored: Codable, Sendable {
        var users: [UInt16: User] = [:]
        var pins: [UInt16: PIN] = [:]
    }

    private let features: Set<String>
    private var stored = Stored()
    private var wrongCodeEntries = 0
    private var lockedOut = false

    init(features: Set<String>) {
        self.features = features
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.lockState: .uint(LockState.locked.rawValue)
        case Attribute.lockType: .uint(0)  // DeadBolt
        case Attribute.actuatorEnabled: .bool(true)
        case Attribute.numberOfTotalUsersSupported: .uint(10)
        case Attribute.numberOfPINUsersSupported: .uint(10)
        case Attribute.maxPINCodeLength: .uint(8)
        case Attribute.minPINCodeLength: .uint(4)
        case Attribute.credentialRulesSupport: .uint(1)  // Single
        case Attribute.numberOfCredentialsSupportedPerUser: .uint(5)
        case Attribute.autoRelockTime: .uint(0)
        case Attribute.operatingMode: .uint(0)  // Normal
        // Every bit set but those of the modes supported, Normal and NoRemoteLockUnlock (5.2.9.25:
        // a mode NOT supported SHALL be set to one; the reserved bits too, 0xFFF6 as the spec's default).
        case Attribute.supportedOperatingModes: .uint(UInt64(~Clusters.DoorLock.OperatingModesBitmap([.normal, .noRemoteLockUnlock]).rawValue))
        case Attribute.wrongCodeEntryLimit: .uint(3)
        case Attribute.userCodeTemporaryDisableTime: .uint(10)
        case Attribute.requirePINforRemoteOperation: .bool(false)
        default: nil
        }
    }

    /// SetUser, GetUser, SetCredential and ClearCredential answer their own field errors: an
    /// unknown UserStatus, UserType, CredentialRule or CredentialType, or a UserIndex out of
    /// range, is INVALID_COMMAND, not the generic CONSTRAINT_ERROR (TC-DRLK-2.9 steps 4 and 14b,
    /// TC-DRLK-2.8 steps 4 and 6c).
    func answersConstraintErrors(_ command: CommandID) -> Bool {
        command == Command.setUser || command == Command.getUser || command == Command.setCredential
            || command == Command.clearCredential
    }

    func handles(_ command: CommandID) -> Bool {
        switch command {
        case Command.lockDoor, Command.unlockDoor, Command.unlockWithTimeout: true
        case Command.setUser, Command.getUser, Command.clearUser: features.contains(Feature.user)
        case Command.setCredential, Command.getCredentialStatus, Command.clearCredential: features.contains(Feature.user)
        default: false
        }
    }

    func startUp(_ context: ClusterContext) {
        do {
            stored = try context.stateStore?.load(Stored.self, storeName(context)) ?? Stored()
        } catch {
            context.logger.warning("door lock users: \(error); starting with none")
        }
    }

    // MARK: Commands

    /// SetCredential's and ClearCredential's fields reach here unchecked against their ranges:
    /// an unknown UserStatus or UserType, or anything wrong in ClearCredential, is INVALID_COMMAND;
    /// anything else wrong in SetCredential is its response's INVALID_FIELD.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        switch command {
        case Command.setCredential where !error.concerns(field: "UserStatus") && !error.concerns(field: "UserType"):
            let response = Commands.SetCredentialResponse(
                status: CredentialStatus.invalidField.rawValue, userIndex: nil, nextCredentialIndex: .null)
            return .response(Command.setCredentialResponse, response.tlv)
        case Command.setCredential, Command.clearCredential:
            return .failure(.invalidCommand)
        // A UserType or CredentialRule outside its enum is an invalid command (TC-DRLK-2.x SetUser).
        case Command.setUser where error.concerns(field: "UserType") || error.concerns(field: "CredentialRule"):
            return .failure(.invalidCommand)
        default:
            return .failure(error.status)
        }
    }

    func lockDoor(_ request: Commands.LockDoor, context: ClusterContext) -> InteractionStatus {
        remote(.lock, pin: request.pinCode.map { [UInt8]($0) }, relockAfter: nil, context)
    }

    func unlockDoor(_ request: Commands.UnlockDoor, context: ClusterContext) -> InteractionStatus {
        remote(.unlock, pin: request.pinCode.map { [UInt8]($0) }, relockAfter: nil, context)
    }

    func unlockWithTimeout(_ request: Commands.UnlockWithTimeout, context: ClusterContext) -> InteractionStatus {
        remote(.unlock, pin: request.pinCode.map { [UInt8]($0) }, relockAfter: UInt64(request.timeout), context)
    }

    /// LockDoor, UnlockDoor, UnlockWithTimeout (5.2.7.1-3): refused outright during a wrong-code
    /// lockout or in a mode that forbids remote operation; a PIN given is always checked, and a
    /// missing one is wrong only when RequirePINforRemoteOperation says so. Plain SUCCESS or
    /// FAILURE either way.
    private func remote(_ operation: Operation, pin: [UInt8]?, relockAfter: UInt64?, _ context: ClusterContext) -> InteractionStatus {
        let mode = context.unsigned(Attribute.operatingMode) ?? 0
        guard mode != 2, mode != 3 else {  // Privacy, NoRemoteLockUnlock
            raiseError(operation, .remote, .unspecified, user: nil, context)
            return InteractionStatus(.failure)
        }
        guard !lockedOut else { return InteractionStatus(.failure) }
        var user: UInt16?
        if let pin {
            guard let (index, owner) = credential(matching: pin) else { return wrongCode(operation, context) }
            guard stored.users[owner]?.status == UInt8(Self.enabled) else {
                raiseError(operation, .remote, .disabledUserDenied, user: owner, pinIndex: index, context)
                return InteractionStatus(.failure)
            }
            user = owner
            wrongCodeEntries = 0
        } else if features.contains(Feature.credentialOverTheAirAccess), features.contains(Feature.pinCredential),
            context.bool(Attribute.requirePINforRemoteOperation) == true
        {
            return wrongCode(operation, context)
        }
        let pinIndex = user.flatMap { u in stored.pins.first { $0.value.user == u }?.key }
        set(operation == .lock ? .locked : .unlocked, source: .remote, user: user, pinIndex: pinIndex, context)
        if operation == .unlock, let relockAfter {
            if relockAfter > 0 { context.startTimer(Self.relockTimer, after: .seconds(Int64(relockAfter))) }
        }
        return .success
    }

    /// A wrong or missing PIN: LockOperationError, and at the WrongCodeEntryLimit-th one a
    /// DoorLockAlarm and a lockout of UserCodeTemporaryDisableTime seconds.
    private func wrongCode(_ operation: Operation, _ context: ClusterContext) -> InteractionStatus {
        wrongCodeEntries += 1
        let limit = Int(context.unsigned(Attribute.wrongCodeEntryLimit) ?? 0)
        if limit > 0, wrongCodeEntries >= limit {
            wrongCodeEntries = 0
            lockedOut = true
            context.startTimer(Self.lockoutTimer, after: .seconds(Int64(context.unsigned(Attribute.userCodeTemporaryDisableTime) ?? 0)))
            context.record(Events.DoorLockAlarm(alarmCode: .wrongCodeEntryLimit))
        }
        raiseError(operation, .remote, .invalidCredential, user: nil, context)
        return InteractionStatus(.failure)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        switch name {
        case Self.relockTimer:
            if context.unsigned(Attribute.lockState) != UInt64(LockState.locked.rawValue) {
                set(.locked, source: .auto, user: nil, context)
            }
        case Self.lockoutTimer:
            lockedOut = false
        default: break
        }
    }

    // MARK: By hand

    func perform(_ action: PhysicalAction, context: ClusterContext) throws(PhysicalActionError) {
        switch action {
        case .lock(let code), .unlock(let code):
            let operation: Operation = if case .lock = action { .lock } else { .unlock }
            var user: UInt16?
            var pinIndex: UInt16?
            if let code {
                // At the keypad: the code must be a user's PIN.
                guard let (index, owner) = credential(matching: Array(code.utf8)), stored.users[owner]?.status == UInt8(Self.enabled)
                else {
                    raiseError(operation, .keypad, .invalidCredential, user: nil, context)
                    throw PhysicalActionError("the keypad refused \(code): no enabled user has that PIN")
                }
                (user, pinIndex) = (owner, index)
            }
            set(operation == .lock ? .locked : .unlocked, source: code == nil ? .manual : .keypad, user: user, pinIndex: pinIndex, context)
        default:
            throw PhysicalActionError("Door Lock cannot \(action)")
        }
    }

    /// Moves the bolt: LockState, a LockOperation event, and the auto-relock timer after an unlock.
    private func set(_ state: LockState, source: Source, user: UInt16?, pinIndex: UInt16? = nil, _ context: ClusterContext) {
        context.set(Attribute.lockState, .uint(state.rawValue))
        context.cancelTimer(Self.relockTimer)
        if state == .unlocked, let seconds = context.unsigned(Attribute.autoRelockTime), seconds > 0 {
            context.startTimer(Self.relockTimer, after: .seconds(Int64(seconds)))
        }
        let caller = source == .remote ? context.session?.subject : nil
        context.record(
            Events.LockOperation(
                lockOperationType: state == .locked ? .lock : .unlock, operationSource: source, userIndex: user,
                fabricIndex: caller?.fabricIndex, sourceNode: caller?.subject, credentials: credentials(pinIndex)))
    }

    private func raiseError(
        _ operation: Operation, _ source: Source, _ error: OperationError, user: UInt16?, pinIndex: UInt16? = nil, _ context: ClusterContext
    ) {
        let caller = source == .remote ? context.session?.subject : nil
        context.record(
            Events.LockOperationError(
                lockOperationType: operation, operationSource: source, operationError: error, userIndex: user,
                fabricIndex: caller?.fabricIndex, sourceNode: caller?.subject, credentials: credentials(pinIndex)))
    }

    // MARK: Users (USR)

    private func userIndexInRange(_ index: UInt64?, _ context: ClusterContext) -> UInt16? {
        guard let index, index >= 1, index <= context.unsigned(Attribute.numberOfTotalUsersSupported) ?? 0 else { return nil }
        return UInt16(index)
    }

    /// SetUser (5.2.7.x): Add to a free index or Modify an occupied one; null fields take
    /// their defaults on Add and keep their values on Modify.
    func setUser(_ request: Commands.SetUser, context: ClusterContext) -> InteractionStatus {
        let fabric = callerFabric(context)
        guard request.operationType != .clear, let index = userIndexInRange(UInt64(request.userIndex), context) else {
            return InteractionStatus(.invalidCommand)
        }
        let name = request.userName
        if let name, name.utf8.count > 10 { return InteractionStatus(.invalidCommand) }
        let operation: DataOperation = request.operationType == .add ? .add : .modify
        var user: User
        switch operation {
        case .add:
            guard stored.users[index] == nil else { return InteractionStatus(.failure, clusterStatus: 3) }  // OCCUPIED
            user = User(
                name: name ?? "", uniqueID: nil, status: UInt8(Self.enabled), type: 0, credentialRule: 0, creatorFabric: fabric,
                lastModifiedFabric: fabric)
        default:
            guard let existing = stored.users[index] else { return InteractionStatus(.invalidCommand) }
            if existing.creatorFabric != fabric, name != nil || request.userUniqueID != nil { return InteractionStatus(.invalidCommand) }
            user = existing
            user.lastModifiedFabric = fabric
            if let name { user.name = name }
        }
        if let uniqueID = request.userUniqueID { user.uniqueID = uniqueID }
        if let status = request.userStatus {
            guard status == .occupiedEnabled || status == .occupiedDisabled else { return InteractionStatus(.invalidCommand) }
            user.status = status.rawValue
        }
        if let type = request.userType { user.type = type.rawValue }
        if let rule = request.credentialRule { user.credentialRule = rule.rawValue }
        stored.users[index] = user
        save(context)
        userChanged(.userIndex, operation, user: index, dataIndex: index, context)
        return .success
    }

    func getUser(_ request: Commands.GetUser, context: ClusterContext) -> CommandReply<Commands.GetUserResponse> {
        guard let index = userIndexInRange(UInt64(request.userIndex), context) else { return .failure(.invalidCommand) }
        let next = stored.users.keys.filter { $0 > index }.min()
        guard let user = stored.users[index] else {
            return .response(
                Commands.GetUserResponse(
                    userIndex: index, userName: nil, userUniqueID: nil, userStatus: nil, userType: nil, credentialRule: nil,
                    credentials: nil, creatorFabricIndex: nil, lastModifiedFabricIndex: nil, nextUserIndex: next))
        }
        let pins = stored.pins.filter { $0.value.user == index }.keys.sorted()
        return .response(
            Commands.GetUserResponse(
                userIndex: index, userName: user.name, userUniqueID: user.uniqueID,
                userStatus: Clusters.DoorLock.UserStatusEnum(rawValue: user.status),
                userType: Clusters.DoorLock.UserTypeEnum(rawValue: user.type),
                credentialRule: Clusters.DoorLock.CredentialRuleEnum(rawValue: user.credentialRule),
                credentials: pins.map(Self.pinCredentialStruct), creatorFabricIndex: user.creatorFabric,
                lastModifiedFabricIndex: user.lastModifiedFabric, nextUserIndex: next))
    }

    /// ClearUser: the user with its credentials; 0xFFFE every user.
    func clearUser(_ request: Commands.ClearUser, context: ClusterContext) -> InteractionStatus {
        let requested = UInt64(request.userIndex)
        if requested == Self.all {
            stored = Stored()
            save(context)
            userChanged(.userIndex, .clear, user: UInt16(Self.all), dataIndex: UInt16(Self.all), context)
            return .success
        }
        guard let index = userIndexInRange(requested, context) else { return InteractionStatus(.invalidCommand) }
        stored.users[index] = nil
        stored.pins = stored.pins.filter { $0.value.user != index }
        save(context)
        userChanged(.userIndex, .clear, user: index, dataIndex: index, context)
        return .success
    }

    // MARK: PIN credentials (USR, PIN)

    /// SetCredential (PIN): answered with SetCredentialResponse's status, the user the Add
    /// created and the next free credential index. UserIndex is null unless the Add created a
    /// user (Application Cluster spec 5.2, SetCredentialResponse UserIndex): a credential added
    /// to an existing user or modified answers null (TC-DRLK-2.4 step 2d).
    func setCredential(_ request: Commands.SetCredential, context: ClusterContext) -> CommandReply<Commands.SetCredentialResponse> {
        // UserStatus is OccupiedEnabled or OccupiedDisabled, UserType one of UserTypeEnum's
        // ten values (5.2.6), or null; anything else is INVALID_COMMAND (5.2.10.40).
        if let status = request.userStatus, status != .occupiedEnabled, status != .occupiedDisabled {
            return .failure(.invalidCommand)
        }
        let fabric = callerFabric(context)
        let capacity = UInt16(clamping: context.unsigned(Attribute.numberOfPINUsersSupported) ?? 0)
        func answer(_ status: CredentialStatus, user: UInt16? = nil, next: UInt16?) -> CommandReply<Commands.SetCredentialResponse> {
            .response(Commands.SetCredentialResponse(status: status.rawValue, userIndex: user, nextCredentialIndex: Nullable(next)))
        }
        guard request.operationType != .clear, request.credential.credentialType == .pin else { return answer(.invalidField, next: nil) }
        let rawIndex = UInt64(request.credential.credentialIndex)
        let code = [UInt8](request.credentialData)
        let operation: DataOperation = request.operationType == .add ? .add : .modify
        let next = rawIndex < UInt64(capacity) ? (UInt16(rawIndex + 1)...capacity).first { stored.pins[$0] == nil } : nil
        guard rawIndex >= 1, rawIndex <= UInt64(capacity) else { return answer(.invalidField, next: next) }
        let index = UInt16(rawIndex)
        let length = UInt64(code.count)
        guard length >= context.unsigned(Attribute.minPINCodeLength) ?? 0, length <= context.unsigned(Attribute.maxPINCodeLength) ?? 255
        else { return answer(.invalidField, next: next) }
        if stored.pins.contains(where: { $0.value.matches(code) }) { return answer(.duplicate, next: next) }
        var owner = request.userIndex.flatMap { userIndexInRange(UInt64($0), context) }
        var createdUser: UInt16?
        if request.userIndex != nil, owner == nil { return answer(.invalidField, next: next) }
        switch operation {
        case .add:
            guard stored.pins[index] == nil else { return answer(.occupied, next: next) }
            if let existing = owner {
                guard stored.users[existing] != nil else { return answer(.invalidField, next: next) }
                let held = stored.pins.values.filter { $0.user == existing }.count
                guard held < Int(context.unsigned(Attribute.numberOfCredentialsSupportedPerUser) ?? 0) else {
                    return answer(.resourceExhausted, next: next)
                }
            } else {
                // A new user for the credential, at the first free index.
                let total = UInt16(clamping: context.unsigned(Attribute.numberOfTotalUsersSupported) ?? 0)
                guard let free = (1...max(total, 1)).first(where: { stored.users[$0] == nil && $0 <= total }) else {
                    return answer(.occupied, next: next)
                }
                let status = request.userStatus?.rawValue ?? UInt8(Self.enabled)
                stored.users[free] = User(
                    name: "", uniqueID: nil, status: status, type: request.userType?.rawValue ?? 0,
                    credentialRule: 0, creatorFabric: fabric, lastModifiedFabric: fabric)
                userChanged(.userIndex, .add, user: free, dataIndex: free, context)
                owner = free
                createdUser = free
            }
        default:
            guard let existing = stored.pins[index], owner == nil || owner == existing.user else {
                return answer(.invalidField, next: next)
            }
            owner = existing.user
        }
        guard let owner else { return answer(.failure, next: next) }
        var pin = PIN(code, user: owner, fabric: fabric)
        if let existing = stored.pins[index], operation == .modify { pin.creatorFabric = existing.creatorFabric }
        stored.pins[index] = pin
        save(context)
        userChanged(.pin, operation, user: owner, dataIndex: index, context)
        return answer(.success, user: createdUser, next: next)
    }

    func getCredentialStatus(
        _ request: Commands.GetCredentialStatus, context: ClusterContext
    ) -> CommandReply<Commands.GetCredentialStatusResponse> {
        guard request.credential.credentialType == .pin else { return .failure(.invalidCommand) }
        let index = request.credential.credentialIndex
        let pin = stored.pins[index]
        let next = stored.pins.keys.filter { $0 > index }.min()
        return .response(
            Commands.GetCredentialStatusResponse(
                credentialExists: pin != nil, userIndex: pin?.user, creatorFabricIndex: pin?.creatorFabric,
                lastModifiedFabricIndex: pin?.lastModifiedFabric, nextCredentialIndex: Nullable(next)))
    }

    /// ClearCredential: one PIN (a user left without credentials goes too), 0xFFFE or null every one.
    func clearCredential(_ request: Commands.ClearCredential, context: ClusterContext) -> InteractionStatus {
        let type = request.credential?.credentialType
        guard let credential = request.credential, UInt64(credential.credentialIndex) != Self.all else {
            guard type == nil || type == .pin else { return InteractionStatus(.invalidCommand) }
            stored.pins = [:]
            save(context)
            userChanged(.pin, .clear, user: nil, dataIndex: UInt16(Self.all), context)
            return .success
        }
        guard credential.credentialType == .pin else { return InteractionStatus(.invalidCommand) }
        let index = credential.credentialIndex
        guard let pin = stored.pins.removeValue(forKey: index) else { return .success }
        if !stored.pins.values.contains(where: { $0.user == pin.user }) {
            stored.users[pin.user] = nil
            save(context)
            userChanged(.userIndex, .clear, user: pin.user, dataIndex: pin.user, context)
            return .success
        }
        save(context)
        userChanged(.pin, .clear, user: pin.user, dataIndex: index, context)
        return .success
    }

    // MARK: Helpers

    /// The PIN credential that matches `code`, with its user.
    private func credential(matching code: [UInt8]) -> (UInt16, UInt16)? {
        stored.pins.first { $0.value.matches(code) }.map { ($0.key, $0.value.user) }
    }

    private func userChanged(_ type: DataType, _ operation: DataOperation, user: UInt16?, dataIndex: UInt16, _ context: ClusterContext) {
        let caller = context.session?.subject
        context.record(
            Events.LockUserChange(
                lockDataType: type, dataOperationType: operation, operationSource: .remote, userIndex: user,
                fabricIndex: caller?.fabricIndex, sourceNode: caller?.subject, dataIndex: dataIndex))
    }

    private func callerFabric(_ context: ClusterContext) -> UInt8 { UInt8(truncatingIfNeeded: context.session?.subject.fabricIndex ?? 0) }

    private func storeName(_ context: ClusterContext) -> String { "door-lock-\(context.endpoint)" }

    private func save(_ context: ClusterContext) {
        do { try context.stateStore?.save(stored, storeName(context)) } catch {
            context.logger.warning("door lock users: cannot save: \(error)")
        }
    }

    private static func pinCredentialStruct(_ index: UInt16) -> Clusters.DoorLock.CredentialStruct {
        Clusters.DoorLock.CredentialStruct(credentialType: .pin, credentialIndex: index)
    }

    /// The events' Credentials field (with USR): the PIN used, or null.
    private func credentials(_ pinIndex: UInt16?) -> Nullable<[Clusters.DoorLock.CredentialStruct]>? {
        guard features.contains(Feature.user) else { return nil }
        return Nullable(pinIndex.map { [Self.pinCredentialStruct($0)] })
    }
}
