import Foundation

/// A lossy LAN, as the node's own cable sees it (`matter-sim fault NODE lan-impair
/// loss=20%,delay=50ms,jitter=20ms`): each datagram, each way, is lost with `loss`, sent twice
/// with `duplicate`, and held `delay` ± `jitter` (uniform) on the node's clock, so datagrams
/// overtake each other when the jitter exceeds their spacing. The kernel's netem does the same
/// per interface; this one needs no kernel module and follows one node. With `seed=N` each
/// direction draws from its own generator seeded by N, so a lossy run can be repeated: the
/// same datagrams in the same order meet the same fates.
public struct LinkImpairment: Sendable, Hashable, CustomStringConvertible {
    /// Probability of losing a datagram, 0...1.
    public var loss: Double = 0
    public var delay: Duration = .zero
    public var jitter: Duration = .zero
    /// Probability of sending a datagram twice, 0...1.
    public var duplicate: Double = 0
    /// The generators' seed; nil draws from the system's random numbers.
    public var seed: UInt64?

    public init(loss: Double = 0, delay: Duration = .zero, jitter: Duration = .zero, duplicate: Double = 0, seed: UInt64? = nil) {
        self.loss = loss
        self.delay = delay
        self.jitter = jitter
        self.duplicate = duplicate
        self.seed = seed
    }

    public static let none = LinkImpairment()
    public var isNone: Bool { loss == 0 && delay == .zero && jitter == .zero && duplicate == 0 }

    public var description: String {
        if isNone { return "none" }
        func ms(_ d: Duration) -> String {
            "\(Int((Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15).rounded()))ms"
        }
        func percent(_ p: Double) -> String { "\(((p * 1000).rounded()) / 10)%" }
        return "loss=\(percent(loss)),delay=\(ms(delay)),jitter=\(ms(jitter)),duplicate=\(percent(duplicate))"
            + (seed.map { ",seed=\($0)" } ?? "")
    }

    /// "loss=20%,delay=50ms,jitter=20ms,duplicate=1%,seed=7" (any subset, in any order), or "none".
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
            case "seed":
                guard let seed = UInt64(pair[1]) else {
                    return .failure(LinkImpairmentError("seed=\(pair[1]): expected a whole number from 0 to \(UInt64.max)"))
                }
                result.seed = seed
            default:
                return .failure(LinkImpairmentError("unknown setting '\(pair[0])'; expected loss, delay, jitter, duplicate or seed"))
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

/// SplitMix64 (Steele, Lea and Flood 2014): a small, fast generator for repeatable fates, not
/// for anything secret.
struct SeededRandom: Sendable {
    private var state: UInt64
    init(seed: UInt64) { state = seed }

    /// A number in 0..<1.
    mutating func next() -> Double {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(UInt64(1) << 53)
    }
}

public struct LinkImpairmentError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
