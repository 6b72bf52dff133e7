import Hummingbird
import HummingbirdCore
import Logging
import MatterDevice
import NIOCore
import Synchronization

/// How many connections the dashboard holds, and for how long a silent one may stay.
/// 1,100 idle sockets once took every descriptor of a home at 1,024: the token holder went
/// unanswered and a commissioning could not save its state.
public struct DashboardLimits: Sendable {
    /// Open connections from one client address (a page holds its WebSocket and a few fetches).
    public var connectionsPerAddress = 16
    /// Open connections in all.
    public var connections = 128
    /// Time to send a whole request head after connecting.
    public var requestHeadTimeout: Duration = .seconds(10)
    /// Time an HTTP connection may sit between requests.
    public var idleTimeout: Duration = .seconds(30)
    /// Descriptors left for the nodes (state files, sockets): no connection is taken beyond
    /// the soft RLIMIT_NOFILE less this.
    public var descriptorReserve = 256

    public init() {}
}

/// Admits the dashboard's connections within `DashboardLimits` and counts those it refused.
final class DashboardConnectionGate: Sendable {
    let limits: DashboardLimits
    /// Descriptors open and the soft limit (`DescriptorLimit`; a test gives its own).
    private let descriptors: @Sendable () -> (open: Int, limit: Int)?
    private let open = Mutex<(all: Int, byAddress: [String: Int])>((0, [:]))
    private let refusedCount = Atomic<Int>(0)

    init(limits: DashboardLimits, descriptors: @escaping @Sendable () -> (open: Int, limit: Int)? = DashboardConnectionGate.processDescriptors) {
        self.limits = limits
        self.descriptors = descriptors
    }

    @Sendable static func processDescriptors() -> (open: Int, limit: Int)? {
        guard let limit = DescriptorLimit.softLimit, let open = DescriptorLimit.openCount() else { return nil }
        return (open, limit)
    }

    /// Connections refused so far (caps, descriptors).
    var refused: Int { refusedCount.load(ordering: .relaxed) }

    /// Why a new connection from `address` is refused, or nil when it was counted in.
    func admit(_ address: String) -> String? {
        if let now = descriptors(), now.open + limits.descriptorReserve >= now.limit {
            return refuse("\(now.open) of \(now.limit) descriptors open, \(limits.descriptorReserve) kept for the nodes")
        }
        let reason: String? = open.withLock { open in
            let fromAddress = open.byAddress[address, default: 0]
            if open.all >= limits.connections { return "\(open.all) connections open" }
            if fromAddress >= limits.connectionsPerAddress { return "\(address) holds \(fromAddress) connections" }
            open.all += 1
            open.byAddress[address] = fromAddress + 1
            return nil
        }
        return reason.map(refuse)
    }

    private func refuse(_ reason: String) -> String {
        refusedCount.add(1, ordering: .relaxed)
        return reason
    }

    func release(_ address: String) {
        open.withLock { open in
            open.all -= 1
            let left = open.byAddress[address, default: 1] - 1
            open.byAddress[address] = left > 0 ? left : nil
        }
    }
}

/// First in a dashboard connection's pipeline: closes it when no request head has ended
/// (an empty line) within the timeout, as a trickling or silent client would hold it, and
/// gives its place back when it closes. Hummingbird's idle timeout covers later requests.
final class DashboardConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    private let gate: DashboardConnectionGate
    private let address: String
    private var deadline: Scheduled<Void>?
    /// How many bytes of "\r\n\r\n" the input ends with; nil once a head ended.
    private var headEnd: Int? = 0

    init(gate: DashboardConnectionGate, address: String) {
        self.gate = gate
        self.address = address
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        deadline = context.eventLoop.scheduleTask(in: TimeAmount(gate.limits.requestHeadTimeout)) { loopBound.value.close(promise: nil) }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if var matched = headEnd {
            for byte in unwrapInboundIn(data).readableBytesView {
                let wanted: UInt8 = matched % 2 == 0 ? 13 : 10
                matched = byte == wanted ? matched + 1 : (byte == 13 ? 1 : 0)
                if matched == 4 { break }
            }
            if matched == 4 {
                headEnd = nil
                deadline?.cancel()
            } else {
                headEnd = matched
            }
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        deadline?.cancel()
        gate.release(address)
        context.fireChannelInactive()
    }
}

/// The dashboard's HTTP/WebSocket channel behind the gate: a refused connection is closed
/// at once, before it is read.
struct DashboardChildChannel<Base: ServerChildChannel>: ServerChildChannel {
    typealias Value = Base.Value
    let base: Base
    let gate: DashboardConnectionGate

    struct Refused: Error {}

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        let address = channel.remoteAddress?.ipAddress ?? "unknown"
        if let reason = gate.admit(address) {
            logger.debug("dashboard connection from \(address) refused: \(reason)")
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(Refused())
        }
        do {
            try channel.pipeline.syncOperations.addHandler(DashboardConnectionHandler(gate: gate, address: address), position: .first)
        } catch {
            gate.release(address)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return base.setup(channel: channel, logger: logger)
    }

    func handle(value: Value, logger: Logger) async {
        await base.handle(value: value, logger: logger)
    }
}
