import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// What a person does at a sensor or a switch (`MatterNode.act`): Boolean State, Occupancy
// Sensing, Temperature Measurement and Switch (Application Cluster spec 1.7, 2.7, 2.3, 1.13),
// with the events each raises, on a manual clock.
@Suite struct SensorsAndSwitchTests {
    let clock = ManualClock()
    static let booleanState = ClusterID(0x0045)
    static let switchCluster = ClusterID(0x003B)
    static let occupancy = ClusterID(0x0406)
    static let temperature = ClusterID(0x0402)

    func node(
        _ deviceTypeID: UInt32, _ cluster: ClusterID, features: Set<String> = [], attributes: [AttributeID: TLVValue] = [:]
    )
        throws -> MatterNode
    {
        try singleClusterNode(deviceTypeID, cluster, features: features, attributes: attributes, clock: clock)
    }

    /// The events of `cluster` since `from`, as (event ID, fields by context tag).
    func events(_ node: MatterNode, _ cluster: ClusterID, from: UInt64) async -> [(UInt32, [UInt8: TLVValue])] {
        await node.events(from: from).filter { $0.cluster == cluster }.map { event in
            var fields: [UInt8: TLVValue] = [:]
            if case .structure(let members) = event.data {
                for member in members { if case .context(let tag) = member.tag { fields[tag] = member.value } }
            }
            return (event.event.rawValue, fields)
        }
    }

    @Test func openingAndClosingAContactRaisesStateChangeOncePerChange() async throws {
        let node = try node(0x0015, Self.booleanState, attributes: [AttributeID(0): .bool(true)])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        #expect(try await node.act(.contact(false)) == 1)
        #expect(await node.bool(1, Self.booleanState, 0) == false)
        try await node.act(.contact(false))  // already open: no change, no event
        try await node.act(.contact(true))
        #expect(await node.bool(1, Self.booleanState, 0) == true)
        let raised = await events(node, Self.booleanState, from: start)
        #expect(raised.map(\.0) == [0, 0])
        #expect(raised.map { $0.1[0] } == [.bool(false), .bool(true)])
        let numbers = await node.events(from: start).map(\.number)
        #expect(numbers == numbers.sorted() && Set(numbers).count == numbers.count)
    }

    /// TC-SWTCH-2.5 step 5a (Application Cluster 1.13.7.2, 1.13.7.6): each press of a double
    /// press starts with InitialPress; the second adds MultiPressOngoing with the count 2.
    @Test func aDoublePressPlaysOutTheMultiPressEventFlowOnTheClock() async throws {
        let node = try node(0x000F, Self.switchCluster, features: ["MS", "MSR", "MSL", "MSM"])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        try await node.act(.press(.double))
        // The first press is immediate: InitialPress, the switch at position 1.
        #expect(await events(node, Self.switchCluster, from: start).map(\.0) == [0x01])
        #expect(await node.uint(1, Self.switchCluster, 1) == 1)
        // A second press while the first is under way is refused, not queued.
        await #expect(throws: PhysicalActionError.self) { try await node.act(.press(.single)) }
        await clock.advance(by: SwitchServer.pressHold)
        #expect(await node.uint(1, Self.switchCluster, 1) == 0)
        await clock.advance(by: SwitchServer.pressGap + SwitchServer.pressHold)
        #expect(await events(node, Self.switchCluster, from: start).map(\.0) == [0x01, 0x03, 0x01, 0x05, 0x03])
        // MultiPressComplete only once the multi-press window passed without a further press.
        await clock.advance(by: SwitchServer.multiPressWindow - .milliseconds(1))
        #expect(await events(node, Self.switchCluster, from: start).count == 5)
        await clock.advance(by: .milliseconds(1))
        let raised = await events(node, Self.switchCluster, from: start)
        #expect(raised.map(\.0) == [0x01, 0x03, 0x01, 0x05, 0x03, 0x06])
        #expect(raised[3].1 == [0: .unsigned(1), 1: .unsigned(2)])
        #expect(raised[5].1 == [0: .unsigned(1), 1: .unsigned(2)])
        // The switch is free again.
        try await node.act(.press(.single))
    }

    @Test func aLongPressGivesLongPressAndLongReleaseButNoMultiPressComplete() async throws {
        let node = try node(0x000F, Self.switchCluster, features: ["MS", "MSR", "MSL", "MSM"])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        try await node.act(.press(.long))
        await clock.advance(by: SwitchServer.longPressThreshold)
        #expect(await events(node, Self.switchCluster, from: start).map(\.0) == [0x01, 0x02])
        #expect(await node.uint(1, Self.switchCluster, 1) == 1)
        await clock.advance(by: .seconds(5))
        #expect(await events(node, Self.switchCluster, from: start).map(\.0) == [0x01, 0x02, 0x04])
        #expect(await node.uint(1, Self.switchCluster, 1) == 0)
    }

    @Test func aPlainMomentarySwitchCountsOnePressAndRaisesOnlyInitialPress() async throws {
        let node = try node(0x000F, Self.switchCluster, features: ["MS"])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        await #expect(throws: PhysicalActionError.self) { try await node.act(.press(.double)) }
        try await node.act(.press(.single))
        await clock.advance(by: .seconds(2))
        #expect(await events(node, Self.switchCluster, from: start).map(\.0) == [0x01])
        #expect(await node.uint(1, Self.switchCluster, 1) == 0)
    }

    @Test func aLatchingSwitchMovesToItsNextPositionAndRaisesSwitchLatched() async throws {
        let node = try node(0x000F, Self.switchCluster, features: ["LS"], attributes: [AttributeID(0): .unsigned(3)])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        try await node.act(.press(.double))
        try await node.act(.press(.single))
        #expect(await node.uint(1, Self.switchCluster, 1) == 0)
        let raised = await events(node, Self.switchCluster, from: start)
        #expect(raised.map(\.0) == [0, 0, 0])
        #expect(raised.map { $0.1[0] } == [.unsigned(1), .unsigned(2), .unsigned(0)])
    }

    /// Issue #37 item 10: `press 100000000` on a latching switch looped on the node's executor
    /// (and stalled the control socket); presses are bounded by NumberOfPositions, refused
    /// before anything moves.
    @Test func aLatchingSwitchRefusesMorePressesThanItHasPositions() async throws {
        let node = try node(0x000F, Self.switchCluster, features: ["LS"], attributes: [AttributeID(0): .unsigned(3)])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        for count in [3, 100_000_000, Int.max, 0] {
            await #expect(throws: PhysicalActionError.self) { try await node.act(.press(.short(count: count))) }
        }
        #expect(await events(node, Self.switchCluster, from: start).isEmpty)
        #expect(await node.uint(1, Self.switchCluster, 1) == 0)
        try await node.act(.press(.short(count: 2)))
        #expect(await node.uint(1, Self.switchCluster, 1) == 2)
    }

    @Test func occupancyChangesRaiseOccupancyChanged() async throws {
        let node = try node(0x0107, Self.occupancy, features: ["PIR"])
        let start = await node.events().last.map { $0.number + 1 } ?? 0
        #expect(await node.uint(1, Self.occupancy, 1) == 0)  // OccupancySensorType PIR
        try await node.act(.occupancy(true))
        #expect(await node.uint(1, Self.occupancy, 0) == 1)
        try await node.act(.occupancy(false))
        #expect(await node.uint(1, Self.occupancy, 0) == 0)
        #expect(await events(node, Self.occupancy, from: start).map { $0.1[0] } == [.unsigned(1), .unsigned(0)])
    }

    @Test func aTemperatureReadingIsKeptWithinWhatTheSensorMeasures() async throws {
        let node = try node(
            0x0302, Self.temperature,
            attributes: [AttributeID(0): .signed(2000), AttributeID(1): .signed(-1000), AttributeID(2): .signed(4000)])
        try await node.act(.temperature(21.47))
        #expect(await node.value(1, Self.temperature, 0) == .signed(2147))
        await #expect(throws: PhysicalActionError.self) { try await node.act(.temperature(40.01)) }
        await #expect(throws: PhysicalActionError.self) { try await node.act(.temperature(.nan)) }
        #expect(await node.value(1, Self.temperature, 0) == .signed(2147))
    }

    @Test func anActionNoClusterCanCarryOutNamesWhatIsMissing() async throws {
        let node = try node(0x0302, Self.temperature)
        do {
            try await node.act(.contact(true))
            Issue.record("a thermometer opened like a door")
        } catch {
            #expect(error.description.hasPrefix("no endpoint has a cluster that can close"))
        }
        await #expect(throws: PhysicalActionError.self) { try await node.act(.temperature(20), on: 0) }
    }
}
