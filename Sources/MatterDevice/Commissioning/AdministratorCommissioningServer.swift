import MatterCrypto
import MatterModel
import MatterTLV

/// Administrator Commissioning cluster (Core spec 11.19): an administrator opens a
/// window for another commissioner, with a passcode verifier of its own (enhanced) or
/// the device's (basic, feature BC).
final class AdministratorCommissioningServer: StandardClusterServer {
    static let clusterID = Clusters.AdministratorCommissioning.id

    typealias Attribute = Clusters.AdministratorCommissioning.Attribute
    typealias Command = Clusters.AdministratorCommissioning.Command

    /// StatusCodeEnum (11.19.6.1), sent as cluster-specific statuses.
    enum Status: UInt8 {
        case busy = 2
        case pakeParameterError = 3
        case windowNotOpen = 4
    }

    /// CommissioningTimeout bounds (11.19.8.1): 3 to 15 minutes.
    static let timeoutRange: ClosedRange<UInt64> = 180...900
    static let maxDiscriminator: UInt64 = 0xFFF

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

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        let coordinator = context.commissioning
        let opener = context.session.flatMap { $0.fabricIndex == 0 ? nil : $0.fabricIndex }
        switch command {
        case Command.openCommissioningWindow:
            if let busy = busyStatus(coordinator) { return .status(busy) }
            guard let timeout = fields.unsigned(0), let verifierBytes = fields.field(1)?.bytesValue,
                let discriminator = fields.unsigned(2), let iterations = fields.unsigned(3),
                let salt = fields.field(4)?.bytesValue
            else { return .failure(.invalidCommand) }
            guard let verifier = try? Spake2pVerifier(serialized: verifierBytes) else { return Self.status(.pakeParameterError) }
            guard discriminator <= Self.maxDiscriminator else { return .failure(.invalidCommand) }
            guard Spake2p.iterationRange.contains(Int(clamping: iterations)),
                Spake2p.saltLengthRange.contains(salt.count)
            else { return Self.status(.pakeParameterError) }
            guard Self.timeoutRange.contains(timeout) else { return .failure(.invalidCommand) }
            coordinator.openWindow(
                .enhanced(verifier: verifier, discriminator: UInt16(discriminator), iterations: UInt32(clamping: iterations), salt: salt),
                timeout: .seconds(Int64(timeout)), openedBy: opener)
            return .success
        case Command.openBasicCommissioningWindow:
            if let busy = busyStatus(coordinator) { return .status(busy) }
            guard let timeout = fields.unsigned(0) else { return .failure(.invalidCommand) }
            guard Self.timeoutRange.contains(timeout) else { return .failure(.invalidCommand) }
            coordinator.openWindow(.basic, timeout: .seconds(Int64(timeout)), openedBy: opener)
            return .success
        case Command.revokeCommissioning:
            // 11.19.8.3: an armed fail-safe is expired first, then the window closes.
            coordinator.expireFailSafe()
            guard coordinator.window != nil else { return Self.status(.windowNotOpen) }
            coordinator.closeWindow()
            return .success
        default:
            return .failure(.unsupportedCommand)
        }
    }

    /// A window is already open, or a commissioning is in progress under the fail-safe.
    private func busyStatus(_ coordinator: CommissioningCoordinator) -> InteractionStatus? {
        coordinator.window != nil || coordinator.failSafe != nil ? InteractionStatus(.failure, clusterStatus: Status.busy.rawValue) : nil
    }

    private static func status(_ status: Status) -> InvokeResult {
        .status(InteractionStatus(.failure, clusterStatus: status.rawValue))
    }
}
