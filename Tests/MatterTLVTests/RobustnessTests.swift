import MatterTLV
import Testing

/// Valid encodings to mutate: the spec rows, random trees, and shapes that
/// sit near the reader's limits (deep nesting, structures with close tags).
func fuzzSeeds() -> [[UInt8]] {
    var seeds = (primitiveVectors + containerVectors + tagVectors).map { hex($0.octets) }
    var generator = TreeGenerator(seed: 0xF022_0001)
    for _ in 0..<200 { seeds.append(generator.element(depth: 3).encoded()) }
    for depth in [3, 15, 16] {
        seeds.append([UInt8](repeating: 0x17, count: depth) + [UInt8](repeating: 0x18, count: depth))
    }
    seeds.append(hex("15 24 01 01 24 02 02 2c 03 02 c3 bc 18"))
    seeds.append(hex("15 24 01 01 18"))
    seeds.append(hex("16 0c 03 e2 82 ac 0c 02 c3 a9 18"))
    return seeds
}

/// One random mutation of `seed`.
func mutate(_ seed: [UInt8], _ rng: inout SeededGenerator) -> [UInt8] {
    var bytes = seed
    func position(_ bytes: [UInt8], inclusiveEnd: Bool = false) -> Int {
        let upper = inclusiveEnd ? bytes.count : max(bytes.count - 1, 0)
        return Int.random(in: 0...upper, using: &rng)
    }
    let interesting: [UInt8] = [0x15, 0x16, 0x17, 0x18, 0x19, 0x1F, 0x00, 0xFF, 0x24, 0x38, 0x0C, 0x10]
    switch Int.random(in: 0...8, using: &rng) {
    case 0:  // bit flips
        for _ in 0..<Int.random(in: 1...3, using: &rng) where !bytes.isEmpty {
            bytes[position(bytes)] ^= UInt8(1) << UInt8.random(in: 0...7, using: &rng)
        }
    case 1:  // truncation
        bytes = Array(bytes.prefix(position(bytes, inclusiveEnd: true)))
    case 2:  // inserted bytes, often structural ones
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
            let b =
                Bool.random(using: &rng)
                ? interesting[Int.random(in: 0..<interesting.count, using: &rng)]
                : UInt8.random(in: 0...255, using: &rng)
            bytes.insert(b, at: position(bytes, inclusiveEnd: true))
        }
    case 3:  // deleted bytes
        for _ in 0..<Int.random(in: 1...3, using: &rng) where !bytes.isEmpty {
            bytes.remove(at: position(bytes))
        }
    case 4:  // a string length field set huge
        let strings = bytes.indices.filter { (0x0C...0x13).contains(bytes[$0] & 0x1F) }
        if let at = strings.randomElement(using: &rng) {
            let fieldOctets = 1 << Int(bytes[at] & 0x03)
            for i in 1...fieldOctets where at + i < bytes.count { bytes[at + i] = 0xFF }
        } else if !bytes.isEmpty {
            bytes[position(bytes)] = 0xFF
        }
    case 5:  // a duplicated run of bytes
        if !bytes.isEmpty {
            let start = position(bytes)
            let end = min(bytes.count, start + Int.random(in: 1...8, using: &rng))
            bytes.insert(contentsOf: bytes[start..<end], at: position(bytes, inclusiveEnd: true))
        }
    case 6:  // a byte overwritten with a structural value
        if !bytes.isEmpty { bytes[position(bytes)] = interesting[Int.random(in: 0..<interesting.count, using: &rng)] }
    case 7:  // entirely random
        bytes = (0..<Int.random(in: 0...24, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
    default:  // two seeds back to back
        bytes += seed.prefix(Int.random(in: 0...seed.count, using: &rng))
    }
    return bytes
}

/// Random calls on a streaming reader; must end, and never trap.
func randomWalk(_ bytes: [UInt8], _ rng: inout SeededGenerator) -> Int {
    var reader = TLVReader(bytes, maxDepth: 8)
    var errors = 0
    for _ in 0..<64 {
        do throws(TLVError) {
            switch Int.random(in: 0...5, using: &rng) {
            case 0, 1: _ = try reader.next()
            case 2: try reader.enterContainer()
            case 3: try reader.exitContainer()
            case 4: _ = try reader.readElement()
            default: try reader.skip()
            }
        } catch {
            errors += 1
        }
        if reader.isAtEnd && reader.depth == 0 { break }
    }
    return errors
}

@Suite("Robustness against hostile input")
struct RobustnessTests {
    @Test func mutatedAndRandomBuffersNeverCrash() throws {
        let seeds = fuzzSeeds()
        var rng = SeededGenerator(seed: 0xF022_C0DE)
        var outcomes: [String: Int] = [:]
        let iterations = 100_000
        for i in 0..<iterations {
            let seed = seeds[Int.random(in: 0..<seeds.count, using: &rng)]
            var bytes = mutate(seed, &rng)
            if Int.random(in: 0...3, using: &rng) == 0 { bytes = mutate(bytes, &rng) }
            let maxDepth = [2, 4, 16][Int.random(in: 0...2, using: &rng)]
            switch decodeResult(bytes, maxDepth: maxDepth) {
            case .success(let element):
                outcomes["success", default: 0] += 1
                // Whatever was accepted re-encodes canonically, never longer.
                let again = element.encoded()
                #expect(again.count <= bytes.count)
                #expect(decodeResult(again, maxDepth: maxDepth) == .success(element))
            case .failure(let error):
                outcomes[kindName(error), default: 0] += 1
            }
            if i % 8 == 0 { _ = randomWalk(bytes, &rng) }
            if i % 16 == 0 { _ = try? TLVElement.decodeAll(bytes, maxDepth: maxDepth) }
        }
        #expect(outcomes.values.reduce(0, +) == iterations)
        #expect(outcomes["success", default: 0] > 1000, "\(outcomes)")
        for kind in inputErrorKinds {
            #expect(outcomes[kind, default: 0] > 0, "never saw \(kind): \(outcomes)")
        }
        // Misuse errors need a caller; input alone never produces them.
        #expect(outcomes["noCurrentElement"] == nil && outcomes["notAContainer"] == nil)
    }

    @Test func everyTruncationOfEverySpecRowFails() {
        for vector in primitiveVectors + containerVectors + tagVectors {
            let bytes = hex(vector.octets)
            for cut in 0..<bytes.count {
                let result = decodeResult(Array(bytes.prefix(cut)))
                guard case .failure(let error) = result else {
                    Issue.record("\(vector.name) cut at \(cut) decoded")
                    continue
                }
                #expect(
                    [.truncated, .lengthPastEnd, .missingEndOfContainer].contains(error),
                    "\(vector.name) cut at \(cut): \(error)")
            }
        }
    }
}
