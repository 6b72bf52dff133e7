import HomeAPI
import MatterProtocol
import RelayClients

// The relay links of a home over RelayClients' WebSocket client: the one module that knows both
// HomeAPI and RelayClients, so HomeAPI itself reaches the relay through `RelayControllerLink`.

extension RelayControllerClient: RelayControllerLink {
    public func interactionChannel(to deviceID: String, connectionWait: Duration?) -> any InteractionChannel {
        channel(to: deviceID, connectionWait: connectionWait)
    }
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
        return RelayControllerClient(
            relayURL: settings.endpoint.url, homeToken: settings.endpoint.homeToken, configuration: c, logger: logger)
    }
}
