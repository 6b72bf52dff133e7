import Foundation

/// A lossy LAN, as the node's own cable sees it (`matter-sim fault NODE lan-impair
/// loss=20%,delay=50ms,jitter=20ms`): each datagram, each way, is lost with `loss`, sent twice
/// with `duplicate`, and held `delay` ± `jitter` (uniform) on the node's clock, so datagrams
/// overtake each other when the jitter exceeds their spacing. The kernel's netem does the same
/// per interface; this one needs no kernel module and follows one node.
public struct LinkImpairment: Sendable, Hashable, CustomStringConvertible {
    /// Probability of losing a datagram, 0...1.
    public var loss: Double = 0
    public var delay: Duration = .zero
    public var jitter: Duration = .zero
    /// Probability of sending a datagram twice, 0...1.
    public var duplicate: Double = 0

    public init(loss: Double = 0, delay: Duration = .zero, jitter: Duration = .zero, duplicate: Double = 0) {
        self.loss = loss
        self.delay = delay
        self.jitter = jitter
        self.duplicate = duplicate
    }

    public static let none = LinkImpairment()
    public var isNone: Bool { self == .none }

    public var description: String {
        if isNone { return "none" }
        func ms(_ d: Duration) -> String {
            "\(Int((Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15).rounded()))ms"
        }
        func percent(_ p: Double) -> String { "\(((p * 1000).rounded()) / 10)%" }
        return "loss=\(percent(loss)),delay=\(ms(delay)),jitter=\(ms(jitter)),duplicate=\(percent(duplicate))"
    }

    /// "loss=20%,delay=50ms,jitter=20ms,duplicate=1%" (any subset, in any order), or "none".
    public static func parse(_ text: String) -> Result<LinkImpairment, LinkImpairmentError> {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed == "none" || trimmed.isEmpty { return .success(.none) }
        var result = LinkImpairment()
        for part in trimmed.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2 else { return .failure(LinkImpairmentError("'\(part)': expected NAME=VALUE, like loss=20%")) }
            switch pair[0] {
            case "loss", "duplicate":
                guard pair[1].hasSuffix("%"), let p = Double(pair[1].dropLast()), (0...100).contains(p) else {
                    return .failure(LinkImpairmentError("\(pair[0])=\(pair[1]): expected a percentage from 0% to 100%"))
                }
                if pair[0] == "loss" { result.loss = p / 100 } else { result.duplicate = p / 100 }
            case "delay", "jitter":
                guard pair[1].hasSuffix("ms"), let ms = Double(pair[1].dropLast(2)), (0...10_000).contains(ms) else {
                    return .failure(LinkImpairmentError("\(pair[0])=\(pair[1]): expected milliseconds from 0ms to 10000ms"))
                }
                let d = Duration.microseconds(Int64((ms * 1000).rounded()))
                if pair[0] == "delay" { result.delay = d } else { result.jitter = d }
            default:
                return .failure(LinkImpairmentError("unknown setting '\(pair[0])'; expected loss, delay, jitter or duplicate"))
            }
        }
        return .success(result)
    }

    /// What happens to one datagram: how many copies go, each after how long.
    func fate(random: () -> Double) -> [Duration] {
        if loss > 0, random() < loss { return [] }
        let copies = duplicate > 0 && random() < duplicate ? 2 : 1
        return (0..<copies).map { _ in
            guard jitter > .zero else { return delay }
            let offset = jitter * (random() * 2 - 1)
            return max(.zero, delay + offset)
        }
    }
}

public struct LinkImpairmentError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
