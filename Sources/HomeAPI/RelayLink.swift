import Logging
import MatterProtocol
import RelayProtocol

/// What a home needs of its link to a relay or a hub (the relay's controller protocol):
/// exchanges with one device by its relay ID, the exchanges devices open towards the
/// controller, and who is online. HomeAPI reaches the relay only through this protocol
/// (docs/ARCHITECTURE.md's layer rule); RelayClients' WebSocket client is one, given to a
/// home as `HomeConfiguration.relayLinks` (module HomeRelayLink: `HomeRelayLinks.webSocket`).
public protocol RelayControllerLink: AnyObject, Sendable {
    /// Runs the link (connecting and reconnecting) until cancelled; a link that cannot connect
    /// keeps trying, so there is nothing to throw.
    func run() async
    /// Who gets the exchanges devices open (subscription reports); nil answers them itself.
    func setIncomingInteractions(_ handler: (any IncomingInteractionHandler)?)
    /// The channel to one device, for an `InteractionClient`; opening an exchange waits for the
    /// connection at most `connectionWait` (nil: the link's own operation timeout).
    func interactionChannel(to deviceID: String, connectionWait: Duration?) -> any InteractionChannel
    /// Presence changes from now on (a device coming online or going offline).
    func presenceUpdates() -> AsyncStream<RelayPresence>
}

/// How a home wants one of its relay links made.
public struct RelayLinkSettings: Sendable {
    /// Where it goes and the home's token there.
    public var endpoint: RelayEndpoint
    /// "relay" or "hub": names the route in logs.
    public var route: String
    /// How long opening an exchange waits for the connection.
    public var operationTimeout: Duration
    /// Longest pause between reconnection attempts.
    public var maximumReconnectDelay: Duration
    /// The home's clock, for the reconnection backoff.
    public var clock: any MatterClock
    public var logger: Logger
}

/// Makes a home's relay and hub links (`HomeConfiguration.relayLinks`).
public typealias RelayLinkMaker = @Sendable (RelayLinkSettings) -> any RelayControllerLink
