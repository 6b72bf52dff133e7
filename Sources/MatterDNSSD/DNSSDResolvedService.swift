#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IP address a service was found at, with the interface it was seen on (needed to use
/// an IPv6 link-local address).
public struct DNSSDAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    public enum Family: Int, Sendable, Hashable, Comparable {
        case ipv4 = 4
        case ipv6 = 6

        public static func < (a: Family, b: Family) -> Bool { a.rawValue < b.rawValue }
    }

    public let family: Family
    /// 4 bytes (IPv4) or 16 bytes (IPv6), network order.
    public let bytes: [UInt8]
    public let interfaceIndex: Int32

    /// `nil` unless `bytes` has the length of an address of `family`.
    public init?(family: Family, bytes: [UInt8], interfaceIndex: Int32) {
        guard bytes.count == (family == .ipv4 ? 4 : 16) else { return nil }
        self.family = family
        self.bytes = bytes
        self.interfaceIndex = interfaceIndex
    }

    /// Parses dotted-quad IPv4 or RFC 4291 IPv6 text (no zone).
    public init?(_ text: String, interfaceIndex: Int32) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            let bytes = withUnsafeBytes(of: &v4) { Array($0) }
            self.init(family: .ipv4, bytes: bytes, interfaceIndex: interfaceIndex)
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            let bytes = withUnsafeBytes(of: &v6) { Array($0) }
            self.init(family: .ipv6, bytes: bytes, interfaceIndex: interfaceIndex)
        } else {
            return nil
        }
    }

    /// The address in its usual text form, without a zone.
    public var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let family = self.family == .ipv4 ? AF_INET : AF_INET6
        let ok = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard ok else { return bytes.map { String($0) }.joined(separator: ".") }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `fe80::/10`, reachable only through `interfaceIndex`.
    public var isLinkLocal: Bool {
        switch family {
        case .ipv4: bytes[0] == 169 && bytes[1] == 254
        case .ipv6: bytes[0] == 0xFE && (bytes[1] & 0xC0) == 0x80
        }
    }

    /// The text form, with `%<interface index>` for IPv6 link-local addresses.
    public var description: String {
        family == .ipv6 && isLinkLocal ? "\(text)%\(interfaceIndex)" : text
    }

    /// Interface first, then IPv4 before IPv6, then the bytes.
    public static func < (a: DNSSDAddress, b: DNSSDAddress) -> Bool {
        if a.interfaceIndex != b.interfaceIndex { return a.interfaceIndex < b.interfaceIndex }
        if a.family != b.family { return a.family < b.family }
        return a.bytes.lexicographicallyPrecedes(b.bytes)
    }
}

/// A browsed service with its SRV, TXT and address records resolved.
public struct DNSSDResolvedService: Sendable, Hashable, CustomStringConvertible {
    public var instanceName: String
    /// The service type browsed for, without any subtype (`_matterc._udp`).
    public var type: String
    public var domain: String
    /// The SRV target, e.g. `host.local`.
    public var hostName: String
    public var port: UInt16
    /// Every address of `hostName` seen on the interfaces the service was found on, sorted.
    public var addresses: [DNSSDAddress]
    public var txt: DNSSDTXTRecord

    public init(
        instanceName: String, type: String, domain: String, hostName: String, port: UInt16,
        addresses: [DNSSDAddress], txt: DNSSDTXTRecord
    ) {
        self.instanceName = instanceName
        self.type = type
        self.domain = domain
        self.hostName = hostName
        self.port = port
        self.addresses = addresses
        self.txt = txt
    }

    /// The interfaces the service's addresses were seen on, sorted.
    public var interfaceIndices: [Int32] {
        Array(Set(addresses.map(\.interfaceIndex))).sorted()
    }

    public var description: String {
        "\(instanceName).\(type).\(domain) at \(hostName):\(port) \(addresses) \(txt)"
    }
}

/// One change seen by a browse.
public enum DNSSDEvent: Sendable, Hashable {
    /// A service appeared and has been resolved.
    case added(DNSSDResolvedService)
    /// A known service's host, port, addresses or TXT record changed.
    case updated(DNSSDResolvedService)
    /// A known service is gone (withdrawn, expired, or the daemon connection was lost).
    case removed(instanceName: String)

    public var instanceName: String {
        switch self {
        case let .added(service), let .updated(service): service.instanceName
        case let .removed(name): name
        }
    }
}
