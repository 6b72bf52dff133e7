import Logging

extension RelayDeviceClient {
    /// Registers a device under `deviceID` in the home `homeToken` belongs to and returns
    /// the credential the relay issued (a new one if the device was registered before).
    /// A device given only its home's token does this once and keeps the credential.
    ///
    /// The relay's registration endpoint is per home, so this connects as one of the
    /// home's controllers just long enough to learn the home's ID from the hello.
    /// Throws `.unauthorized` for a token the relay refuses, `.notConnected` (or the
    /// connection's own error) when the relay cannot be reached within `timeout`.
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
            do {
                return try await controller.registerDevice(deviceID, label: label)
            } catch {
                // A refused token shows in the connection state; say that rather than "timed out".
                if case .disconnected(let reason?) = controller.state { throw reason }
                throw error
            }
        }
    }
}
