import Testing

@testable import matter_sim

/// `matter-sim home --announce-rate N`: a large fleet's nodes go to their Avahi daemon in waves,
/// N a second in the process's order, instead of 32 slots 120 ms apart (issue #43: 2,500 services
/// handed to a daemon at once kept it busy for minutes and its D-Bus calls timed out).
@Suite("home --announce-rate")
struct AnnounceRateTests {
    @Test func nodesGoOutNASecondInTheProcesssOrder() {
        #expect(HomeCommand.advertisementWait(position: 0, rate: 50) == .zero)
        #expect(HomeCommand.advertisementWait(position: 1, rate: 50) == .milliseconds(20))
        #expect(HomeCommand.advertisementWait(position: 2_499, rate: 50) == .milliseconds(49_980))
        #expect(HomeCommand.advertisementWait(position: 3, rate: 0.5) == .seconds(6))
    }

    @Test(arguments: [["--announce-rate", "0"], ["--announce-rate", "-3"], ["--announce-rate", "200000"],
                      ["--announce-rate", "10", "--process-per-device"]])
    func aRateOutOfRangeOrWithProcessPerDeviceIsRefused(arguments: [String]) {
        #expect(throws: (any Error).self) { try HomeCommand.parse(["home.yaml"] + arguments) }
    }

    @Test func aRateInRangeIsTaken() throws {
        #expect(try HomeCommand.parse(["home.yaml", "--announce-rate", "75"]).announceRate == 75)
    }
}
