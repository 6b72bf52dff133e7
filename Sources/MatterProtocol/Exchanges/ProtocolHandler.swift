/// Serves one protocol (Interaction Model, Secure Channel, BDX, …): the exchange
/// manager calls it for every unsolicited initiator message of that protocol,
/// each on a new exchange in the responder role. When `handle` returns the
/// exchange is closed (pending acks are flushed; an unacknowledged reliable
/// message keeps being retransmitted until acked or given up).
public protocol ProtocolHandler: Sendable {
    func handle(exchange: Exchange, first message: Message) async
}
