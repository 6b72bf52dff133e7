/// The host a Matter node's services point at (Core spec 4.3.1 and 4.3.2: the SRV target is a
/// host name made of one of the node's link-layer addresses, a 48-bit MAC or a 64-bit EUI-64,
/// in capital hexadecimal: `B75AFB458ECD.local`), with the addresses its A/AAAA records carry.
public struct MatterHost: Sendable, Hashable {
    /// `<12 or 16 capital hex digits>.local`.
    public let name: String
    public let addresses: [DNSSDAddress]

    /// - Parameter linkLayerAddress: 6 bytes (MAC-48) or 8 (EUI-64).
    public init?(linkLayerAddress: [UInt8], addresses: [DNSSDAddress]) {
        guard linkLayerAddress.count == 6 || linkLayerAddress.count == 8 else { return nil }
        let digits = Array("0123456789ABCDEF")
        name = String(linkLayerAddress.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0x0F)]] }) + ".local"
        self.addresses = addresses.sorted()
    }

    /// A simulated node has no network card of its own, and the nodes of one host share its
    /// card: each gets a MAC-48 of its own, derived from `seed` (stable for the same seed),
    /// locally administered and unicast (IEEE 802: bit 1 of the first octet set, bit 0 clear),
    /// so it never claims a manufacturer's address.
    public static func simulatedMACAddress(seed: String) -> [UInt8] {
        // FNV-1a, 64 bits: spreads similar seeds (serial numbers one apart) over the space.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in seed.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        var mac = (0..<6).map { UInt8(truncatingIfNeeded: hash >> (8 * UInt64($0))) }
        mac[0] = (mac[0] | 0x02) & 0xFE
        return mac
    }
}
