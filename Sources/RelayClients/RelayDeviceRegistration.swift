import Logging
import RelayProtocol

extension RelayDeviceClient {
    /// Registers a device under `deviceID` in the home `homeToken` belongs to and returns
    /// the credential the relay issued (a new one if the device was registered before).
    /// A device given only its home's token does this once and keeps the credential.
    ///
    /// The relay's registration endpoint is per home, so this connects as one of the
    /// home's controllers just long enough to learn the home's ID from the hello.
    /// Makes one connection attempt: throws `.unauthorized` for a token the relay refuses,
    /// the connection's error when the relay cannot be reached, `.timeout` after `timeout`.
    public static func register(
        relayURL: String, homeToken: String, deviceID: String, label: String? = nil,
        settings: RelayClientSettings = RelayClientSettings(), timeout: Duration = .seconds(10),
        logger: Logger = Logger(label: "matter.relay.device")
    ) async throws -> RelayDeviceCredential {
        var configuration = RelayControllerClient.Configuration()
        configuration.settings = settings
        configuration.operationTimeout = timeout
        let controller = RelayControllerClient(relayURL: relayURL, homeToken: homeToken, configuration: configuration, logger: logger)
        return try await withThrowingTaskGroup(of: RelayDeviceCredential?.self) { group in
            group.addTask {
                try? await controller.run()
                return nil
            }
            defer { group.cancelAll() }
            // One connection attempt: a relay that is down or refuses the token fails this
            // call at once (the caller retries on its own schedule), not after `timeout`.
            let clock = configuration.settings.clock
            let deadline = clock.now + timeout
            while true {
                switch controller.state {
                case .connected:
                    return try await controller.registerDevice(deviceID, label: label)
                case .disconnected(let reason):
                    throw reason ?? RelayError.notConnected
                case .offline, .connecting:
                    guard clock.now < deadline else { throw RelayError.timeout("connecting to the relay to register") }
                    try await clock.sleep(until: min(clock.now + .milliseconds(20), deadline))
                }
            }
        }
    }
}
