@testable import CloudRelay
import HummingbirdWSClient
import MatterProtocol
import NIOCore
@testable import RelayProtocol

// What the frame- and traffic-limit suites share: raw controller connections that write
// frames themselves, and frames for a device no home has.

/// A controller frame for a device no home has, with `payload` bytes: the relay answers each
/// one it lets through with a failure (unknown device) and routes nothing.
func nobodyFrame(_ n: Int, payload: Int = 0) -> [UInt8] {
    RelayFrame.message(
        RelayMessage(
            deviceID: "nobody", exchangeID: UInt32(n), fromInitiator: true, opcode: 8, payload: [UInt8](repeating: 0x5A, count: payload))
    ).encoded()
}

/// A controller WebSocket of the home whose token is `token`, written to by `body` itself;
/// the close the relay sent, if any.
@discardableResult
func withRawController(
    _ relay: RelayHarness, token: String,
    _ body: @escaping @Sendable (WebSocketInboundStream, WebSocketOutboundWriter) async throws -> Void
) async throws -> WebSocketCloseFrame? {
    try await WebSocketClient.connect(
        url: relay.baseURL + "/v1/controller",
        configuration: .init(additionalHeaders: [.authorization: "Bearer \(token)"]), logger: testLogger
    ) { inbound, outbound, _ in try await body(inbound, outbound) }
}

/// Writes `perSecond` frames for nobody in each of five seconds of `clock`; after each of the
/// first four, `counted(second)` waits for the relay to have dealt with them (false ends the
/// flood) and the clock moves a second on.
func floodFiveSeconds(
    _ outbound: WebSocketOutboundWriter, perSecond: Int, clock: ManualClock, counted: (Int) async -> Bool
) async throws {
    for second in 0..<5 {
        for n in 0..<perSecond {
            try await outbound.write(.binary(ByteBuffer(bytes: nobodyFrame(second * perSecond + n))))
        }
        guard second < 4, await counted(second) else { return }
        await clock.advance(by: .seconds(1))
    }
}

/// A relay configuration on `clock` (a test's, standing still until the test moves it) with
/// the limits `limits` sets.
func limitedConfiguration(on clock: ManualClock, _ limits: (inout RelayServerConfiguration) -> Void) -> RelayServerConfiguration {
    var configuration = RelayServerConfiguration()
    configuration.clock = clock
    limits(&configuration)
    return configuration
}
