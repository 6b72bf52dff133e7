import Foundation
import MatterModel
import MatterProtocol
import MatterTLV
import NIOCore
import Synchronization

/// One line of a node's traffic log: what a peer did with the node, as a person reads it
/// (the dashboard's live log).
public struct NodeTrafficEntry: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// PASE and what a commissioner does on the PASE session.
        case commissioning
        /// CASE handshakes, sessions opened and closed.
        case session
        case read, subscribe, write, invoke
    }

    /// Wall-clock time, for display.
    public var at: Date
    public var kind: Kind
    /// The peer: an address for handshakes, its fabric and node ID on a session.
    public var peer: String
    public var summary: String
}

/// The node's recent traffic (the last `kept` entries) and a stream of new ones.
///
/// A request is kept as it came and put into words when the log is read, or at once while
/// someone follows `updates()`: wording it (decoding it again, naming its paths) on every
/// request cost a task hop and the decoding, for a log most fleet nodes never show.
public final class NodeTrafficLog: InteractionRequestObserver, Sendable {
    public static let kept = 200
    private enum Held {
        case entry(NodeTrafficEntry)
        case request(at: Date, InteractionRequest)
    }
    private let held = Mutex<[Held]>([])
    private let broadcaster = EventBroadcaster<NodeTrafficEntry>()
    /// Names paths in requests' wording; nil: numbers.
    private let model: MatterModel?

    public init(model: MatterModel? = nil) {
        self.model = model
    }

    /// Oldest first.
    public var recent: [NodeTrafficEntry] {
        held.withLock { held in
            held.indices.map { i in
                switch held[i] {
                case .entry(let entry): return entry
                case .request(let at, let request):
                    let entry = worded(request, at: at)
                    held[i] = .entry(entry)
                    return entry
                }
            }
        }
    }

    /// How many entries are kept now (at most `kept`).
    public var count: Int { held.withLock { $0.count } }

    public func requestSeen(_ request: InteractionRequest) {
        let at = Date()
        if broadcaster.hasSubscribers {
            add(worded(request, at: at))
        } else {
            keep(.request(at: at, request))
        }
    }

    private func worded(_ request: InteractionRequest, at: Date) -> NodeTrafficEntry {
        let (kind, summary) = TrafficWording.describe(request, model: model)
        return NodeTrafficEntry(at: at, kind: kind, peer: TrafficWording.peer(request.subject), summary: summary)
    }

    private func add(_ entry: NodeTrafficEntry) {
        keep(.entry(entry))
        broadcaster.publish(entry)
    }

    private func keep(_ item: Held) {
        held.withLock { held in
            held.append(item)
            if held.count > Self.kept { held.removeFirst(held.count - Self.kept) }
        }
    }

    /// New entries from now on (a slow reader loses the oldest).
    public func updates() -> AsyncStream<NodeTrafficEntry> { broadcaster.subscribe() }

    func record(_ kind: NodeTrafficEntry.Kind, peer: String, _ summary: String) {
        add(NodeTrafficEntry(at: Date(), kind: kind, peer: peer, summary: summary))
    }

    func finish() { broadcaster.finish() }
}

/// How requests and sessions read in the log, with the model's names for paths.
public enum TrafficWording {
    /// "127.0.0.1:5540", "[fe80::1]:5540".
    public static func peer(_ address: SocketAddress) -> String {
        guard let ip = address.ipAddress, let port = address.port else { return "\(address)" }
        return ip.contains(":") ? "[\(ip)]:\(port)" : "\(ip):\(port)"
    }

    static func peer(_ subject: SubjectDescriptor) -> String {
        switch subject.authMode {
        case .pase: "PASE commissioner"
        case .case: "fabric \(subject.fabricIndex) node 0x\(String(subject.subject, radix: 16, uppercase: true))"
        case .group: "group \(subject.subject) on fabric \(subject.fabricIndex)"
        }
    }

    static func session(_ info: SessionInfo) -> String {
        info.kind == .pase
            ? "PASE session from \(peer(info.peerAddress))"
            : "CASE session, fabric \(info.fabricIndex) node 0x\(String(info.peerNodeID, radix: 16, uppercase: true)), from \(peer(info.peerAddress))"
    }

    /// A request as one line: "read 1/OnOff.OnOff, 0/BasicInformation.*", "invoke 1/OnOff.Toggle".
    static func describe(_ request: InteractionRequest, model: MatterModel?) -> (NodeTrafficEntry.Kind, String) {
        let timed = request.timed ? "timed " : ""
        func list(_ items: [String]) -> String {
            items.isEmpty ? "nothing" : items.prefix(4).joined(separator: ", ") + (items.count > 4 ? " and \(items.count - 4) more" : "")
        }
        func path(_ endpoint: EndpointNumber?, _ cluster: ClusterID?, _ member: (ClusterDefinition) -> String?) -> String {
            let definition = cluster.flatMap { model?.cluster($0) }
            let clusterName = cluster.map { definition?.name ?? "0x\(String($0.rawValue, radix: 16))" } ?? "*"
            let memberName = definition.flatMap(member) ?? "*"
            return "\(endpoint.map { "\($0)" } ?? "*")/\(clusterName).\(memberName)"
        }
        func attributes(_ paths: [AttributePathIB]) -> [String] {
            paths.map { p in
                path(p.endpoint, p.cluster) { c in p.attribute.map { c.attribute($0)?.name ?? "0x\(String($0.rawValue, radix: 16))" } }
            }
        }
        func events(_ paths: [EventPathIB]) -> [String] {
            paths.map { p in
                path(p.endpoint, p.cluster) { c in p.event.map { c.event($0)?.name ?? "0x\(String($0.rawValue, radix: 16))" } } + " (event)"
            }
        }
        let kind: NodeTrafficEntry.Kind
        let text: String
        do {
            switch request.opcode {
            case .readRequest:
                let m = try ReadRequestMessage(payload: request.payload)
                (kind, text) = (.read, "read " + list(attributes(m.attributeRequests) + events(m.eventRequests)))
            case .subscribeRequest:
                let m = try SubscribeRequestMessage(payload: request.payload)
                (kind, text) = (
                    .subscribe,
                    "subscribe \(list(attributes(m.attributeRequests) + events(m.eventRequests))) every \(m.minIntervalFloor)–\(m.maxIntervalCeiling) s"
                )
            case .writeRequest:
                let m = try WriteRequestMessage(payload: request.payload)
                let writes = m.writeRequests.map { w in
                    path(w.path.endpoint, w.path.cluster) { c in w.path.attribute.map { c.attribute($0)?.name ?? "\($0)" } }
                        + " = \(w.data)"
                }
                (kind, text) = (.write, "\(timed)write " + list(writes))
            case .invokeRequest:
                let m = try InvokeRequestMessage(payload: request.payload)
                let commands = m.invokeRequests.map { c in path(c.path.endpoint, c.path.cluster) { $0.command(c.path.command)?.name } }
                (kind, text) = (.invoke, "\(timed)invoke " + list(commands))
            case .timedRequest:
                (kind, text) = (.invoke, "timed request (a write or invoke follows)")
            default:
                (kind, text) = (.read, "\(request.opcode)")
            }
        } catch {
            (kind, text) = (.read, "malformed \(request.opcode): \(error)")
        }
        // What a commissioner does before it has a fabric is the commissioning.
        return (request.subject.authMode == .pase ? .commissioning : kind, text)
    }
}

/// The Secure Channel responder with the handshakes' first messages logged (and traced with
/// `--trace`).
struct ObservedSecureChannel: ProtocolHandler {
    let inner: SecureChannelServer
    let trace: CommissioningTrace?
    let traffic: NodeTrafficLog

    func handle(exchange: Exchange, first message: Message) async {
        let peer = TrafficWording.peer(message.source)
        switch SecureChannelOpcode(rawValue: message.opcode) {
        case .pbkdfParamRequest:
            trace?.begin("PBKDFParamRequest from \(peer)")
            traffic.record(.commissioning, peer: peer, "PBKDFParamRequest: a commissioner starts PASE")
        case .sigma1:
            trace?.mark("Sigma1 from \(peer)")
            traffic.record(.session, peer: peer, "Sigma1: CASE begins")
        default: break
        }
        await inner.handle(exchange: exchange, first: message)
    }
}
