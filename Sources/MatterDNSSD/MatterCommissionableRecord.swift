/// A commissionable node's DNS-SD advertisement (Matter Core §4.3.1): `_matterc._udp` under
/// a random 64-bit instance name, found by discriminator, vendor, device type or
/// commissioning mode through its subtypes, and described by its TXT record.
///
/// Build one from a node's state and turn it into a `DNSSDService` with `service()`; a
/// controller decodes a browsed service back with `init(resolved:)`.
public struct MatterCommissionableRecord: Sendable, Hashable {
    public static let serviceType = "_matterc._udp"
    public static let defaultPort: UInt16 = 5540

    /// The CM key (§4.3.1.3): whether and how a commissioning window is open.
    public enum CommissioningMode: UInt8, Sendable, Hashable {
        case disabled = 0
        /// Open with the onboarding passcode (basic commissioning method).
        case basic = 1
        /// Open by an administrator with a new passcode (enhanced commissioning method).
        case enhanced = 2
    }

    /// The instance name's value: random per advertisement, 16 uppercase hex digits.
    public var instanceID: UInt64
    /// The 12-bit long discriminator (D).
    public var longDiscriminator: UInt16
    public var vendorID: UInt16?
    /// Sent only together with `vendorID` (VP is `vendor+product`).
    public var productID: UInt16?
    /// The primary device type (DT), e.g. 0x0100 for an On/Off Light.
    public var deviceType: UInt32?
    /// DN, at most 32 bytes of UTF-8.
    public var deviceName: String?
    public var commissioningMode: CommissioningMode
    /// SII: the MRP retransmission interval while idle, in milliseconds.
    public var sessionIdleInterval: UInt32?
    /// SAI: the MRP retransmission interval while active, in milliseconds.
    public var sessionActiveInterval: UInt32?
    /// SAT: how long the node stays active after activity, in milliseconds.
    public var sessionActiveThreshold: UInt16?
    /// T: the TCP support bitmap (bit 1 client, bit 2 server).
    public var tcpSupport: UInt8?
    /// PH: the pairing hint bitmap.
    public var pairingHint: UInt32?
    /// PI: the pairing instruction, at most 128 bytes.
    public var pairingInstruction: String?
    /// RI: the rotating device identifier, at most 50 bytes, sent as uppercase hex.
    public var rotatingDeviceID: [UInt8]?
    public var port: UInt16

    public static let maximumDeviceNameBytes = 32
    public static let maximumPairingInstructionBytes = 128
    public static let maximumRotatingDeviceIDBytes = 50

    public init(
        longDiscriminator: UInt16, vendorID: UInt16? = nil, productID: UInt16? = nil, deviceType: UInt32? = nil,
        deviceName: String? = nil, commissioningMode: CommissioningMode = .basic,
        sessionIdleInterval: UInt32? = nil, sessionActiveInterval: UInt32? = nil,
        sessionActiveThreshold: UInt16? = nil, tcpSupport: UInt8? = nil, pairingHint: UInt32? = nil,
        pairingInstruction: String? = nil, rotatingDeviceID: [UInt8]? = nil, port: UInt16 = defaultPort,
        instanceID: UInt64 = UInt64.random(in: .min ... .max)
    ) {
        self.instanceID = instanceID
        self.longDiscriminator = longDiscriminator
        self.vendorID = vendorID
        self.productID = productID
        self.deviceType = deviceType
        self.deviceName = deviceName
        self.commissioningMode = commissioningMode
        self.sessionIdleInterval = sessionIdleInterval
        self.sessionActiveInterval = sessionActiveInterval
        self.sessionActiveThreshold = sessionActiveThreshold
        self.tcpSupport = tcpSupport
        self.pairingHint = pairingHint
        self.pairingInstruction = pairingInstruction
        self.rotatingDeviceID = rotatingDeviceID
        self.port = port
    }

    /// The upper 4 bits of the long discriminator (what a manual pairing code carries).
    public var shortDiscriminator: UInt8 { UInt8(truncatingIfNeeded: longDiscriminator >> 8) }

    public var instanceName: String { MatterTXT.hex16(instanceID) }

    /// `_L<long>`, `_S<short>`, `_V<vendor>`, `_T<device type>` (each present when known),
    /// and `_CM` while a commissioning window is open (§4.3.1.4), all in decimal.
    public var subtypes: [String] {
        var subtypes = ["_L\(longDiscriminator)", "_S\(shortDiscriminator)"]
        if let vendorID { subtypes.append("_V\(vendorID)") }
        if let deviceType { subtypes.append("_T\(deviceType)") }
        if commissioningMode != .disabled { subtypes.append("_CM") }
        return subtypes
    }

    /// The TXT record: D, CM, VP, DT, DN, SII, SAI, SAT, T, RI, PH, PI, each when it has a
    /// value.
    public var txt: DNSSDTXTRecord {
        var txt = DNSSDTXTRecord()
        txt["D"] = String(longDiscriminator)
        txt["CM"] = String(commissioningMode.rawValue)
        if let vendorID {
            txt["VP"] = productID.map { "\(vendorID)+\($0)" } ?? String(vendorID)
        }
        if let deviceType { txt["DT"] = String(deviceType) }
        if let deviceName { txt["DN"] = deviceName }
        common.append(to: &txt)
        if let rotatingDeviceID {
            txt["RI"] = rotatingDeviceID.map { byte in
                let digits = String(byte, radix: 16, uppercase: true)
                return digits.count == 1 ? "0" + digits : digits
            }.joined()
        }
        if let pairingHint { txt["PH"] = String(pairingHint) }
        if let pairingInstruction { txt["PI"] = pairingInstruction }
        return txt
    }

    /// Checks the ranges the specification sets.
    public func validate() throws(DNSSDError) {
        guard longDiscriminator <= 0xFFF else {
            throw .invalidParameter(name: "discriminator", reason: "\(longDiscriminator) does not fit 12 bits")
        }
        if productID != nil, vendorID == nil {
            throw .invalidParameter(name: "product ID", reason: "VP needs a vendor ID with the product ID")
        }
        if let deviceName, deviceName.utf8.count > Self.maximumDeviceNameBytes {
            throw .invalidParameter(name: "DN", reason: "\(deviceName.utf8.count) bytes, at most \(Self.maximumDeviceNameBytes)")
        }
        if let pairingInstruction, pairingInstruction.utf8.count > Self.maximumPairingInstructionBytes {
            throw .invalidParameter(
                name: "PI", reason: "\(pairingInstruction.utf8.count) bytes, at most \(Self.maximumPairingInstructionBytes)")
        }
        if let rotatingDeviceID, rotatingDeviceID.count > Self.maximumRotatingDeviceIDBytes {
            throw .invalidParameter(
                name: "RI", reason: "\(rotatingDeviceID.count) bytes, at most \(Self.maximumRotatingDeviceIDBytes)")
        }
        try common.validate()
    }

    /// The service to publish, on `host` (nil: the daemon's own host name and addresses), with
    /// `interfaceIndex` passed through.
    ///
    /// Published without probing, as the operational record is: the instance name is 64 random
    /// bits (Core §4.3.1.1) and a node's host name derives from its own seed, port and
    /// addresses. Probing asks a type ANY question per name, three times, and for each every
    /// daemon on the link walks its whole cache and the publishing daemon all its own records:
    /// that is where stack samples of the daemons of a 10,000-node fleet found them (#43).
    public func service(host: MatterHost? = nil, interfaceIndex: Int32? = nil) throws(DNSSDError) -> DNSSDService {
        try validate()
        return DNSSDService(
            instanceName: instanceName, type: Self.serviceType, port: port, subtypes: subtypes, txt: txt,
            hostName: host?.name, hostAddresses: host?.addresses ?? [], interfaceIndex: interfaceIndex, probe: false)
    }

    /// Decodes a browsed commissionable node. The instance name must start with 16 hex
    /// digits (after a collision Avahi appends ` #2`); D must be present; every other key is
    /// optional but, when present, must be well formed.
    public init(resolved: DNSSDResolvedService) throws(DNSSDError) {
        try self.init(instanceName: resolved.instanceName, txt: resolved.txt, port: resolved.port)
    }

    public init(instanceName: String, txt: DNSSDTXTRecord, port: UInt16 = defaultPort) throws(DNSSDError) {
        let head = String(decoding: instanceName.utf8.prefix(16), as: UTF8.self)
        let rest = instanceName.utf8.dropFirst(16)
        guard let instanceID = MatterTXT.parseHex16(head), rest.isEmpty || rest.first == UInt8(ascii: " ") else {
            throw .malformedRecord(field: "instance name", reason: "'\(instanceName)' does not start with 16 hex digits")
        }
        guard let discriminator = try MatterTXT.decimal(txt, "D", as: UInt16.self) else {
            throw .malformedRecord(field: "D", reason: "missing")
        }
        var mode = CommissioningMode.disabled
        if let raw = try MatterTXT.decimal(txt, "CM", as: UInt8.self) {
            guard let known = CommissioningMode(rawValue: raw) else {
                throw .malformedRecord(field: "CM", reason: "\(raw) is not 0, 1 or 2")
            }
            mode = known
        }
        var vendorID: UInt16?
        var productID: UInt16?
        if let vp = try MatterTXT.text(txt, "VP", maximumBytes: 11) {
            let parts = vp.split(separator: "+", maxSplits: 1, omittingEmptySubsequences: false)
            guard let vendor = parts.first.flatMap({ MatterTXT.parseDecimal($0, as: UInt16.self) }) else {
                throw .malformedRecord(field: "VP", reason: "'\(vp)' is not <vendor> or <vendor>+<product>")
            }
            vendorID = vendor
            if parts.count == 2 {
                guard let product = MatterTXT.parseDecimal(parts[1], as: UInt16.self) else {
                    throw .malformedRecord(field: "VP", reason: "'\(vp)' is not <vendor> or <vendor>+<product>")
                }
                productID = product
            }
        }
        var rotatingDeviceID: [UInt8]?
        if let ri = try MatterTXT.text(txt, "RI", maximumBytes: 2 * Self.maximumRotatingDeviceIDBytes) {
            let digits = Array(ri.utf8)
            guard digits.count % 2 == 0, digits.allSatisfy(MatterTXT.isHexDigit) else {
                throw .malformedRecord(field: "RI", reason: "not an even number of hex digits")
            }
            rotatingDeviceID = stride(from: 0, to: digits.count, by: 2).compactMap { index in
                UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16)
            }
        }
        let common = try MatterTXT.Common(decoding: txt)
        self.init(
            longDiscriminator: discriminator, vendorID: vendorID, productID: productID,
            deviceType: try MatterTXT.decimal(txt, "DT", as: UInt32.self),
            deviceName: try MatterTXT.text(txt, "DN", maximumBytes: Self.maximumDeviceNameBytes),
            commissioningMode: mode, sessionIdleInterval: common.sessionIdleInterval,
            sessionActiveInterval: common.sessionActiveInterval,
            sessionActiveThreshold: common.sessionActiveThreshold, tcpSupport: common.tcpSupport,
            pairingHint: try MatterTXT.decimal(txt, "PH", as: UInt32.self),
            pairingInstruction: try MatterTXT.text(txt, "PI", maximumBytes: Self.maximumPairingInstructionBytes),
            rotatingDeviceID: rotatingDeviceID, port: port, instanceID: instanceID)
        guard discriminator <= 0xFFF else {
            throw .malformedRecord(field: "D", reason: "\(discriminator) does not fit 12 bits")
        }
    }

    private var common: MatterTXT.Common {
        MatterTXT.Common(
            sessionIdleInterval: sessionIdleInterval, sessionActiveInterval: sessionActiveInterval,
            sessionActiveThreshold: sessionActiveThreshold, tcpSupport: tcpSupport)
    }
}
