import MatterModel
import MatterTLV

/// The modes of a Mode Base derived cluster (Application Cluster spec 1.10): (mode, label, tags).
struct RvcModeOption: Sendable {
    let mode: UInt8
    let label: String
    let tags: [UInt16]
}

/// ChangeToModeResponse's common status codes (1.10.7.2.1.1); a derived cluster adds its own.
enum ModeChangeStatus {
    static let success: UInt8 = 0
    static let unsupportedMode: UInt8 = 1
    static let genericFailure: UInt8 = 2
    static let invalidInMode: UInt8 = 3
}

/// What both RVC mode servers share: SupportedModes from their options, CurrentMode starting
/// at the first, an unknown NewMode answered UnsupportedMode.
protocol RvcModeServing: StandardClusterServer {
    static var options: [RvcModeOption] { get }
}

extension RvcModeServing {
    static var supportedModesAttribute: AttributeID { Clusters.RvcRunMode.Attribute.supportedModes }
    static var currentModeAttribute: AttributeID { Clusters.RvcRunMode.Attribute.currentMode }

    /// SupportedModes as ModeOptionStructs (the same shape in both clusters).
    static var supportedModes: TLVValue {
        options.map { option in
            Clusters.RvcRunMode.ModeOptionStruct(
                label: option.label, mode: option.mode, modeTags: option.tags.map { .init(value: $0) })
        }.tlv
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Self.supportedModesAttribute: Self.supportedModes
        case Self.currentModeAttribute: .uint(UInt64(Self.options[0].mode))
        default: nil
        }
    }

    func handles(_ command: CommandID) -> Bool { command == Clusters.RvcRunMode.Command.changeToMode }

    static func isSupported(_ mode: UInt8) -> Bool { options.contains { $0.mode == mode } }
}

/// RVC Run Mode (Application Cluster spec 7.2): Idle, Cleaning or Mapping (a run that maps the
/// home without cleaning). A change to Cleaning or Mapping starts a run (RVC Operational State
/// Running), refused with the vacuum's error (Stuck, a full dust bin…) or BatteryLow; a change to
/// Idle while running sends it home. Without DirectModeChange a change between two non-Idle
/// modes is InvalidInMode (7.2.7.1).
final class RvcRunModeServer: RvcRunModeHandler, RvcModeServing {
    typealias Tag = Clusters.RvcRunMode.ModeTag
    static let idle: UInt8 = 0
    static let cleaning: UInt8 = 1
    static let mapping: UInt8 = 2
    static let options = [
        RvcModeOption(mode: idle, label: "Idle", tags: [Tag.idle.rawValue]),
        RvcModeOption(mode: cleaning, label: "Cleaning", tags: [Tag.cleaning.rawValue]),
        RvcModeOption(mode: mapping, label: "Mapping", tags: [Tag.mapping.rawValue]),
    ]

    func changeToMode(
        _ request: Clusters.RvcRunMode.Commands.ChangeToMode, context: ClusterContext
    ) -> CommandReply<Clusters.RvcRunMode.Commands.ChangeToModeResponse> {
        .response(.init(status: change(to: request.newMode, context)))
    }

    /// Carries out a change of run mode (a command or the vacuum's own button) and gives its status.
    func change(to mode: UInt8, _ context: ClusterContext) -> UInt8 {
        guard Self.isSupported(mode) else { return ModeChangeStatus.unsupportedMode }
        let current = context.unsigned(Self.currentModeAttribute).map { UInt8(clamping: $0) } ?? Self.idle
        guard mode != current else { return ModeChangeStatus.success }
        guard let operational = context.peer(RvcOperationalStateServer.self) else { return ModeChangeStatus.genericFailure }
        if mode == Self.idle {
            operational.server.goHome(operational.context)
            context.set(Self.currentModeAttribute, .uint(UInt64(mode)))
            return ModeChangeStatus.success
        }
        guard current == Self.idle else { return ModeChangeStatus.invalidInMode }
        if let refusal = operational.server.startRun(operational.context, mapping: mode == Self.mapping) { return refusal }
        context.set(Self.currentModeAttribute, .uint(UInt64(mode)))
        return ModeChangeStatus.success
    }
}

/// RVC Clean Mode (Application Cluster spec 7.3): how it cleans. Without DirectModeChange a change
/// while a run is under way (Run Mode not Idle) is refused with InvalidInMode and a StatusText
/// (cluster revision 2 and on, kept by 3; revision 1's CleaningInProgress is gone); Deep clean
/// makes the run take longer.
final class RvcCleanModeServer: RvcCleanModeHandler, RvcModeServing {
    typealias Tag = Clusters.RvcCleanMode.ModeTag
    static let vacuum: UInt8 = 0
    static let deepClean: UInt8 = 1
    static let quiet: UInt8 = 2
    static let options = [
        RvcModeOption(mode: vacuum, label: "Vacuum", tags: [Tag.vacuum.rawValue]),
        RvcModeOption(mode: deepClean, label: "Deep clean", tags: [Tag.deepClean.rawValue, Tag.vacuum.rawValue, Tag.max.rawValue]),
        RvcModeOption(mode: quiet, label: "Quiet", tags: [Tag.quiet.rawValue, Tag.vacuum.rawValue]),
    ]

    func changeToMode(
        _ request: Clusters.RvcCleanMode.Commands.ChangeToMode, context: ClusterContext
    ) -> CommandReply<Clusters.RvcCleanMode.Commands.ChangeToModeResponse> {
        guard Self.isSupported(request.newMode) else { return .response(.init(status: ModeChangeStatus.unsupportedMode)) }
        if let run = context.peer(RvcRunModeServer.self), run.context.unsigned(Self.currentModeAttribute) != UInt64(RvcRunModeServer.idle) {
            return .response(.init(status: ModeChangeStatus.invalidInMode, statusText: "a run is under way (RVC Run Mode is not Idle)"))
        }
        context.set(Self.currentModeAttribute, .uint(UInt64(request.newMode)))
        return .response(.init(status: ModeChangeStatus.success))
    }
}
