import CMalloc
import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import Synchronization

/// What the page is told, as JSON messages with a `type`: the whole home when it connects,
/// then each change as it happens (attribute values from the store, traffic, fabrics,
/// sessions, subscriptions and routes), and the fleet's figures once a second.
public final class DashboardFeed: Sendable {
    let homeName: String
    let devices: [DashboardDevice]
    private let shown: [String: [AttributePath: (cluster: String, attribute: String)]]
    private let messages = EventBroadcaster<String>()
    /// The last second's figures as JSON, for `GET /api/figures` (a soak test's sampler).
    private let latestFigures = Mutex<String?>(nil)
    /// The traffic lines a new page gets per device.
    static let logBacklog = 40
    /// The home's `/metrics`.
    public let metrics: HomeMetrics

    public init(homeName: String, devices: [DashboardDevice]) {
        self.homeName = homeName
        self.devices = devices
        var shown: [String: [AttributePath: (String, String)]] = [:]
        for device in devices {
            shown[device.serialNumber] = ShownAttributes.paths(of: device.server.node.composition, model: device.server.node.model)
        }
        self.shown = shown
        metrics = HomeMetrics(devices: devices)
    }

    func device(_ serialNumber: String) -> DashboardDevice? { devices.first { $0.serialNumber == serialNumber } }

    /// The fleet's figures of the last second; nil before the first second passed.
    func figuresJSON() -> String? { latestFigures.withLock { $0 } }

    /// Messages from now on, for one page.
    func subscribe() -> AsyncStream<String> { messages.subscribe(bufferLimit: 1024) }

    // MARK: - Messages

    struct HomeMessage: Encodable {
        var type = "home"
        var home: String
        var devices: [DeviceSnapshot]
    }

    struct DeviceSnapshot: Encodable {
        var serial: String
        var name: String
        var structure: String
        var room: String?
        var deviceTypes: [String]
        var manualCode: String
        var qrPayload: String
        var port: Int
        var acts: [String]
        /// "endpoint/Cluster.Attribute" → value.
        var state: [String: JSONValue]
        var node: NodeMessage
        var log: [NodeTrafficEntry]
    }

    struct NodeMessage: Encodable {
        var type = "node"
        var serial: String
        var route: DashboardRoute
        var fabrics: [Fabric]
        var sessions: [Session]
        var subscriptions: [Subscription]
    }

    struct Fabric: Encodable {
        var index: Int
        var fabricID: String
        var nodeID: String
        var vendorID: Int
        var label: String
    }

    struct Session: Encodable {
        var kind: String
        var peer: String
        var fabricIndex: Int
        var peerNodeID: String
    }

    struct Subscription: Encodable {
        var id: UInt32
        var peer: String
        var paths: Int
        var minInterval: Int
        var maxInterval: Int
    }

    struct AttributeMessage: Encodable {
        var type = "attribute"
        var serial: String
        var key: String
        var value: JSONValue
    }

    struct LogMessage: Encodable {
        var type = "log"
        var serial: String
        var entry: NodeTrafficEntry
    }

    struct FiguresMessage: Encodable {
        var type = "figures"
        var nodes: Int
        var commissioned: Int
        var sessions: Int
        var subscriptions: Int
        var messagesPerSecond: Double
        var lanDown: Int
        var poweredOff: Int
        /// Bytes the process's allocator has handed out and not had back (glibc mallinfo2:
        /// chunks in use plus mmapped blocks): what a leak grows, unlike the resident size,
        /// which keeps pages the allocator holds on to after a burst.
        var heapInUse: Int = 0
        /// Traffic entries the nodes keep, and the most they keep (`NodeTrafficLog.kept`
        /// each): the heap grows until these are full, by design.
        var trafficEntries: Int = 0
        var trafficCapacity: Int = 0
        /// The nodes' own service time per kind of request (`invoke`, `read`, ...), datagram
        /// in to response out, over all nodes since they started.
        var serviceTimes: [String: ServiceTimeFigures] = [:]
    }

    static func json(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    /// The whole home now: the first message a page gets.
    public func homeMessage() async -> String {
        var snapshots: [DeviceSnapshot] = []
        for device in devices {
            var state: [String: JSONValue] = [:]
            for (path, names) in shown[device.serialNumber] ?? [:] {
                if case .success(let data) = await device.server.node.read(path) {
                    state[Self.key(path, names)] = JSONValue(data.value)
                }
            }
            let composition = device.server.node.composition
            snapshots.append(
                DeviceSnapshot(
                    serial: device.serialNumber, name: device.name, structure: device.structure, room: device.room,
                    deviceTypes: device.deviceTypes, manualCode: device.manualCode, qrPayload: device.qrPayload,
                    port: device.server.port, acts: ShownAttributes.acts(of: composition, model: device.server.node.model),
                    state: state, node: await nodeMessage(device),
                    log: Array(device.server.traffic.recent.suffix(Self.logBacklog))))
        }
        return Self.json(HomeMessage(home: homeName, devices: snapshots))
    }

    static func key(_ path: AttributePath, _ names: (cluster: String, attribute: String)) -> String {
        "\(path.endpoint)/\(names.cluster).\(names.attribute)"
    }

    func nodeMessage(_ device: DashboardDevice) async -> NodeMessage {
        let server = device.server
        let fabrics = await server.node.fabrics.map {
            Fabric(
                index: Int($0.index), fabricID: Self.hex($0.fabricID), nodeID: Self.hex($0.nodeID), vendorID: Int($0.adminVendorID),
                label: $0.label)
        }
        let sessions = await server.exchangeManager.allSessions().filter { $0.isSecure && $0.kind != .group }.map {
            Session(
                kind: $0.kind == .pase ? "PASE" : "CASE", peer: TrafficWording.peer($0.peerAddress), fabricIndex: Int($0.fabricIndex),
                peerNodeID: Self.hex($0.peerNodeID))
        }
        let subscriptions = await server.interactionServer.activeSubscriptions().map {
            Subscription(
                id: $0.subscriptionID, peer: "fabric \($0.subject.fabricIndex) node \(Self.hex($0.subject.subject))",
                paths: $0.attributePaths.count, minInterval: Int($0.minInterval), maxInterval: Int($0.maxInterval))
        }
        return NodeMessage(
            serial: device.serialNumber, route: device.route(), fabrics: fabrics, sessions: sessions, subscriptions: subscriptions)
    }

    static func hex(_ value: some BinaryInteger) -> String { "0x" + String(value, radix: 16, uppercase: true) }

    /// Tells every page a node's fabrics, sessions, subscriptions and routes now.
    public func pushNode(_ serialNumber: String) async {
        guard let device = device(serialNumber) else { return }
        messages.publish(Self.json(await nodeMessage(device)))
    }

    // MARK: - Following the nodes

    /// Follows every node until cancelled.
    public func run() async {
        await withTaskGroup(of: Void.self) { group in
            for device in devices {
                let shown = shown[device.serialNumber] ?? [:]
                group.addTask { [messages] in
                    for await change in device.server.node.changes {
                        guard let names = shown[change.path] else { continue }
                        messages.publish(
                            Self.json(
                                AttributeMessage(
                                    serial: device.serialNumber, key: Self.key(change.path, names), value: JSONValue(change.value))))
                    }
                }
                group.addTask { [messages] in
                    for await entry in device.server.traffic.updates() {
                        messages.publish(Self.json(LogMessage(serial: device.serialNumber, entry: entry)))
                    }
                }
                group.addTask {
                    for await _ in device.server.commissioningChanges() { await self.pushNode(device.serialNumber) }
                }
                group.addTask {
                    for await _ in device.server.interactionServer.subscriptionChanges() { await self.pushNode(device.serialNumber) }
                }
            }
            group.addTask { await self.tick() }
        }
    }

    /// Once a second: the fleet's figures, and each node's routes (a relay link that
    /// connects on its own changes no attribute).
    private func tick() async {
        var lastMessages: UInt64?
        // real time: benchmark: messages per wall-clock second, for a person to read.
        let clock = ContinuousClock()
        var last = clock.now
        while !Task.isCancelled {
            // real time: benchmark: the figures' one-second pace.
            try? await Task.sleep(for: .seconds(1))
            var total: UInt64 = 0
            var served: [String: ServiceTimeHistogram] = [:]
            var figures = FiguresMessage(
                nodes: devices.count, commissioned: 0, sessions: 0, subscriptions: 0, messagesPerSecond: 0, lanDown: 0, poweredOff: 0)
            for device in devices {
                let metrics = await device.server.exchangeManager.metrics()
                total += metrics.datagramsReceived + metrics.datagramsSent
                for (kind, histogram) in await device.server.exchangeManager.serviceTimes() {
                    served[kind, default: ServiceTimeHistogram()].merge(histogram)
                }
                let node = await nodeMessage(device)
                figures.commissioned += node.fabrics.isEmpty ? 0 : 1
                figures.sessions += node.sessions.count
                figures.subscriptions += node.subscriptions.count
                figures.lanDown += node.route.lan ? 0 : 1
                figures.poweredOff += node.route.power ? 0 : 1
                figures.trafficEntries += device.server.traffic.count
                figures.trafficCapacity += NodeTrafficLog.kept
                messages.publish(Self.json(node))
            }
            let now = clock.now
            if let lastMessages {
                let seconds = Double((now - last).components.seconds) + Double((now - last).components.attoseconds) / 1e18
                figures.messagesPerSecond = seconds > 0 ? (Double(total - min(total, lastMessages)) / seconds * 10).rounded() / 10 : 0
            }
            lastMessages = total
            last = now
            #if canImport(Glibc)  // glibc's statistics; elsewhere the figure stays 0 (unknown)
            let heap = mallinfo2()
            figures.heapInUse = Int(heap.uordblks + heap.hblkhd)
            #endif
            figures.serviceTimes = served.mapValues(ServiceTimeFigures.init)
            let json = Self.json(figures)
            latestFigures.withLock { $0 = json }
            messages.publish(json)
        }
    }
}

/// One kind of request's service time, as `/api/figures` and `matter-sim`'s USR1 report give it;
/// percentiles are quarter-octave bucket edges (at most 25 % high).
public struct ServiceTimeFigures: Codable, Equatable, Sendable {
    public var count: UInt64
    public var p50Us: Double
    public var p99Us: Double
    public var maxUs: Double

    public init(_ histogram: ServiceTimeHistogram) {
        func us(_ d: Duration?) -> Double { (Double(ServiceTimeHistogram.nanoseconds(d ?? .zero)) / 100).rounded() / 10 }
        count = histogram.count
        p50Us = us(histogram.percentile(0.5))
        p99Us = us(histogram.percentile(0.99))
        maxUs = us(histogram.maximum)
    }
}
