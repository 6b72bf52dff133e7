import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// Window Covering (Application Cluster spec 5.3): 0 = fully open, 10000 = fully closed.
@Suite struct WindowCoveringTests {
    let clock = ManualClock()
    let configStatus: UInt32 = 0x0007, liftPercentage: UInt32 = 0x0008, operationalStatus: UInt32 = 0x000A
    let targetLift: UInt32 = 0x000B, targetTilt: UInt32 = 0x000C, currentLift: UInt32 = 0x000E
    let currentTilt: UInt32 = 0x000F, mode: UInt32 = 0x0017, currentPositionLift: UInt32 = 0x0003
    let upOrOpen: UInt32 = 0x00, downOrClose: UInt32 = 0x01, stopMotion: UInt32 = 0x02
    let goToLiftValue: UInt32 = 0x04, goToLiftPercentage: UInt32 = 0x05, goToTiltPercentage: UInt32 = 0x08

    /// Lift closing: global bits 0-1 = 2, lift bits 2-3 = 2.
    let liftClosing: UInt64 = 0b1010
    /// Lift opening: global = 1, lift = 1.
    let liftOpening: UInt64 = 0b0101

    @Test func goToLiftPercentageMovesAtTheConfiguredSpeed() async throws {
        // 10 %/s: 50 % takes 5 s.
        let node = try windowCovering(clock: clock)
        let changes = node.changes
        #expect(await node.invoke(1, IDs.windowCovering, goToLiftPercentage, fields((0, u(5000)))) == .success)
        #expect(await node.uint(1, IDs.windowCovering, targetLift) == 5000)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == liftClosing)

        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 1000)
        #expect(await node.uint(1, IDs.windowCovering, liftPercentage) == 10)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == liftClosing)

        await clock.advance(by: .milliseconds(3900))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 4900)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == liftClosing)

        await clock.advance(by: .milliseconds(100))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 5000)
        #expect(await node.uint(1, IDs.windowCovering, liftPercentage) == 50)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == 0)

        let seen = await drain(changes, stopping: node)
        #expect(seen.values(IDs.windowCovering, currentLift) == Array(stride(from: 100, through: 5000, by: 100)))
        #expect(seen.values(IDs.windowCovering, operationalStatus) == [liftClosing, 0])
    }

    @Test func stopMotionStopsMidWay() async throws {
        let node = try windowCovering(clock: clock)
        _ = await node.invoke(1, IDs.windowCovering, downOrClose)
        #expect(await node.uint(1, IDs.windowCovering, targetLift) == 10000)
        await clock.advance(by: .milliseconds(2500))
        #expect(await node.invoke(1, IDs.windowCovering, stopMotion) == .success)
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 2500)
        #expect(await node.uint(1, IDs.windowCovering, targetLift) == 2500)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == 0)
        await clock.advance(by: .seconds(3))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 2500)
    }

    @Test func upOrOpenOpensFromTheStartPosition() async throws {
        let node = try windowCovering(attributes: [AttributeID(currentLift): u(3000)], clock: clock)
        #expect(await node.uint(1, IDs.windowCovering, targetLift) == 3000)
        _ = await node.invoke(1, IDs.windowCovering, upOrOpen)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == liftOpening)
        await clock.advance(by: .seconds(1))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 2000)
        await clock.advance(by: .seconds(2))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 0)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == 0)
    }

    @Test func fullTravelTimeSetsTheSpeed() async throws {
        let node = try windowCovering(behavior: ClusterBehavior(liftSpeed: .fullTravel(.seconds(20))), clock: clock)
        _ = await node.invoke(1, IDs.windowCovering, goToLiftPercentage, fields((0, u(5000))))
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 2500)
        await clock.advance(by: .seconds(5))
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 5000)
    }

    @Test func liftAndTiltMoveIndependently() async throws {
        let node = try windowCovering(
            features: ["LF", "PA_LF", "TL", "PA_TL"],
            behavior: ClusterBehavior(liftSpeed: .percent100thsPerSecond(1000), tiltSpeed: .percent100thsPerSecond(5000)),
            clock: clock)
        _ = await node.invoke(1, IDs.windowCovering, downOrClose)
        // Global follows the lift; tilt bits 4-5 show closing too.
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == 0b10_1010)
        await clock.advance(by: .seconds(2))
        #expect(await node.uint(1, IDs.windowCovering, currentTilt) == 10000)
        #expect(await node.uint(1, IDs.windowCovering, currentLift) == 2000)
        #expect(await node.uint(1, IDs.windowCovering, operationalStatus) == liftClosing)
    }

    @Test func percentagesOutOfRangeAndMissingAxesAreRejected() async throws {
        let node = try windowCovering(clock: clock)
        let tooFar = await node.invoke(1, IDs.windowCovering, goToLiftPercentage, fields((0, u(10001))))
        #expect(tooFar == .status(InteractionStatus(.constraintError)))
        let noTilt = await node.invoke(1, IDs.windowCovering, goToTiltPercentage, fields((0, u(100))))
        #expect(noTilt == .status(InteractionStatus(.unsupportedCommand)))
    }

    @Test func goToLiftValueUsesTheInstalledLimits() async throws {
        let node = try windowCovering(
            features: ["LF", "PA_LF", "ABS"],
            attributes: [AttributeID(0x0010): u(0), AttributeID(0x0011): u(1000)],
            clock: clock)
        #expect(await node.invoke(1, IDs.windowCovering, goToLiftValue, fields((0, u(250)))) == .success)
        #expect(await node.uint(1, IDs.windowCovering, targetLift) == 2500)
        await clock.advance(by: .seconds(3))
        #expect(await node.uint(1, IDs.windowCovering, currentPositionLift) == 250)
        let outside = await node.invoke(1, IDs.windowCovering, goToLiftValue, fields((0, u(2000))))
        #expect(outside == .status(InteractionStatus(.constraintError)))
    }

    @Test func maintenanceModeMakesTheCoveringBusy() async throws {
        let node = try windowCovering(clock: clock)
        #expect(await node.uint(1, IDs.windowCovering, configStatus).map { $0 & 0x01 } == 1)
        #expect(await node.write(1, IDs.windowCovering, mode, u(0x04)) == .success)
        #expect(await node.uint(1, IDs.windowCovering, configStatus).map { $0 & 0x01 } == 0)
        let busy = await node.invoke(1, IDs.windowCovering, downOrClose)
        #expect(busy == .status(InteractionStatus(.busy)))
        #expect(await node.write(1, IDs.windowCovering, mode, u(0x01)) == .success)
        // Operational again; lift movement reported reversed.
        #expect(await node.uint(1, IDs.windowCovering, configStatus).map { $0 & 0x05 } == 0x05)
        #expect(await node.invoke(1, IDs.windowCovering, downOrClose) == .success)
    }
}
