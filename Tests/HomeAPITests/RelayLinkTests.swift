import Foundation
import HomeAPI
import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol
import TestDevices
import TestWaiting
import Testing

/// HomeAPI reaches the relay and the hub only through `RelayControllerLink` (the layer rule of
/// docs/ARCHITECTURE.md): a home runs whatever links `relayLinks` makes, and refuses a relay it
/// was given no way to reach.
@Suite struct RelayLinkTests {
    /// A link that only records what the home asks of it.
    final class RecordingLink: RelayControllerLink, Sendable {
        let settings: RelayLinkSettings
        let runs = NIOLockedValueBox(0)
        let handlerSet = NIOLockedValueBox(false)
        /// Yields once `run` was called.
        let started: AsyncStream<Void>
        private let startedSink: AsyncStream<Void>.Continuation

        init(_ settings: RelayLinkSettings) {
            self.settings = settings
            (started, startedSink) = AsyncStream.makeStream(of: Void.self)
        }

        func run() async {
            runs.withLockedValue { $0 += 1 }
            startedSink.yield()
            // real time: external: a stand-in for the link's connection loop, which runs until cancelled.
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(20)) }
        }

        func setIncomingInteractions(_ handler: (any IncomingInteractionHandler)?) {
            handlerSet.withLockedValue { $0 = handler != nil }
        }

        func interactionChannel(to deviceID: String, connectionWait: Duration?) -> any InteractionChannel {
            fatalError("no device in this test")
        }

        func presenceUpdates() -> AsyncStream<RelayPresence> { AsyncStream { $0.finish() } }
    }

    @Test func theHomeRunsTheLinksItIsGiven() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let made = NIOLockedValueBox<[RecordingLink]>([])
        var c = testConfiguration()
        c.relay = RelayEndpoint(url: "ws://127.0.0.1:9", homeToken: "relay-token")
        c.hub = RelayEndpoint(url: "ws://127.0.0.1:10", homeToken: "hub-token")
        c.relayLinks = { settings in
            let link = RecordingLink(settings)
            made.withLockedValue { $0.append(link) }
            return link
        }
        let home = try await Home.open(at: dir.appendingPathComponent("home.sqlite"), configuration: c)
        let links = made.withLockedValue { $0 }
        #expect(links.map(\.settings.route).sorted() == ["hub", "relay"])
        #expect(links.first { $0.settings.route == "relay" }?.settings.endpoint.homeToken == "relay-token")
        #expect(links.allSatisfy { $0.handlerSet.withLockedValue { $0 } })
        let running = await until(links.map(\.started)) { links.allSatisfy { $0.runs.withLockedValue { $0 } == 1 } }
        #expect(running)
        await home.close()
    }

    @Test func aRelayWithoutLinksIsRefused() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        var c = testConfiguration()
        c.relayLinks = nil
        c.relay = RelayEndpoint(url: "ws://127.0.0.1:9", homeToken: "relay-token")
        await #expect(
            throws: HomeError.invalidArgument(
                "a relay or hub is configured without relayLinks to reach it (HomeRelayLink's HomeRelayLinks.webSocket)")
        ) {
            _ = try await Home.open(at: dir.appendingPathComponent("home.sqlite"), configuration: c)
        }
    }
}
