import Foundation

/// A lossy LAN, as the node's own cable sees it (`matter-sim fault NODE lan-impair
/// loss=20%,delay=50ms,jitter=20ms`): each datagram, each way, is lost with `loss`, sent twice
/// with `duplicate`, and held `delay` ± `jitter` (uniform) on the node's clock, so datagrams
/// overtake each other when the jitter exceeds their spacing. The kernel's netem does the same
/// per interface; this one needs no kernel module and follows one node. With `seed=N` each
/// direction draws from its own generator seeded by N, so a lossy run can be repeated: the
/// same datagrams in the same order meet the same fates (timing can change the order). With
/// `maxlost=N` no datagram is lost more than N times: an MRP retransmission repeats its
/// datagram byte for byte, so with N below MRP's five transmissions every message gets
/// through, whatever the order, however the retransmissions of several exchanges interleave.
public struct LinkImpairment: Sendable, Hashable, CustomStringConvertible {
    /// Probability of losing a datagram, 0...1.
    public var loss: Double = 0
    public var delay: Duration = .zero
    public var jitter: Duration = .zero
    /// Probability of sending a datagram twice, 0...1.
    public var duplicate: Double = 0
    /// The generators' seed; nil draws from the system's random numbers.
    public var seed: UInt64?
    /// How many times one datagram (the same bytes again) may be lost; nil: any number.
    public var maxLost: Int?

    public init(
        loss: Double = 0, delay: Duration = .zero, jitter: Duration = .zero, duplicate: Double = 0, seed: UInt64? = nil,
        maxLost: Int? = nil
    ) {
        self.loss = loss
        self.delay = delay
        self.jitter = jitter
        self.duplicate = duplicate
        self.seed = seed
        self.maxLost = maxLost
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
            + (seed.map { ",seed=\($0)" } ?? "") + (maxLost.map { ",maxlost=\($0)" } ?? "")
    }

    /// "loss=20%,delay=50ms,jitter=20ms,duplicate=1%,seed=7,maxlost=2" (any subset, in any
    /// order), or "none".
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
            case "maxlost":
                guard let n = Int(pair[1]), (0...100).contains(n) else {
                    return .failure(LinkImpairmentError("maxlost=\(pair[1]): expected a whole number from 0 to 100"))
                }
                result.maxLost = n
            default:
                return .failure(
                    LinkImpairmentError("unknown setting '\(pair[0])'; expected loss, delay, jitter, duplicate, seed or maxlost"))
            }
        }
        return .success(result)
    }

    /// What happens to one datagram: how many copies go, each after how long. One that may not
    /// be lost (`maxLost` reached) still draws its loss number, so the later fates stay the same.
    func fate(mayLose: Bool = true, random: () -> Double) -> [Duration] {
        if loss > 0, random() < loss, mayLose { return [] }
        let copies = duplicate > 0 && random() < duplicate ? 2 : 1
        return (0..<copies).map { _ in
            guard jitter > .zero else { return delay }
            let offset = jitter * (random() * 2 - 1)
            return max(.zero, delay + offset)
        }
    }
}

/// One direction of an impaired link: its generator when seeded, and for `maxLost` the
/// datagrams it lost, by content.
struct ImpairedDirection {
    private var random: SeededRandom?
    private var lost = LostDatagrams()

    init(seed: UInt64?) {
        random = seed.map { SeededRandom(seed: $0) }
    }

    /// The fate of `datagram` under `impairment` (see `LinkImpairment.fate`).
    mutating func fate(of datagram: [UInt8], under impairment: LinkImpairment) -> [Duration] {
        let mayLose = impairment.maxLost.map { lost.times(datagram) < $0 } ?? true
        let delays = impairment.fate(mayLose: mayLose) { random?.next() ?? Double.random(in: 0..<1) }
        if delays.isEmpty, impairment.maxLost != nil { lost.record(datagram) }
        return delays
    }
}

/// How many times each of the latest `capacity` lost datagrams was lost, by a hash of its bytes
/// (a collision only spares a datagram). MRP gives a message up within seconds, far fewer
/// datagrams than this are lost meanwhile.
struct LostDatagrams {
    static let capacity = 4096
    private var times: [Int: Int] = [:]
    private var order: [Int] = []
    private var oldest = 0

    func times(_ datagram: [UInt8]) -> Int { times[datagram.hashValue] ?? 0 }

    mutating func record(_ datagram: [UInt8]) {
        let key = datagram.hashValue
        if let n = times[key] {
            times[key] = n + 1
            return
        }
        if order.count < Self.capacity {
            order.append(key)
        } else {
            times.removeValue(forKey: order[oldest])
            order[oldest] = key
            oldest = (oldest + 1) % Self.capacity
        }
        times[key] = 1
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
