/// A service to publish: one SRV + TXT record set under `<instance>.<type>.<domain>`, with a
/// PTR from the type and one PTR from each subtype (RFC 6763 §4, §7.1).
public struct DNSSDService: Sendable, Hashable {
    /// The instance label, at most 63 bytes of UTF-8 (RFC 6763 §4.1.1).
    public var instanceName: String
    /// The service type, `_<service>._udp` or `_<service>._tcp`.
    public var type: String
    /// Subtype labels such as `_L3840`, without the `._sub.<type>` suffix.
    public var subtypes: [String]
    public var port: UInt16
    public var txt: DNSSDTXTRecord
    /// `nil`: the daemon's default browse domain (`local`).
    public var domain: String?
    /// `nil`: this host's own name (the daemon's).
    public var hostName: String?
    /// The A/AAAA records of `hostName`, published with the service (each on its address's
    /// interface, without a reverse PTR: nodes of one host share its addresses). Empty: the
    /// name's addresses are someone else's to publish (the daemon's, for its own name).
    public var hostAddresses: [DNSSDAddress]
    /// `nil`: every interface the daemon uses.
    public var interfaceIndex: Int32?
    /// Whether the daemon probes the name before announcing it (RFC 6762 §8.1, about
    /// 750 ms). `false` announces at once: for names unique by construction, such as a
    /// Matter operational instance (fabric and node ID), where a controller waits for it.
    public var probe: Bool
    /// Whether service type enumeration (`_services._dns-sd._udp`, RFC 6763 §9) also lists each
    /// subtype, as TC-SC-4.3 expects of a node's `_I<fabric>` subtype. Only an unprobed
    /// service's records are added one by one and can carry these; each is one more shared
    /// record per service for every daemon on the link to walk.
    public var enumeratesSubtypes: Bool

    public init(
        instanceName: String, type: String, port: UInt16, subtypes: [String] = [],
        txt: DNSSDTXTRecord = DNSSDTXTRecord(), domain: String? = nil, hostName: String? = nil,
        hostAddresses: [DNSSDAddress] = [], interfaceIndex: Int32? = nil, probe: Bool = true,
        enumeratesSubtypes: Bool = false
    ) {
        self.probe = probe
        self.enumeratesSubtypes = enumeratesSubtypes
        self.instanceName = instanceName
        self.type = type
        self.port = port
        self.subtypes = subtypes
        self.txt = txt
        self.domain = domain
        self.hostName = hostName
        self.hostAddresses = hostAddresses
        self.interfaceIndex = interfaceIndex
    }

    /// `<subtype>._sub.<type>`, the name browsed to find only this subtype (RFC 6763 §7.1).
    public static func subtypeServiceType(_ subtype: String, of type: String) -> String {
        "\(subtype)._sub.\(type)"
    }

    /// The full subtype service types this service registers.
    public var subtypeServiceTypes: [String] {
        subtypes.map { Self.subtypeServiceType($0, of: type) }
    }

    /// Checks everything DNS-SD and Avahi would reject, so `publish` fails before any
    /// daemon call with a precise reason.
    public func validate() throws(DNSSDError) {
        try Self.validateInstanceName(instanceName)
        try Self.validateServiceType(type)
        var seen: Set<String> = []
        for subtype in subtypes {
            try Self.validateSubtype(subtype)
            guard seen.insert(subtype.lowercased()).inserted else {
                throw .invalidName(field: "subtype", value: subtype, reason: "listed twice")
            }
        }
        if let domain { try Self.validateDomain(domain, field: "domain") }
        if let hostName { try Self.validateDomain(hostName, field: "host name") }
        if hostName == nil, let address = hostAddresses.first {
            throw .invalidName(field: "host address", value: address.description, reason: "addresses need a host name")
        }
        if let hostName, !hostAddresses.isEmpty, !hostName.contains(".") {
            throw .invalidName(field: "host name", value: hostName, reason: "a host with addresses needs a domain, e.g. <name>.local")
        }
        if let interfaceIndex, interfaceIndex < 0 {
            throw .invalidName(field: "interface index", value: "\(interfaceIndex)", reason: "negative")
        }
        try txt.validate()
    }

    static func validateInstanceName(_ name: String) throws(DNSSDError) {
        let length = name.utf8.count
        guard length >= 1 && length <= 63 else {
            throw .invalidName(field: "instance name", value: name, reason: "\(length) bytes, 1 to 63 allowed")
        }
        guard !name.utf8.contains(0) else {
            throw .invalidName(field: "instance name", value: name, reason: "contains NUL")
        }
    }

    /// `_<service>._udp` / `_<service>._tcp` with a service name of 1 to 15 letters,
    /// digits and hyphens (RFC 6335 §5.1).
    static func validateServiceType(_ type: String) throws(DNSSDError) {
        let labels = type.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count == 2, labels[1] == "_udp" || labels[1] == "_tcp" else {
            throw .invalidName(field: "service type", value: type, reason: "expected _<service>._udp or _<service>._tcp")
        }
        let service = labels[0].utf8
        guard service.first == UInt8(ascii: "_"), service.count >= 2, service.count <= 16 else {
            throw .invalidName(field: "service type", value: type, reason: "service name must be _ and 1 to 15 characters")
        }
        guard service.dropFirst().allSatisfy(isLetterDigitHyphen) else {
            throw .invalidName(field: "service type", value: type, reason: "service name is letters, digits and hyphens")
        }
    }

    /// A subtype is a single label; Matter's all start with `_` and are short ASCII.
    static func validateSubtype(_ subtype: String) throws(DNSSDError) {
        let bytes = subtype.utf8
        guard bytes.count >= 1 && bytes.count <= 63 else {
            throw .invalidName(field: "subtype", value: subtype, reason: "1 to 63 bytes allowed")
        }
        let printable = UInt8(ascii: "!")...UInt8(ascii: "~")
        guard bytes.allSatisfy({ printable.contains($0) && $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "\\") }) else {
            throw .invalidName(field: "subtype", value: subtype, reason: "a single printable ASCII label")
        }
    }

    static func validateDomain(_ domain: String, field: String) throws(DNSSDError) {
        let trimmed = domain.hasSuffix(".") ? String(domain.dropLast()) : domain
        guard !trimmed.isEmpty, trimmed.utf8.count <= 253 else {
            throw .invalidName(field: field, value: domain, reason: "1 to 253 bytes allowed")
        }
        for label in trimmed.split(separator: ".", omittingEmptySubsequences: false) {
            guard label.utf8.count >= 1 && label.utf8.count <= 63 else {
                throw .invalidName(field: field, value: domain, reason: "labels are 1 to 63 bytes")
            }
            guard label.utf8.allSatisfy({ isLetterDigitHyphen($0) || $0 == UInt8(ascii: "_") }) else {
                throw .invalidName(field: field, value: domain, reason: "labels are letters, digits, '-' and '_'")
            }
        }
    }

    private static func isLetterDigitHyphen(_ byte: UInt8) -> Bool { letterDigitHyphen.contains(byte) }

    private static let letterDigitHyphen = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-".utf8)
}
