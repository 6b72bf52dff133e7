import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
import Synchronization
import TestWaiting
import Testing

/// The subscription keeper on a manual clock, over an in-memory publisher: the same code
/// keeps the LAN's, the hub's and the relay's subscriptions.
@Suite struct SubscriptionKeeperTests {
    static let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))

    /// A report sent after the SubscribeResponse is routed on another task and can reach the
    /// keeper before the subscribing task has yielded `.established`. Its events must still
    /// come after `.established`: HomeAPI takes events before it as primed (history, not news)
    /// and dropped a live OccupancyChanged and a second InitialPress that way under load.
    @Test func aLiveEventThatBeatsTheSubscribeResponseComesAfterEstablished() async throws {
        let router = SubscriptionRouter()
        let publisher = FakePublisher(liveReportFirst: router)
        let keeper = SubscriptionKeeper(
            paths: [AttributePathIB(Self.onOff)], maxInterval: 2, maxResubscribeDelay: .seconds(1), clock: ManualClock())
        var events = keeper.events(router: router, client: { InteractionClient(channel: publisher, timeout: .seconds(5)) })
            .makeAsyncIterator()
        #expect(await events.next() == .reports([AttributeReport(path: Self.onOff, value: .bool(true))]))
        #expect(await events.next() == .established(subscriptionID: 1, maxInterval: 2))
        guard case .events(let live)? = await events.next() else {
            Issue.record("no live events after .established")
            return
        }
        #expect(live.map(\.number) == [7])
    }

    @Test func lostAfterSilencePastMaxIntervalThenResubscribedAndEndedByTheCarrier() async throws {
        let clock = ManualClock()
        let publisher = FakePublisher()
        let router = SubscriptionRouter()
        var keeper = SubscriptionKeeper(
            paths: [AttributePathIB(Self.onOff)], maxInterval: 2, maxResubscribeDelay: .seconds(1), clock: clock)
        keeper.livenessMargin = .seconds(1)
        keeper.publisher = "the lamp"
        var events = keeper.events(router: router, client: { InteractionClient(channel: publisher, timeout: .seconds(5)) })
            .makeAsyncIterator()

        // Priming, then established with the publisher's subscription ID.
        #expect(await events.next() == .reports([AttributeReport(path: Self.onOff, value: .bool(true))]))
        #expect(await events.next() == .established(subscriptionID: 1, maxInterval: 2))
        #expect(await until(clock.registrations()) { clock.pendingCount > 0 }, "the liveness timer is armed")

        // A report two seconds in keeps it alive past the first deadline (3 s).
        await clock.advance(by: .seconds(2))
        let replies = RecordingExchange()
        await router.handle(
            exchange: replies, opcode: InteractionOpcode.reportData.rawValue,
            payload: ReportDataMessage(
                subscriptionID: 1,
                attributeReports: [.data(AttributeDataIB(path: AttributePathIB(Self.onOff), data: .bool(false)))]
            ).encoded(), from: publisher.peer)
        #expect(replies.sentOpcodes == [InteractionOpcode.statusResponse.rawValue])
        #expect(await events.next() == .reports([AttributeReport(path: Self.onOff, value: .bool(false))]))
        await clock.advance(by: .milliseconds(2900))  // 4.9 s: 2.9 s of silence, within 2 s + 1 s
        #expect(clock.nextDeadline == .seconds(5), "the liveness deadline moved with the report")
        // Silence past MaxInterval plus the margin (5 s): lost, named after the publisher.
        await clock.advance(by: .milliseconds(100))
        #expect(await events.next() == .lost(.timeout("no report from the lamp within 2 s")))
        // The old ID no longer routes: a late report is answered INVALID_SUBSCRIPTION.
        let late = RecordingExchange()
        await router.handle(
            exchange: late, opcode: InteractionOpcode.reportData.rawValue,
            payload: ReportDataMessage(subscriptionID: 1).encoded(), from: publisher.peer)
        #expect(late.statuses == [.invalidSubscription])

        // After the first pause (250 ms), a new subscription.
        #expect(await until(clock.registrations()) { clock.sleeperCount > 0 }, "the keeper pauses before resubscribing")
        await clock.advance(by: .milliseconds(250))
        #expect(await events.next() == .reports([AttributeReport(path: Self.onOff, value: .bool(true))]))
        #expect(await events.next() == .established(subscriptionID: 2, maxInterval: 2))
        #expect(publisher.subscribeRequests == 2)

        // The carrier says the node is gone (a relay device went offline): lost at once.
        router.peerLost(publisher.peer, reason: "device lamp is offline")
        #expect(await events.next() == .lost(.unreachable("device lamp is offline")))
    }

    @Test func reportsFromAnotherPeerDoNotReachTheSubscription() async throws {
        let router = SubscriptionRouter()
        let publisher = FakePublisher()
        let received = Mutex<[[AttributeReport]]>([])
        let client = InteractionClient(channel: publisher, timeout: .seconds(5))
        let (id, _) = try await client.subscribe(
            [AttributePathIB(Self.onOff)], minInterval: 0, maxInterval: 2, router: router,
            sink: { reports in received.withLock { $0.append(reports) } })
        // Publishers number their own subscriptions: the same ID from another node is not ours.
        let stranger = RecordingExchange()
        await router.handle(
            exchange: stranger, opcode: InteractionOpcode.reportData.rawValue,
            payload: ReportDataMessage(subscriptionID: id).encoded(), from: InteractionPeer(route: "fake", node: "2"))
        #expect(stranger.statuses == [.invalidSubscription])
        #expect(received.withLock { $0.count } == 1, "the priming report only")
    }
}

/// A publisher that answers each SubscribeRequest with one priming report (OnOff true)
/// and a SubscribeResponse, numbering subscriptions from 1.
private final class FakePublisher: InteractionChannel {
    let peer = InteractionPeer(route: "fake", node: "1")
    private let count = Mutex(0)
    /// When set, a live report with event 7 goes through this router after the priming
    /// report's ack and before the SubscribeResponse reaches the subscriber: the router's
    /// task beating the subscribing task, as it can on a busy machine.
    let liveReportFirst: SubscriptionRouter?

    init(liveReportFirst: SubscriptionRouter? = nil) { self.liveReportFirst = liveReportFirst }

    var subscribeRequests: Int { count.withLock { $0 } }

    func openExchange() async throws -> any InteractionExchange {
        SubscribeExchange(publisher: self)
    }

    fileprivate func nextID() -> UInt32 {
        count.withLock { n in
            n += 1
            return UInt32(n)
        }
    }

    private final class SubscribeExchange: InteractionExchange {
        let publisher: FakePublisher
        private let pending = Mutex<[(opcode: UInt8, payload: [UInt8])]>([])
        private let id = Mutex<UInt32>(0)

        init(publisher: FakePublisher) { self.publisher = publisher }

        func send(opcode: UInt8, payload: [UInt8]) async throws {
            switch InteractionOpcode(rawValue: opcode) {
            case .subscribeRequest:
                let id = publisher.nextID()
                self.id.withLock { $0 = id }
                let priming = ReportDataMessage(
                    subscriptionID: id,
                    attributeReports: [
                        .data(AttributeDataIB(path: AttributePathIB(SubscriptionKeeperTests.onOff), data: .bool(true)))
                    ])
                pending.withLock { $0.append((InteractionOpcode.reportData.rawValue, priming.encoded())) }
            case .statusResponse:
                if let router = publisher.liveReportFirst {
                    let event = EventDataIB(
                        path: EventPathIB(endpoint: 1, cluster: ClusterID(0x0045), event: EventID(0)), eventNumber: 7,
                        priority: .info, epochTimestamp: 1_700_000_000_000, data: .structure([]))
                    let live = ReportDataMessage(subscriptionID: id.withLock { $0 }, eventReports: [.data(event)])
                    await router.handle(
                        exchange: RecordingExchange(), opcode: InteractionOpcode.reportData.rawValue, payload: live.encoded(),
                        from: publisher.peer)
                }
                let response = SubscribeResponseMessage(subscriptionID: id.withLock { $0 }, maxInterval: 2)
                pending.withLock { $0.append((InteractionOpcode.subscribeResponse.rawValue, response.encoded())) }
            default:
                break
            }
        }

        func receive(within timeout: Duration) async throws -> (opcode: UInt8, payload: [UInt8]) {
            guard let next = pending.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { throw TransportError.timeout }
            return next
        }

        func close() async {}
    }
}

/// An exchange a publisher opened, recording what the controller answers.
private final class RecordingExchange: InteractionExchange {
    private let sent = Mutex<[(opcode: UInt8, payload: [UInt8])]>([])

    var sentOpcodes: [UInt8] { sent.withLock { $0.map(\.opcode) } }
    var statuses: [StatusCode] {
        sent.withLock { $0.compactMap { try? StatusResponseMessage(payload: $0.payload).status } }
    }

    func send(opcode: UInt8, payload: [UInt8]) async throws {
        sent.withLock { $0.append((opcode, payload)) }
    }

    func receive(within timeout: Duration) async throws -> (opcode: UInt8, payload: [UInt8]) {
        throw TransportError.timeout
    }

    func close() async {}
}
