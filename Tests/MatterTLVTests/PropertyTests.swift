import MatterTLV
import Testing

/// Builds random, well-formed value trees (structure tags unique and present,
/// array members anonymous) of bounded depth.
struct TreeGenerator {
    var rng: SeededGenerator

    init(seed: UInt64) { rng = SeededGenerator(seed: seed) }

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &rng) }
    mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    /// Integers spread over all bit lengths, with the width boundaries hit often.
    mutating func unsigned() -> UInt64 {
        let boundaries: [UInt64] = [0, 255, 256, 65535, 65536, 0xFFFF_FFFF, 0x1_0000_0000, .max]
        if chance(25) { return boundaries[int(0...boundaries.count - 1)] }
        let bits = int(0...64)
        return bits == 0 ? 0 : rng.next() >> UInt64(64 - bits)
    }

    mutating func signed() -> Int64 {
        let boundaries: [Int64] = [
            0, -1, 127, 128, -128, -129, 32767, 32768, -32768, -32769,
            Int64(Int32.max), Int64(Int32.max) + 1, Int64(Int32.min), Int64(Int32.min) - 1, .max, .min,
        ]
        if chance(25) { return boundaries[int(0...boundaries.count - 1)] }
        let bits = int(1...64)
        return Int64(bitPattern: rng.next()) >> Int64(64 - bits)
    }

    mutating func string() -> String {
        let count = chance(3) ? int(250...300) : int(0...12)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<count {
            let ranges: [ClosedRange<UInt32>] = [0x00...0x7F, 0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFF, 0x10000...0x10FFFF]
            let range = ranges[int(0...ranges.count - 1)]
            if let scalar = Unicode.Scalar(UInt32.random(in: range, using: &rng)) { scalars.append(scalar) }
        }
        return String(scalars)
    }

    mutating func octets() -> [UInt8] {
        let count = chance(2) ? int(256...700) : int(0...24)
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    mutating func float() -> Float {
        let specials: [Float] = [0, -0.0, .infinity, -.infinity, .nan, .signalingNaN, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        if chance(20) { return specials[int(0...specials.count - 1)] }
        return Float(bitPattern: UInt32(truncatingIfNeeded: rng.next()))
    }

    mutating func double() -> Double {
        let specials: [Double] = [0, -0.0, .infinity, -.infinity, .nan, .signalingNaN, .leastNonzeroMagnitude, 1.0 / 3.0]
        if chance(20) { return specials[int(0...specials.count - 1)] }
        return Double(bitPattern: rng.next())
    }

    mutating func tag() -> TLVTag {
        let wide = chance(50)
        let number = wide ? UInt32(truncatingIfNeeded: rng.next()) : UInt32(int(0...0xFFFF))
        switch int(0...4) {
        case 0: return .context(UInt8(int(0...255)))
        case 1: return .commonProfile(number)
        case 2: return .implicitProfile(number)
        case 3:
            return .fullyQualified(
                vendorID: UInt16(int(0...0xFFFF)), profileNumber: UInt16(int(0...0xFFFF)), tagNumber: number)
        default: return .anonymous
        }
    }

    mutating func scalar() -> TLVValue {
        switch int(0...8) {
        case 0: .signed(signed())
        case 1: .unsigned(unsigned())
        case 2: .bool(chance(50))
        case 3: .float(float())
        case 4: .double(double())
        case 5: .utf8(string())
        case 6: .bytes(octets())
        case 7: .null
        default: .unsigned(UInt64(int(0...300)))
        }
    }

    mutating func value(depth: Int) -> TLVValue {
        guard depth > 0, chance(40) else { return scalar() }
        let count = int(0...5)
        switch int(0...2) {
        case 0:
            var seen = Set<TLVTag>()
            var members: [TLVElement] = []
            for _ in 0..<count {
                var t = tag()
                if t == .anonymous { t = .context(UInt8(int(0...255))) }
                guard seen.insert(t).inserted else { continue }
                members.append(TLVElement(tag: t, value(depth: depth - 1)))
            }
            return .structure(members)
        case 1:
            return .array((0..<count).map { _ in TLVElement(value(depth: depth - 1)) })
        default:
            return .list((0..<count).map { _ in TLVElement(tag: tag(), value(depth: depth - 1)) })
        }
    }

    mutating func element(depth: Int) -> TLVElement {
        TLVElement(tag: tag(), value(depth: depth))
    }
}

/// The size of the shortest encoding, computed independently of the writer:
/// integers in the fewest of 1/2/4/8 octets, the same for length fields, and
/// 2-octet/6-octet profile tags whenever the tag number fits in 16 bits.
func shortestSize(_ element: TLVElement) -> Int {
    func octetsFor(unsigned v: UInt64) -> Int {
        for k in [1, 2, 4] where v < (UInt64(1) << UInt64(8 * k)) { return k }
        return 8
    }
    func octetsFor(signed v: Int64) -> Int {
        for k in [1, 2, 4] {
            let half = Int64(1) << Int64(8 * k - 1)
            if v >= -half && v < half { return k }
        }
        return 8
    }
    let tagSize: Int
    switch element.tag {
    case .anonymous: tagSize = 0
    case .context: tagSize = 1
    case .commonProfile(let n), .implicitProfile(let n): tagSize = n <= 0xFFFF ? 2 : 4
    case .fullyQualified(_, _, let n): tagSize = n <= 0xFFFF ? 6 : 8
    }
    let valueSize: Int
    switch element.value {
    case .signed(let v): valueSize = octetsFor(signed: v)
    case .unsigned(let v): valueSize = octetsFor(unsigned: v)
    case .bool, .null: valueSize = 0
    case .float: valueSize = 4
    case .double: valueSize = 8
    case .utf8(let s): valueSize = octetsFor(unsigned: UInt64(s.utf8.count)) + s.utf8.count
    case .bytes(let b): valueSize = octetsFor(unsigned: UInt64(b.count)) + b.count
    case .structure(let m), .array(let m), .list(let m): valueSize = m.map(shortestSize).reduce(1, +)
    }
    return 1 + tagSize + valueSize
}

@Suite("Round trips of random trees")
struct PropertyTests {
    @Test func decodeOfEncodeIsIdentityAndShortest() throws {
        var generator = TreeGenerator(seed: 0x5EED_0001)
        var containers = 0
        for _ in 0..<3000 {
            let element = generator.element(depth: 4)
            let encoded = element.encoded()
            #expect(encoded.count == shortestSize(element), "\(element)")
            let decoded = try TLVElement.decode(encoded)
            #expect(decoded == element, "\(hexString(encoded))")
            #expect(decoded.hashValue == element.hashValue)
            // Canonical: re-encoding the decoded tree gives the same octets.
            #expect(decoded.encoded() == encoded)
            if element.value.members != nil { containers += 1 }
        }
        #expect(containers > 500)  // the generator really builds trees
    }

    @Test func sequencesAndStreamingWalkAgree() throws {
        var generator = TreeGenerator(seed: 0x5EED_0002)
        for _ in 0..<300 {
            let elements = (0..<generator.int(0...4)).map { _ in generator.element(depth: 3) }
            var writer = TLVWriter()
            elements.forEach { writer.write($0) }
            #expect(try TLVElement.decodeAll(writer.bytes) == elements)

            var reader = TLVReader(writer.bytes)
            var walked: [TLVElement] = []
            while let header = try reader.next() {
                let element = try reader.readElement()
                #expect(element.tag == header.tag)
                walked.append(element)
            }
            #expect(walked == elements)
            #expect(reader.isAtEnd)
        }
    }

    @Test func floatsKeepTheirBits() throws {
        var generator = TreeGenerator(seed: 0x5EED_0003)
        for _ in 0..<2000 {
            let f = generator.float()
            let d = generator.double()
            let decodedF = try TLVElement.decode(TLVElement(.float(f)).encoded()).value.floatValue
            let decodedD = try TLVElement.decode(TLVElement(.double(d)).encoded()).value.doubleValue
            #expect(decodedF?.bitPattern == f.bitPattern)
            #expect(decodedD?.bitPattern == d.bitPattern)
        }
    }
}
