import HomeAPI
import MatterProtocol
import RelayClients
import RelayProtocol

// The relay links of a home over RelayClients' WebSocket client: the one module that knows both
// HomeAPI and RelayClients, so HomeAPI itself reaches the relay through `RelayControllerLink`.

/// A home's link over one `RelayControllerClient`. A wrapper rather than a conformance: the
/// link's `run()` throws nothing (the client reconnects by itself until cancelled), the client's
/// is a ServiceLifecycle `Service`'s, `async throws`.
final class WebSocketRelayLink: RelayControllerLink {
    let client: RelayControllerClient

    init(_ client: RelayControllerClient) { self.client = client }

    func run() async { try? await client.run() }

    func setIncomingInteractions(_ handler: (any IncomingInteractionHandler)?) { client.setIncomingInteractions(handler) }

    func interactionChannel(to deviceID: String, connectionWait: Duration?) -> any InteractionChannel {
        client.channel(to: deviceID, connectionWait: connectionWait)
    }

    func presenceUpdates() -> AsyncStream<RelayPresence> { client.presenceUpdates() }
}

/// The relay links an app or CLI gives a home (`HomeConfiguration.relayLinks`).
public enum HomeRelayLinks {
    /// A `RelayControllerClient` per link: a reconnecting WebSocket to the relay or hub.
    public static let webSocket: RelayLinkMaker = { settings in
        var c = RelayControllerClient.Configuration()
        c.operationTimeout = settings.operationTimeout
        c.settings.minimumBackoff = .milliseconds(100)
        c.settings.maximumBackoff = settings.maximumReconnectDelay
        c.settings.clock = settings.clock
        var logger = settings.logger
        logger[metadataKey: "route"] = "\(settings.route)"
        return WebSocketRelayLink(
            RelayControllerClient(
                relayURL: settings.endpoint.url, homeToken: settings.endpoint.homeToken, configuration: c, logger: logger))
    }
}
