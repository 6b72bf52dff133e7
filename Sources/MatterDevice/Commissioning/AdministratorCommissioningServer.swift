import MatterCrypto
import MatterModel
import MatterTLV

/// Administrator Commissioning cluster (Core spec 11.19): an administrator opens a
/// window for another commissioner, with a passcode verifier of its own (enhanced) or
/// the device's (basic, feature BC).
final class AdministratorCommissioningServer: AdministratorCommissioningHandler {
    static let clusterID = Clusters.AdministratorCommissioning.id

    typealias Attribute = Clusters.AdministratorCommissioning.Attribute
    typealias Command = Clusters.AdministratorCommissioning.Command
    typealias Commands = Clusters.AdministratorCommissioning.Commands

    /// StatusCodeEnum (11.19.6.1), sent as cluster-specific statuses.
    enum Status: UInt8 {
        case busy = 2
        case pakeParameterError = 3
        case windowNotOpen = 4
    }

    /// CommissioningTimeout bounds (11.19.8.1): 3 to 15 minutes.
    static let timeoutRange: ClosedRange<UInt16> = 180...900
    static let maxDiscriminator: UInt16 = 0xFFF

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.windowStatus: .uint(0)
        case Attribute.adminFabricIndex, Attribute.adminVendorId: .null
        default: nil
        }
    }

    /// OpenCommissioningWindow answers its fields' range errors itself: an Iterations or Salt
    /// out of range is PAKEParameterError, not CONSTRAINT_ERROR (11.19.8.1; TC-CADMIN-1.5 step 9).
    func answersConstraintErrors(_ command: CommandID) -> Bool { command == Command.openCommissioningWindow }

    func handles(_ command: CommandID) -> Bool {
        [Command.openCommissioningWindow, Command.openBasicCommissioningWindow, Command.revokeCommissioning].contains(command)
    }

    /// OpenCommissioningWindow's fields reach here unchecked against their ranges: a number too
    /// wide for its field is, after the busy check, PAKEParameterError for Iterations and
    /// INVALID_COMMAND otherwise, as the values out of range below are.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard command == Command.openCommissioningWindow else { return .failure(error.status) }
        if let busy = busyStatus(context.commissioning) { return .status(busy) }
        if case .outOfRange = error.problem, error.concerns(field: "Iterations") { return .status(Self.status(.pakeParameterError)) }
        return .failure(.invalidCommand)
    }

    func openCommissioningWindow(_ request: Commands.OpenCommissioningWindow, context: ClusterContext) -> InteractionStatus {
        let coordinator = context.commissioning
        if let busy = busyStatus(coordinator) { return busy }
        guard let verifier = try? Spake2pVerifier(serialized: [UInt8](request.pakePasscodeVerifier)) else {
            return Self.status(.pakeParameterError)
        }
        guard request.discriminator <= Self.maxDiscriminator else { return InteractionStatus(.invalidCommand) }
        let salt = [UInt8](request.salt)
        guard Spake2p.iterationRange.contains(Int(clamping: request.iterations)), Spake2p.saltLengthRange.contains(salt.count) else {
            return Self.status(.pakeParameterError)
        }
        guard Self.timeoutRange.contains(request.commissioningTimeout) else { return InteractionStatus(.invalidCommand) }
        coordinator.openWindow(
            .enhanced(verifier: verifier, discriminator: request.discriminator, iterations: request.iterations, salt: salt),
            timeout: .seconds(Int64(request.commissioningTimeout)), openedBy: opener(context))
        return .success
    }

    func openBasicCommissioningWindow(_ request: Commands.OpenBasicCommissioningWindow, context: ClusterContext) -> InteractionStatus {
        let coordinator = context.commissioning
        if let busy = busyStatus(coordinator) { return busy }
        guard Self.timeoutRange.contains(request.commissioningTimeout) else { return InteractionStatus(.invalidCommand) }
        coordinator.openWindow(.basic, timeout: .seconds(Int64(request.commissioningTimeout)), openedBy: opener(context))
        return .success
    }

    /// 11.19.8.3: an armed fail-safe is expired first, then the window closes.
    func revokeCommissioning(_ request: Commands.RevokeCommissioning, context: ClusterContext) -> InteractionStatus {
        let coordinator = context.commissioning
        coordinator.expireFailSafe()
        guard coordinator.window != nil else { return Self.status(.windowNotOpen) }
        coordinator.closeWindow()
        return .success
    }

    /// The administrator's fabric, none over PASE.
    private func opener(_ context: ClusterContext) -> FabricIndex? {
        context.session.flatMap { $0.fabricIndex == 0 ? nil : $0.fabricIndex }
    }

    /// A window is already open, or a commissioning is in progress under the fail-safe.
    private func busyStatus(_ coordinator: CommissioningCoordinator) -> InteractionStatus? {
        coordinator.window != nil || coordinator.failSafe != nil ? InteractionStatus(.failure, clusterStatus: Status.busy.rawValue) : nil
    }

    private static func status(_ status: Status) -> InteractionStatus {
        InteractionStatus(.failure, clusterStatus: status.rawValue)
    }
}
