/// An operational node's DNS-SD advertisement (Matter Core §4.3.2): `_matter._tcp` under
/// `<compressed fabric ID>-<node ID>` (16 uppercase hex digits each), with the subtype
/// `_I<compressed fabric ID>` so a controller can find every node of its fabric.
///
/// The type says `_tcp` although Matter runs over UDP: that is the name the specification
/// chose, and what connectedhomeip registers with Avahi too.
public struct MatterOperationalRecord: Sendable, Hashable {
    public static let serviceType = "_matter._tcp"
    public static let defaultPort: UInt16 = 5540

    public var compressedFabricID: UInt64
    public var nodeID: UInt64
    public var sessionIdleInterval: UInt32?
    public var sessionActiveInterval: UInt32?
    public var sessionActiveThreshold: UInt16?
    public var tcpSupport: UInt8?
    public var port: UInt16

    public init(
        compressedFabricID: UInt64, nodeID: UInt64, sessionIdleInterval: UInt32? = nil,
        sessionActiveInterval: UInt32? = nil, sessionActiveThreshold: UInt16? = nil, tcpSupport: UInt8? = nil,
        port: UInt16 = defaultPort
    ) {
        self.compressedFabricID = compressedFabricID
        self.nodeID = nodeID
        self.sessionIdleInterval = sessionIdleInterval
        self.sessionActiveInterval = sessionActiveInterval
        self.sessionActiveThreshold = sessionActiveThreshold
        self.tcpSupport = tcpSupport
        self.port = port
    }

    /// `<compressed fabric ID>-<node ID>`, e.g. `87E1B004E235A130-8FC7772401CD0696`.
    public var instanceName: String {
        Self.instanceName(compressedFabricID: compressedFabricID, nodeID: nodeID)
    }

    public static func instanceName(compressedFabricID: UInt64, nodeID: UInt64) -> String {
        "\(MatterTXT.hex16(compressedFabricID))-\(MatterTXT.hex16(nodeID))"
    }

    /// `_I<compressed fabric ID>`: browse `_I…._sub._matter._tcp` for a fabric's nodes.
    public static func fabricSubtype(compressedFabricID: UInt64) -> String {
        "_I" + MatterTXT.hex16(compressedFabricID)
    }

    public var subtypes: [String] { [Self.fabricSubtype(compressedFabricID: compressedFabricID)] }

    /// SII, SAI, SAT, T, each when it has a value.
    public var txt: DNSSDTXTRecord {
        var txt = DNSSDTXTRecord()
        common.append(to: &txt)
        return txt
    }

    public func validate() throws(DNSSDError) {
        try common.validate()
    }

    /// The service to publish, on `host` (nil: the daemon's own host name and addresses), with
    /// `interfaceIndex` passed through.
    ///
    /// Published without probing: the name is unique by construction (one node ID per
    /// fabric), and a commissioner looks it up right after AddNOC (Core §4.3.2.1), so the
    /// daemon's 750 ms of probes were most of commissioning's time. connectedhomeip's own
    /// responder (minimal mDNS) does not probe either.
    public func service(host: MatterHost? = nil, interfaceIndex: Int32? = nil) throws(DNSSDError) -> DNSSDService {
        try validate()
        return DNSSDService(
            instanceName: instanceName, type: Self.serviceType, port: port, subtypes: subtypes, txt: txt,
            hostName: host?.name, hostAddresses: host?.addresses ?? [], interfaceIndex: interfaceIndex, probe: false,
            enumeratesSubtypes: true)
    }

    /// The compressed fabric ID and node ID an instance name stands for. Exactly
    /// `XXXXXXXXXXXXXXXX-XXXXXXXXXXXXXXXX` (hex, either case) is accepted.
    public static func parseInstanceName(_ name: String) throws(DNSSDError) -> (compressedFabricID: UInt64, nodeID: UInt64) {
        let bytes = Array(name.utf8)
        guard bytes.count == 33, bytes[16] == UInt8(ascii: "-"),
            let fabric = MatterTXT.parseHex16(String(decoding: bytes[0..<16], as: UTF8.self)),
            let node = MatterTXT.parseHex16(String(decoding: bytes[17..<33], as: UTF8.self))
        else {
            throw .malformedRecord(field: "instance name", reason: "'\(name)' is not <fabric>-<node> in 16 hex digits each")
        }
        return (fabric, node)
    }

    /// Decodes a browsed operational node.
    public init(resolved: DNSSDResolvedService) throws(DNSSDError) {
        try self.init(instanceName: resolved.instanceName, txt: resolved.txt, port: resolved.port)
    }

    public init(instanceName: String, txt: DNSSDTXTRecord, port: UInt16 = defaultPort) throws(DNSSDError) {
        let ids = try Self.parseInstanceName(instanceName)
        let common = try MatterTXT.Common(decoding: txt)
        self.init(
            compressedFabricID: ids.compressedFabricID, nodeID: ids.nodeID,
            sessionIdleInterval: common.sessionIdleInterval, sessionActiveInterval: common.sessionActiveInterval,
            sessionActiveThreshold: common.sessionActiveThreshold, tcpSupport: common.tcpSupport, port: port)
    }

    private var common: MatterTXT.Common {
        MatterTXT.Common(
            sessionIdleInterval: sessionIdleInterval, sessionActiveInterval: sessionActiveInterval,
            sessionActiveThreshold: sessionActiveThreshold, tcpSupport: tcpSupport)
    }
}
