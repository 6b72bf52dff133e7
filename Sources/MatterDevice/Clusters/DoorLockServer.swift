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
final class DoorLockServer: PhysicallyOperated {
    static let clusterID = Clusters.DoorLock.id

    typealias Feature = Clusters.DoorLock.Feature
    typealias Attribute = Clusters.DoorLock.Attribute
    typealias Command = Clusters.DoorLock.Command
    typealias Event = Clusters.DoorLock.Event

    /// LockStateEnum, LockOperationTypeEnum, OperationSourceEnum, OperationErrorEnum,
    /// LockDataTypeEnum, DataOperationTypeEnum and the SetCredentialResponse status (5.2.6).
    enum LockState: UInt64 { case notFullyLocked = 0, locked = 1, unlocked = 2 }
    enum Operation: UInt64 { case lock = 0, unlock = 1 }
    enum Source: UInt64 { case manual = 1, keypad = 3, auto = 4, remote = 7 }
    enum OperationError: UInt64 { case unspecified = 0, invalidCredential = 1, disabledUserDenied = 2 }
    enum DataType: UInt64 { case userIndex = 2, pin = 6 }
    enum DataOperation: UInt64 { case add = 0, clear = 1, modify = 2 }
    enum CredentialStatus: UInt64 {
        case success = 0, failure = 1, duplicate = 2, occupied = 3, invalidField = 0x85, resourceExhausted = 0x89
    }
    static let pinCredential: UInt64 = 1
    static let wrongCodeEntryLimitAlarm: UInt64 = 4
    /// UserIndex / CredentialIndex meaning every one (ClearUser, ClearCredential).
    static let all: UInt64 = 0xFFFE
    /// UserStatusEnum.OccupiedEnabled / OccupiedDisabled.
    static let enabled: UInt64 = 1
    static let disabled: UInt64 = 3
    /// UserTypeEnum's last value, RemoteOnlyUser.
    static let lastUserType: UInt64 = 9

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
        // Bits clear for the modes supported (5.2.4.x): Normal and NoRemoteLockUnlock.
        case Attribute.supportedOperatingModes: .uint(0b10110)
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

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        switch command {
        case Command.lockDoor:
            return remote(.lock, pin: fields.field(0)?.bytesValue, relockAfter: nil, context)
        case Command.unlockDoor:
            return remote(.unlock, pin: fields.field(0)?.bytesValue, relockAfter: nil, context)
        case Command.unlockWithTimeout:
            return remote(.unlock, pin: fields.field(1)?.bytesValue, relockAfter: fields.unsigned(0) ?? 0, context)
        case Command.setUser: return setUser(fields, context)
        case Command.getUser: return getUser(fields, context)
        case Command.clearUser: return clearUser(fields, context)
        case Command.setCredential: return setCredential(fields, context)
        case Command.getCredentialStatus: return getCredentialStatus(fields, context)
        case Command.clearCredential: return clearCredential(fields, context)
        default: return .failure(.unsupportedCommand)
        }
    }

    /// LockDoor, UnlockDoor, UnlockWithTimeout (5.2.7.1-3): refused outright during a wrong-code
    /// lockout or in a mode that forbids remote operation; a PIN given is always checked, and a
    /// missing one is wrong only when RequirePINforRemoteOperation says so. Plain SUCCESS or
    /// FAILURE either way.
    private func remote(_ operation: Operation, pin: [UInt8]?, relockAfter: UInt64?, _ context: ClusterContext) -> InvokeResult {
        let mode = context.unsigned(Attribute.operatingMode) ?? 0
        guard mode != 2, mode != 3 else {  // Privacy, NoRemoteLockUnlock
            raiseError(operation, .remote, .unspecified, user: nil, context)
            return .failure(.failure)
        }
        guard !lockedOut else { return .failure(.failure) }
        var user: UInt16?
        if let pin {
            guard let (index, owner) = credential(matching: pin) else { return wrongCode(operation, context) }
            guard stored.users[owner]?.status == UInt8(Self.enabled) else {
                raiseError(operation, .remote, .disabledUserDenied, user: owner, pinIndex: index, context)
                return .failure(.failure)
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
    private func wrongCode(_ operation: Operation, _ context: ClusterContext) -> InvokeResult {
        wrongCodeEntries += 1
        let limit = Int(context.unsigned(Attribute.wrongCodeEntryLimit) ?? 0)
        if limit > 0, wrongCodeEntries >= limit {
            wrongCodeEntries = 0
            lockedOut = true
            context.startTimer(Self.lockoutTimer, after: .seconds(Int64(context.unsigned(Attribute.userCodeTemporaryDisableTime) ?? 0)))
            context.recordEvent(Event.doorLockAlarm, priority: .critical, fields: [field(0, Self.wrongCodeEntryLimitAlarm)])
        }
        raiseError(operation, .remote, .invalidCredential, user: nil, context)
        return .failure(.failure)
    }

    func timerFired(_ name: String, context: ClusterContext) {
        switch name {
        case Self.relockTimer:
            if context.unsigned(Attribute.lockState) != LockState.locked.rawValue { set(.locked, source: .auto, user: nil, context) }
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
        let remote = source == .remote
        var fields = [
            field(0, (state == .locked ? Operation.lock : Operation.unlock).rawValue), field(1, source.rawValue),
            nullable(2, user.map(UInt64.init)),
            nullable(3, remote ? context.session.map { UInt64($0.subject.fabricIndex) } : nil),
            nullable(4, remote ? context.session.map { $0.subject.subject } : nil),
        ]
        if features.contains(Feature.user) { fields.append(credentials(5, pinIndex)) }
        context.recordEvent(Event.lockOperation, priority: .critical, fields: fields)
    }

    private func raiseError(
        _ operation: Operation, _ source: Source, _ error: OperationError, user: UInt16?, pinIndex: UInt16? = nil, _ context: ClusterContext
    ) {
        var fields = [
            field(0, operation.rawValue), field(1, source.rawValue), field(2, error.rawValue), nullable(3, user.map(UInt64.init)),
            nullable(4, source == .remote ? context.session.map { UInt64($0.subject.fabricIndex) } : nil),
            nullable(5, source == .remote ? context.session.map { $0.subject.subject } : nil),
        ]
        if features.contains(Feature.user) { fields.append(credentials(6, pinIndex)) }
        context.recordEvent(Event.lockOperationError, priority: .critical, fields: fields)
    }

    // MARK: Users (USR)

    private func userIndexInRange(_ index: UInt64?, _ context: ClusterContext) -> UInt16? {
        guard let index, index >= 1, index <= context.unsigned(Attribute.numberOfTotalUsersSupported) ?? 0 else { return nil }
        return UInt16(index)
    }

    /// SetUser (5.2.7.x): Add to a free index or Modify an occupied one; null fields take
    /// their defaults on Add and keep their values on Modify.
    private func setUser(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        let fabric = callerFabric(context)
        guard let operation = fields.unsigned(0).flatMap(DataOperation.init(rawValue:)), operation != .clear,
            let index = userIndexInRange(fields.unsigned(1), context)
        else { return .failure(.invalidCommand) }
        let name = fields.field(2)?.stringValue
        if let name, name.utf8.count > 10 { return .failure(.invalidCommand) }
        var user: User
        switch operation {
        case .add:
            guard stored.users[index] == nil else { return .status(InteractionStatus(.failure, clusterStatus: 3)) }  // OCCUPIED
            user = User(
                name: name ?? "", uniqueID: nil, status: UInt8(Self.enabled), type: 0, credentialRule: 0, creatorFabric: fabric,
                lastModifiedFabric: fabric)
        default:
            guard let existing = stored.users[index] else { return .failure(.invalidCommand) }
            if existing.creatorFabric != fabric, name != nil || !fields.isNull(3) && fields.field(3) != nil {
                return .failure(.invalidCommand)
            }
            user = existing
            user.lastModifiedFabric = fabric
            if let name { user.name = name }
        }
        if let uniqueID = fields.unsigned(3) { user.uniqueID = UInt32(truncatingIfNeeded: uniqueID) }
        if let status = fields.unsigned(4) {
            guard status == Self.enabled || status == Self.disabled else { return .failure(.invalidCommand) }
            user.status = UInt8(status)
        }
        if let type = fields.unsigned(5) {
            guard let known = UInt8(exactly: type).flatMap(Clusters.DoorLock.UserTypeEnum.init(rawValue:)) else {
                return .failure(.invalidCommand)
            }
            user.type = known.rawValue
        }
        if let rule = fields.unsigned(6) {
            guard let known = UInt8(exactly: rule).flatMap(Clusters.DoorLock.CredentialRuleEnum.init(rawValue:)) else {
                return .failure(.invalidCommand)
            }
            user.credentialRule = known.rawValue
        }
        stored.users[index] = user
        save(context)
        userChanged(.userIndex, operation, user: index, dataIndex: index, context)
        return .success
    }

    private func getUser(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        guard let index = userIndexInRange(fields.unsigned(0), context) else { return .failure(.invalidCommand) }
        let next = stored.users.keys.filter { $0 > index }.min()
        guard let user = stored.users[index] else {
            return .response(
                Command.getUserResponse,
                .structure([
                    field(0, UInt64(index)), .context(1, .null), .context(2, .null), .context(3, .null), .context(4, .null),
                    .context(5, .null), .context(6, .null), .context(7, .null), .context(8, .null), nullable(9, next.map(UInt64.init)),
                ]))
        }
        let pins = stored.pins.filter { $0.value.user == index }.keys.sorted()
        return .response(
            Command.getUserResponse,
            .structure([
                field(0, UInt64(index)), .context(1, .utf8(user.name)), nullable(2, user.uniqueID.map(UInt64.init)),
                field(3, UInt64(user.status)), field(4, UInt64(user.type)), field(5, UInt64(user.credentialRule)),
                .context(6, .array(pins.map { TLVElement(credentialStruct($0)) })), field(7, UInt64(user.creatorFabric)),
                field(8, UInt64(user.lastModifiedFabric)), nullable(9, next.map(UInt64.init)),
            ]))
    }

    /// ClearUser: the user with its credentials; 0xFFFE every user.
    private func clearUser(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        guard let requested = fields.unsigned(0) else { return .failure(.invalidCommand) }
        if requested == Self.all {
            stored = Stored()
            save(context)
            userChanged(.userIndex, .clear, user: UInt16(Self.all), dataIndex: UInt16(Self.all), context)
            return .success
        }
        guard let index = userIndexInRange(requested, context) else { return .failure(.invalidCommand) }
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
    private func setCredential(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        // UserStatus [4] is OccupiedEnabled or OccupiedDisabled, UserType [5] one of UserTypeEnum's
        // ten values (5.2.6), or null; anything else is INVALID_COMMAND (5.2.10.40).
        if !fields.isNull(4), let status = fields.unsigned(4), status != Self.enabled, status != Self.disabled {
            return .failure(.invalidCommand)
        }
        if !fields.isNull(5), let type = fields.unsigned(5), type > Self.lastUserType { return .failure(.invalidCommand) }
        let fabric = callerFabric(context)
        let capacity = UInt16(clamping: context.unsigned(Attribute.numberOfPINUsersSupported) ?? 0)
        func answer(_ status: CredentialStatus, user: UInt16? = nil, next: UInt16?) -> InvokeResult {
            .response(
                Command.setCredentialResponse,
                .structure([field(0, status.rawValue), nullable(1, user.map(UInt64.init)), nullable(2, next.map(UInt64.init))]))
        }
        guard let operation = fields.unsigned(0).flatMap(DataOperation.init(rawValue:)), operation != .clear,
            let credential = fields.field(1), credential[context: 0]?.unsignedValue == Self.pinCredential,
            let rawIndex = credential[context: 1]?.unsignedValue, let code = fields.field(2)?.bytesValue
        else { return answer(.invalidField, next: nil) }
        let next = rawIndex < UInt64(capacity) ? (UInt16(rawIndex + 1)...capacity).first { stored.pins[$0] == nil } : nil
        guard rawIndex >= 1, rawIndex <= UInt64(capacity) else { return answer(.invalidField, next: next) }
        let index = UInt16(rawIndex)
        let length = UInt64(code.count)
        guard length >= context.unsigned(Attribute.minPINCodeLength) ?? 0, length <= context.unsigned(Attribute.maxPINCodeLength) ?? 255
        else { return answer(.invalidField, next: next) }
        if stored.pins.contains(where: { $0.value.matches(code) }) { return answer(.duplicate, next: next) }
        var owner = fields.unsigned(3).flatMap { userIndexInRange($0, context) }
        var createdUser: UInt16?
        if fields.field(3) != nil, !fields.isNull(3), owner == nil { return answer(.invalidField, next: next) }
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
                let status = fields.unsigned(4).map(UInt8.init(truncatingIfNeeded:)) ?? UInt8(Self.enabled)
                stored.users[free] = User(
                    name: "", uniqueID: nil, status: status, type: fields.unsigned(5).map(UInt8.init(truncatingIfNeeded:)) ?? 0,
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

    private func getCredentialStatus(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        guard let credential = fields.field(0), credential[context: 0]?.unsignedValue == Self.pinCredential,
            let rawIndex = credential[context: 1]?.unsignedValue
        else { return .failure(.invalidCommand) }
        let index = UInt16(clamping: rawIndex)
        let pin = stored.pins[index]
        let next = stored.pins.keys.filter { $0 > index }.min()
        return .response(
            Command.getCredentialStatusResponse,
            .structure([
                .context(0, .bool(pin != nil)), nullable(1, pin.map { UInt64($0.user) }),
                nullable(2, pin.map { UInt64($0.creatorFabric) }), nullable(3, pin.map { UInt64($0.lastModifiedFabric) }),
                nullable(4, next.map(UInt64.init)),
            ]))
    }

    /// ClearCredential: one PIN (a user left without credentials goes too), 0xFFFE or null every one.
    private func clearCredential(_ fields: CommandFields, _ context: ClusterContext) -> InvokeResult {
        let credential = fields.field(0)
        let type = credential?[context: 0]?.unsignedValue
        let rawIndex = credential?[context: 1]?.unsignedValue
        if credential == nil || fields.isNull(0) || rawIndex == Self.all {
            guard type == nil || type == Self.pinCredential else { return .failure(.invalidCommand) }
            stored.pins = [:]
            save(context)
            userChanged(.pin, .clear, user: nil, dataIndex: UInt16(Self.all), context)
            return .success
        }
        guard type == Self.pinCredential, let rawIndex else { return .failure(.invalidCommand) }
        let index = UInt16(clamping: rawIndex)
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
        context.recordEvent(
            Event.lockUserChange, priority: .info,
            fields: [
                field(0, type.rawValue), field(1, operation.rawValue), field(2, Source.remote.rawValue), nullable(3, user.map(UInt64.init)),
                nullable(4, context.session.map { UInt64($0.subject.fabricIndex) }),
                nullable(5, context.session.map { $0.subject.subject }),
                field(6, UInt64(dataIndex)),
            ])
    }

    private func callerFabric(_ context: ClusterContext) -> UInt8 { UInt8(truncatingIfNeeded: context.session?.subject.fabricIndex ?? 0) }

    private func storeName(_ context: ClusterContext) -> String { "door-lock-\(context.endpoint)" }

    private func save(_ context: ClusterContext) {
        do { try context.stateStore?.save(stored, storeName(context)) } catch {
            context.logger.warning("door lock users: cannot save: \(error)")
        }
    }

    private func credentialStruct(_ index: UInt16) -> TLVValue {
        .structure([field(0, Self.pinCredential), field(1, UInt64(index))])
    }

    /// The events' Credentials field: the PIN used, or null.
    private func credentials(_ tag: UInt8, _ pinIndex: UInt16?) -> TLVElement {
        .context(tag, pinIndex.map { .array([TLVElement(credentialStruct($0))]) } ?? .null)
    }

    private func field(_ tag: UInt8, _ value: UInt64) -> TLVElement { .context(tag, .unsigned(value)) }
    private func nullable(_ tag: UInt8, _ value: UInt64?) -> TLVElement { .context(tag, value.map { .unsigned($0) } ?? .null) }
}
