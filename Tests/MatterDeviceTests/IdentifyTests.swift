import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Identify (Application Cluster spec 1.2).
@Suite struct IdentifyTests {
    let clock = ManualClock()

    @Test func identifyTimeCountsDownEachSecond() async throws {
        let node = try dimmableLight(clock: clock)
        let changes = node.changes
        #expect(await node.invoke(1, IDs.identify, 0x00, fields((0, u(3)))) == .success)
        #expect(await node.uint(1, IDs.identify, 0) == 3)
        await clock.advance(by: .milliseconds(999))
        #expect(await node.uint(1, IDs.identify, 0) == 3)
        await clock.advance(by: .milliseconds(1))
        #expect(await node.uint(1, IDs.identify, 0) == 2)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, IDs.identify, 0) == 0)
        // Quieter reporting (Q): the start and the end are reported, not each second.
        let seen = await drain(changes, stopping: node)
        #expect(seen.values(IDs.identify, 0) == [3, 0])
    }

    /// TC-I-2.4 (Application Cluster 1.2.5.1, quality Q): IdentifyTime is reported when a client
    /// writes it or an Identify command sets it, and when it changes from or to 0; the
    /// countdown between is not reported.
    @Test func identifyTimeIsReportedOnlyWhenSetOrAtZero() async throws {
        let node = try dimmableLight(clock: clock)
        let changes = node.changes
        #expect(await node.write(1, IDs.identify, 0, u(5)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await node.write(1, IDs.identify, 0, u(10)) == .success)
        await clock.advance(by: .seconds(12))
        #expect(await node.uint(1, IDs.identify, 0) == 0)
        #expect(await node.write(1, IDs.identify, 0, u(5)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await node.invoke(1, IDs.identify, 0x00, fields((0, u(0)))) == .success)
        await clock.advance(by: .seconds(1))
        let seen = await drain(changes, stopping: node)
        #expect(seen.values(IDs.identify, 0) == [5, 10, 0, 5, 0])
    }

    @Test func writingIdentifyTimeStartsAndStopsIdentification() async throws {
        let node = try dimmableLight(clock: clock)
        #expect(await node.write(1, IDs.identify, 0, u(2)) == .success)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.identify, 0) == 1)
        #expect(await node.invoke(1, IDs.identify, 0x00, fields((0, u(0)))) == .success)
        await clock.advance(by: .seconds(2))
        #expect(await node.uint(1, IDs.identify, 0) == 0)
    }

    @Test func triggerEffectChecksTheEffect() async throws {
        let node = try dimmableLight(clock: clock)
        #expect(await node.invoke(1, IDs.identify, 0x40, fields((0, u(0x01)), (1, u(0)))) == .success)
        let unknown = await node.invoke(1, IDs.identify, 0x40, fields((0, u(0x10)), (1, u(0))))
        #expect(unknown == .status(InteractionStatus(.constraintError)))
        // 1.2.6.2.2: a variant the server does not know runs as the default one (TC-I-2.3 step 3a).
        #expect(await node.invoke(1, IDs.identify, 0x40, fields((0, u(0x00)), (1, u(0x42)))) == .success)
    }
}
