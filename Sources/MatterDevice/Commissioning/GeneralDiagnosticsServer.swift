import MatterModel
import MatterTLV

/// General Diagnostics cluster (Core spec 11.12): the network interface, how often the
/// node has booted and for how long it has been up.
final class GeneralDiagnosticsServer: GeneralDiagnosticsHandler {
    static let clusterID = Clusters.GeneralDiagnostics.id

    typealias Attribute = Clusters.GeneralDiagnostics.Attribute
    typealias Command = Clusters.GeneralDiagnostics.Command
    typealias Commands = Clusters.GeneralDiagnostics.Commands

    /// Time Synchronization (Core 11.17), the one source of UTC time a TimeSnapshot may name.
    static let timeSynchronization = Clusters.TimeSynchronization.id

    /// InterfaceTypeEnum (11.12.4.4).
    static let ethernetInterfaceType: UInt8 = 2

    private let configuration: CommissioningConfiguration

    init(configuration: CommissioningConfiguration) {
        self.configuration = configuration
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.networkInterfaces: .arrayOf([networkInterface])
        case Attribute.rebootCount: .uint(0)
        case Attribute.upTime: .uint(0)
        // Only a node given a test event trigger key (`matter-sim run --test-event-key`) has them.
        case Attribute.testEventTriggersEnabled: .bool(configuration.testEventTriggerKey != nil)
        default: nil
        }
    }

    /// NetworkInterface struct (11.12.5.1); off-premise reachability is unknown (null).
    private var networkInterface: TLVValue {
        let interface = configuration.networkInterface
        return .contextStructure([
            (0, .utf8(String(interface.name.prefix(32)))),
            (1, .bool(true)),
            (2, .null),
            (3, .null),
            (4, .bytes(interface.hardwareAddress)),
            (5, .arrayOf(interface.ipv4Addresses.prefix(4).map { .bytes($0) })),
            (6, .arrayOf(interface.ipv6Addresses.prefix(8).map { .bytes($0) })),
            (7, .uint(Self.ethernetInterfaceType)),
        ])
    }

    /// Every start is a boot: RebootCount counts them (restored from the state directory).
    func startUp(_ context: ClusterContext) {
        let count = context.unsigned(Attribute.rebootCount) ?? 0
        context.set(Attribute.rebootCount, .uint(min(count + 1, UInt64(UInt16.max))))
    }

    /// UpTime is computed on read: it would otherwise change every second (quality C).
    func readValue(_ attribute: AttributeID, stored: TLVValue, context: ClusterContext) -> TLVValue {
        guard attribute == Attribute.upTime else { return stored }
        return .uint(upTimeSeconds(context))
    }

    func handles(_ command: CommandID) -> Bool {
        command == Command.testEventTrigger || command == Command.timeSnapshot
    }

    /// 11.12.7.1: an EnableKey other than the node's configured one (none configured, or an
    /// all-zero key, never matches) is CONSTRAINT_ERROR. A trigger the node knows does what a
    /// person at the device would (TestEventTrigger.action); any other, or one for a cluster or
    /// feature the node lacks, is INVALID_COMMAND. One the device takes but that changes nothing
    /// in its present state (a hush at a critical alarm, TC-SMOKECO-2.5 step 54) is SUCCESS.
    func testEventTrigger(_ request: Commands.TestEventTrigger, context: ClusterContext) -> InteractionStatus {
        guard let key = configuration.testEventTriggerKey, key.contains(where: { $0 != 0 }), [UInt8](request.enableKey) == key else {
            return InteractionStatus(.constraintError)
        }
        guard let action = TestEventTrigger.action(request.eventTrigger) else { return InteractionStatus(.invalidCommand) }
        do throws(PhysicalActionError) {
            try context.runtime.act(action)
        } catch {
            return error.inState ? .success : InteractionStatus(.invalidCommand)
        }
        return .success
    }

    /// SystemTimeMs since boot; PosixTimeMs only from a Time Synchronization cluster's UTC
    /// time: a node without one answers null (11.12.7.3; TC-DGGEN-2.4 step 4).
    func timeSnapshot(_ request: Commands.TimeSnapshot, context: ClusterContext) -> CommandReply<Commands.TimeSnapshotResponse> {
        let sinceBoot = max(context.now - context.runtime.startedAt, .zero).totalMilliseconds
        let timeSync = AttributePath(endpoint: 0, cluster: Self.timeSynchronization, attribute: Clusters.Global.Attribute.clusterRevision)
        let posix = context.runtime.store.contains(timeSync) ? configuration.posixTimeMilliseconds() : nil
        return .response(Commands.TimeSnapshotResponse(systemTimeMs: UInt64(clamping: sinceBoot), posixTimeMs: posix))
    }

    private func upTimeSeconds(_ context: ClusterContext) -> UInt64 {
        UInt64(clamping: max(context.now - context.runtime.startedAt, .zero).components.seconds)
    }
}
