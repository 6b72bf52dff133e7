import Foundation
@testable import HomeAPI
import MatterController
import MatterModel
import TestDevices
import Testing

/// What a closed home lets go of. A snapshot's devices hold their traits, which hold the
/// engine that holds the snapshot: a closed home that kept one was never freed (a soak of
/// 200 devices, reopening every 15 s, held twelve homes and their reports after 4 minutes).
@Suite("Closing a home")
struct HomeCloseTests {
    @Test("a report a route hands over after close() is not published, so the closed home keeps no devices")
    func aLateReportAfterCloseIsNotKept() async throws {
        let rig = try await Rig.make()
        let light = try await TestDevice.start(Fixture.dimmableLight(), deviceTypeID: 0x0101)
        _ = try await rig.add(light, name: "Lamp")
        let engine = rig.home.engine
        #expect(engine.snapshot.devices.count == 1)
        let node = try #require(await engine.graph.devices.values.first?.nodeID)
        await rig.close()
        #expect(engine.snapshot.devices.isEmpty)
        // A subscription's last buffered report, handled after close (its task was cancelled
        // but the stream still hands over what it holds).
        let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))
        await engine.apply([AttributeReport(path: onOff, value: .bool(true))], node: node, kind: .direct)
        #expect(engine.snapshot.devices.isEmpty)
        await light.stop()
    }
}
