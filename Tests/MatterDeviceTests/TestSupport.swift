import Foundation
import Logging
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Builders and readers shared by the node tests. Nodes run on a ManualClock, so
// every transition is stepped explicitly and deterministically.

enum IDs {
    static let descriptor = ClusterID(0x001D)
    static let identify = ClusterID(0x0003)
    static let onOff = ClusterID(0x0006)
    static let levelControl = ClusterID(0x0008)
    static let basicInformation = ClusterID(0x0028)
    static let windowCovering = ClusterID(0x0102)

    static let rootNode = DeviceTypeID(0x0016)
    static let dimmableLight = DeviceTypeID(0x0101)
    static let windowCoveringDevice = DeviceTypeID(0x0202)

    static let attributeList = AttributeID(0xFFFB)
    static let acceptedCommandList = AttributeID(0xFFF9)
    static let generatedCommandList = AttributeID(0xFFF8)
    static let featureMap = AttributeID(0xFFFC)
    static let clusterRevision = AttributeID(0xFFFD)
}

/// Test nodes leave out the root node's commissioning clusters; keep their notices out of the output.
let quietLogger: Logger = {
    var logger = Logger(label: "matter.node.test")
    logger.logLevel = .error
    return logger
}()

func makeNode(_ endpoints: [EndpointDescription], clock: any MatterClock) throws(NodeDescriptionError) -> MatterNode {
    try MatterNode(description: NodeDescription(endpoints: endpoints), clock: clock, logger: quietLogger)
}

func deviceType(_ id: DeviceTypeID) -> DeviceTypeInstance {
    DeviceTypeInstance(id: id, revision: MatterModel.standard.deviceType(id)?.revision ?? 1)
}

/// Endpoint 0 with Basic Information (and the Descriptor the node adds itself).
func rootEndpoint(basicInformation: [AttributeID: TLVValue] = [:]) -> EndpointDescription {
    EndpointDescription(
        number: 0,
        deviceTypes: [deviceType(IDs.rootNode)],
        serverClusters: [ClusterInstanceDescription(id: IDs.basicInformation, attributes: basicInformation)]
    )
}

/// A dimmable light on endpoint 1: Identify, On/Off (Lighting), Level Control (OnOff + Lighting).
func dimmableLight(
    on: Bool = true,
    onOffFeatures: Set<String> = ["LT"],
    onOffAttributes: [AttributeID: TLVValue] = [:],
    level: UInt8 = 100,
    levelAttributes: [AttributeID: TLVValue] = [:],
    clock: any MatterClock
) throws -> MatterNode {
    var onOff = onOffAttributes
    onOff[AttributeID(0x0000)] = onOff[AttributeID(0x0000)] ?? .bool(on)
    var levels = levelAttributes
    levels[AttributeID(0x0000)] = levels[AttributeID(0x0000)] ?? .unsigned(UInt64(level))
    let light = EndpointDescription(
        number: 1,
        deviceTypes: [deviceType(IDs.dimmableLight)],
        serverClusters: [
            ClusterInstanceDescription(id: IDs.identify),
            ClusterInstanceDescription(id: IDs.onOff, features: onOffFeatures, attributes: onOff),
            ClusterInstanceDescription(id: IDs.levelControl, features: ["OO", "LT"], attributes: levels),
        ]
    )
    return try makeNode([rootEndpoint(), light], clock: clock)
}

/// A window covering on endpoint 1 with lift (position aware) and the given speed.
func windowCovering(
    features: Set<String> = ["LF", "PA_LF"],
    attributes: [AttributeID: TLVValue] = [:],
    behavior: ClusterBehavior = ClusterBehavior(liftSpeed: .percent100thsPerSecond(1000)),
    clock: ManualClock
) throws -> MatterNode {
    let covering = EndpointDescription(
        number: 1,
        deviceTypes: [deviceType(IDs.windowCoveringDevice)],
        serverClusters: [
            ClusterInstanceDescription(id: IDs.identify),
            ClusterInstanceDescription(id: IDs.windowCovering, features: features, attributes: attributes, behavior: behavior),
        ]
    )
    return try makeNode([rootEndpoint(), covering], clock: clock)
}

/// A node with one application cluster on endpoint 1 (beside Identify).
func singleClusterNode(
    _ deviceTypeID: UInt32, _ cluster: ClusterID, features: Set<String> = [], attributes: [AttributeID: TLVValue] = [:],
    behavior: ClusterBehavior = ClusterBehavior(), clock: ManualClock
) throws -> MatterNode {
    try makeNode(
        [
            rootEndpoint(),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(DeviceTypeID(deviceTypeID))],
                serverClusters: [
                    ClusterInstanceDescription(id: IDs.identify),
                    ClusterInstanceDescription(id: cluster, features: features, attributes: attributes, behavior: behavior),
                ]),
        ], clock: clock)
}

/// Command fields from (context tag, value) pairs.
func fields(_ members: (UInt8, TLVValue)...) -> TLVValue {
    .structure(members.map { TLVElement(tag: .context($0.0), $0.1) })
}

func u(_ value: some BinaryInteger) -> TLVValue { .unsigned(UInt64(value)) }

extension MatterNode {
    func value(_ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32) -> TLVValue? {
        try? read(AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute))).get().value
    }

    func uint(_ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32) -> UInt64? {
        if case .unsigned(let v)? = value(endpoint, cluster, attribute) { return v }
        return nil
    }

    func bool(_ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32) -> Bool? {
        if case .bool(let v)? = value(endpoint, cluster, attribute) { return v }
        return nil
    }

    func invoke(
        _ endpoint: EndpointNumber, _ cluster: ClusterID, _ command: UInt32, _ fields: TLVValue = .structure([])
    ) async -> InvokeResult {
        await invoke(CommandPath(endpoint: endpoint, cluster: cluster, command: CommandID(command)), fields: fields)
    }

    func write(_ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32, _ value: TLVValue) -> InteractionStatus {
        write(AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute)), value: value)
    }
}

/// Stops the node and returns everything the subscription saw.
func drain(_ changes: AsyncStream<AttributeChange>, stopping node: MatterNode) async -> [AttributeChange] {
    await node.stop()
    var all: [AttributeChange] = []
    for await change in changes { all.append(change) }
    return all
}

extension [AttributeChange] {
    /// The unsigned values reported for one attribute, in order.
    func values(_ cluster: ClusterID, _ attribute: UInt32, endpoint: EndpointNumber = 1) -> [UInt64] {
        compactMap { change in
            guard change.path == AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute)),
                case .unsigned(let v) = change.value
            else { return nil }
            return v
        }
    }

    func bools(_ cluster: ClusterID, _ attribute: UInt32, endpoint: EndpointNumber = 1) -> [Bool] {
        compactMap { change in
            guard change.path == AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute)),
                case .bool(let v) = change.value
            else { return nil }
            return v
        }
    }
}

/// The unsigned members of a list value.
func uintList(_ value: TLVValue?) -> [UInt64] {
    guard case .array(let elements)? = value else { return [] }
    return elements.compactMap { if case .unsigned(let v) = $0.value { v } else { nil } }
}

/// A clock whose timers fire `lateness` after their deadline, as a loaded machine's do; time
/// itself is the manual clock's.
struct LateClock: MatterClock {
    let base: ManualClock
    let lateness: Duration
    var now: Duration { base.now }
    var wallClockOrigin: Date { base.wallClockOrigin }
    func sleep(until deadline: Duration) async throws { try await base.sleep(until: deadline + lateness) }
    func schedule(at deadline: Duration, _ action: @escaping @Sendable () async -> Void) -> ClockTimer {
        base.schedule(at: deadline + lateness, action)
    }
}
