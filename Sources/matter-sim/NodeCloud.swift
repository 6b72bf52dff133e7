// A simulated device's outbound connection to the cloud relay: a RelayDeviceClient under
// the device's serial number (the relay device ID, contract for issue #6 point 1), serving
// the whole node (cloud-only clusters included) with the NodeServer's cloud interaction
// server. A device given only its home's token registers itself first and keeps the
// credential in its state directory. An unreachable relay never stops the device: it
// retries with backoff and says so in the log.
import DeviceProfile
import Foundation
import Logging
import MatterDevice
import MatterModel
import MatterProtocol
import RelayClients
import Synchronization

/// Where the relay is and how the device proves itself, after the command line's flags.
struct CloudEndpoint: Sendable, Hashable {
    var relay: String
    var credential: String?
    var homeToken: String?

    /// The profile's settings under the command line's; nil (with the reason) when no
    /// relay or no way to authenticate is given.
    static func resolve(
        _ profile: CloudSettings, relay: String?, credential: String?, homeToken: String?
    )
        -> (endpoint: CloudEndpoint?, problem: String?)
    {
        let url = relay ?? profile.relay
        let credential = credential ?? profile.credential
        let homeToken = homeToken ?? profile.homeToken
        guard let url else {
            return (nil, credential != nil || homeToken != nil ? "a relay credential is given but no relay (cloud.relay or --relay)" : nil)
        }
        guard credential != nil || homeToken != nil else {
            return (
                nil,
                "relay \(url) is named but neither a credential nor a home token (cloud.credential / cloud.homeToken, or --relay-credential / --relay-home-token)"
            )
        }
        return (CloudEndpoint(relay: url, credential: credential, homeToken: homeToken), nil)
    }
}

/// The credential a device registered for itself, kept next to its fabrics.
struct StoredRelayCredential: Codable, Equatable {
    var relay: String
    var deviceID: String
    var credential: String

    static let fileName = "relay-credential.json"
}

final class CloudLink: Sendable {
    let endpoint: CloudEndpoint
    /// The relay device ID: the node's serial number.
    let deviceID: String
    let label: String
    let credentialFile: URL
    let settings: RelayClientSettings
    private let handler: InteractionServer
    private let subject: @Sendable () async -> SubjectDescriptor?
    private let logger: Logger
    private let state = Mutex(State())
    /// Yields when the connection may be wanted again (cloud-up, power on); read by `run`.
    private let wantedChanges: AsyncStream<Void>
    private let wantedSignal: AsyncStream<Void>.Continuation
    private let statusChanged = EventBroadcaster<Void>()

    private struct State {
        /// `cloud-down` pulled the connection.
        var cableConnected = true
        var powered = true
        var client: RelayDeviceClient?
        var phase = Phase.starting

        var online: Bool { cableConnected && powered }
    }

    enum Phase: Sendable, Equatable {
        case starting
        case registering(lastError: String?)
        case client
        case stopped(String)
    }

    init(
        endpoint: CloudEndpoint, deviceID: String, label: String, stateDirectory: URL, server: NodeServer,
        settings: RelayClientSettings = RelayClientSettings(), logger: Logger
    ) {
        self.endpoint = endpoint
        self.deviceID = deviceID
        self.label = label
        self.credentialFile = stateDirectory.appendingPathComponent(StoredRelayCredential.fileName)
        self.settings = settings
        self.handler = server.cloudInteractionServer
        self.subject = { await server.cloudSubject() }
        self.logger = logger
        (wantedChanges, wantedSignal) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    // MARK: Faults

    /// `cloud-down` (false) and `cloud-up` (true): the relay connection drops and stays down.
    func setConnected(_ connected: Bool) {
        let (client, online) = changeState { s in
            s.cableConnected = connected
            return (s.client, s.online)
        }
        apply(online, to: client)
    }

    /// A power cut takes the connection down with the rest of the node.
    func setPowered(_ powered: Bool) {
        let (client, online) = changeState { s in
            s.powered = powered
            return (s.client, s.online)
        }
        apply(online, to: client)
    }

    private func apply(_ online: Bool, to client: RelayDeviceClient?) {
        if online { wantedSignal.yield() }
        guard let client else { return }
        if online { client.goOnline() } else { client.goOffline() }
    }

    var isOnlineWanted: Bool { state.withLock { $0.online } }

    /// One line for `matter-sim fault` and the logs.
    var status: String {
        let (s, clientState) = state.withLock { ($0, $0.client?.state) }
        if !s.cableConnected { return "cloud down" }
        if !s.powered { return "cloud off (no power)" }
        switch s.phase {
        case .starting: return "cloud starting"
        case .registering(let error): return "cloud registering" + (error.map { " (\($0))" } ?? "")
        case .stopped(let why): return "cloud stopped (\(why))"
        case .client:
            switch clientState {
            case .connected?: return "cloud connected"
            case .connecting?: return "cloud connecting"
            case .disconnected(let error?)?: return "cloud unreachable (\(error))"
            default: return "cloud connecting"
            }
        }
    }

    /// The relay accepted the device's connection.
    var isConnected: Bool { state.withLock { $0.client?.state == .connected } }

    /// Yields after `status` or `isConnected` may have changed (coalesced while unread), for
    /// a caller that waits on the link instead of polling it.
    func statusChanges() -> AsyncStream<Void> { statusChanged.subscribe(bufferLimit: 1) }

    private func changeState<T>(_ change: (inout State) -> T) -> T {
        defer { statusChanged.publish(()) }
        return state.withLock { change(&$0) }
    }

    // MARK: Running

    /// Keeps the device connected until the task is cancelled.
    func run() async {
        var attempt = 0
        while !Task.isCancelled {
            guard await waitUntilWanted() else { return }
            let credential: String
            let registered: Bool
            if let given = endpoint.credential {
                (credential, registered) = (given, false)
            } else if let stored = storedCredential() {
                (credential, registered) = (stored, true)
            } else if let token = endpoint.homeToken {
                changeState { $0.phase = .registering(lastError: nil) }
                do {
                    credential = try await register(homeToken: token)
                    registered = true
                    attempt = 0
                } catch is CancellationError {
                    return
                } catch {
                    changeState { $0.phase = .registering(lastError: "\(error)") }
                    let wait = settings.retryDelay(attempt: attempt)
                    let message = "cannot register with the cloud relay \(endpoint.relay) (\(error)); retrying in \(wait.secondsText)"
                    if attempt == 0 { logger.warning("\(message)") } else { logger.debug("\(message)") }
                    attempt += 1
                    do { try await settings.clock.sleep(until: settings.clock.now + wait) } catch { return }
                    continue
                }
            } else {
                // CloudEndpoint.resolve never lets this through.
                changeState { $0.phase = .stopped("no credential") }
                return
            }
            let refused = await connect(credential: credential)
            guard refused, registered, endpoint.homeToken != nil else {
                if refused {
                    changeState { $0.phase = .stopped("the relay refused the device credential") }
                    logger.error(
                        "the cloud relay \(endpoint.relay) refused the device credential of \(deviceID); give a valid cloud.credential (or a homeToken to register again)"
                    )
                    return
                }
                continue
            }
            // The relay no longer knows the credential we registered (a fresh relay database):
            // register again with the home token.
            logger.warning("the cloud relay refused the stored credential of \(deviceID); registering again")
            try? FileManager.default.removeItem(at: credentialFile)
        }
    }

    /// Waits while the link is held down (cloud-down, power off). False when cancelled.
    private func waitUntilWanted() async -> Bool {
        if isOnlineWanted { return !Task.isCancelled }
        for await _ in wantedChanges where isOnlineWanted { return !Task.isCancelled }
        return false
    }

    private func register(homeToken: String) async throws -> String {
        let issued = try await RelayDeviceClient.register(
            relayURL: endpoint.relay, homeToken: homeToken, deviceID: deviceID, label: label, settings: settings,
            timeout: .seconds(10), logger: logger)
        let stored = StoredRelayCredential(relay: endpoint.relay, deviceID: deviceID, credential: issued.credential)
        do {
            try FileManager.default.createDirectory(at: credentialFile.deletingLastPathComponent(), withIntermediateDirectories: true)
            try JSONEncoder().encode(stored).write(to: credentialFile, options: .atomic)
            // A secret: readable by its owner only.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: credentialFile.path)
        } catch {
            logger.warning("cannot keep the relay credential in \(credentialFile.path) (\(error)); the device registers again next start")
        }
        logger.notice("registered with the cloud relay \(endpoint.relay) as \(deviceID) in home \(issued.homeID)")
        return issued.credential
    }

    /// The credential registered earlier with this relay under this device ID.
    private func storedCredential() -> String? {
        guard let data = try? Data(contentsOf: credentialFile),
            let stored = try? JSONDecoder().decode(StoredRelayCredential.self, from: data),
            stored.relay == endpoint.relay, stored.deviceID == deviceID
        else { return nil }
        return stored.credential
    }

    /// Runs a device client until cancelled; true when the relay refused the credential
    /// (the client is stopped then, since retrying cannot help).
    private func connect(credential: String) async -> Bool {
        var configuration = RelayDeviceClient.Configuration()
        configuration.settings = settings
        configuration.subject = subject
        let client = RelayDeviceClient(
            relayURL: endpoint.relay, credential: credential, handler: handler,
            configuration: configuration, logger: logger)
        let online = changeState { s in
            s.client = client
            s.phase = .client
            return s.online
        }
        apply(online, to: client)
        defer { changeState { $0.client = nil } }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await client.run()
                return false
            }
            group.addTask { await self.watch(client) }
            let refused = await group.next() ?? false
            group.cancelAll()
            return refused
        }
    }

    /// Logs the connection's ups and downs; returns true when the relay refuses the credential.
    private func watch(_ client: RelayDeviceClient) async -> Bool {
        var last = client.state
        var warnedUnreachable = false
        for await now in client.stateUpdates() {
            if Task.isCancelled { return false }
            statusChanged.publish(())
            if now != last {
                switch now {
                case .connected:
                    logger.notice("connected to the cloud relay \(endpoint.relay) as \(deviceID)")
                    warnedUnreachable = false
                case .disconnected(.unauthorized?), .disconnected(.forbidden?):
                    return true
                case .disconnected(let error):
                    if last == .connected {
                        logger.warning(
                            "lost the cloud relay \(endpoint.relay) (\(error.map { "\($0)" } ?? "closed")); reconnecting with backoff")
                    } else if !warnedUnreachable {
                        logger.warning(
                            "cloud relay \(endpoint.relay) unreachable (\(error.map { "\($0)" } ?? "closed")); retrying with backoff")
                        warnedUnreachable = true
                    }
                case .offline:
                    logger.notice("cloud relay connection of \(deviceID) taken down")
                case .connecting:
                    break
                }
                last = now
            }
        }
        return false
    }
}

extension RelayClientSettings {
    /// The wait before registration attempt `attempt` (0-based): the client's own
    /// backoff, at least half a second.
    func retryDelay(attempt: Int) -> Duration {
        let base = max(minimumBackoff, .milliseconds(500)) * (1 << min(attempt, 16))
        let capped = base < maximumBackoff ? base : maximumBackoff
        return capped * Double.random(in: 0.5...1.0)
    }
}

extension Duration {
    /// "2.5 s".
    var secondsText: String {
        let (seconds, attoseconds) = components
        return String(format: "%.1f s", Double(seconds) + Double(attoseconds) / 1e18)
    }
}
