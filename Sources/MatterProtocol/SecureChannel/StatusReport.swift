// StatusReport (Matter Core spec Appendix D, 4.11.1.3): general code (UInt16 LE),
// fully qualified protocol ID (UInt32 LE), protocol code (UInt16 LE), protocol data.

/// The general status codes (spec Table D-2).
public enum GeneralStatusCode: UInt16, Sendable, Hashable {
    case success = 0
    case failure = 1
    case badPrecondition = 2
    case outOfRange = 3
    case badRequest = 4
    case unsupported = 5
    case unexpected = 6
    case resourceExhausted = 7
    case busy = 8
    case timeout = 9
    case `continue` = 10
    case aborted = 11
    case invalidArgument = 12
    case notFound = 13
    case alreadyExists = 14
    case permissionDenied = 15
    case dataLoss = 16
    case messageTooLarge = 17
}

/// Secure Channel protocol codes (spec 4.11.1.3, Table 20).
public enum SecureChannelStatusCode: UInt16, Sendable, Hashable {
    case sessionEstablishmentSuccess = 0
    case noSharedTrustRoots = 1
    case invalidParameter = 2
    case closeSession = 3
    case busy = 4
    case requiredCATMismatch = 5
}

/// A decoded StatusReport.
public struct StatusReport: Sendable, Hashable, CustomStringConvertible {
    /// Kept raw so unknown codes round-trip.
    public var generalCode: UInt16
    public var protocolID: ProtocolID
    public var protocolCode: UInt16
    public var protocolData: [UInt8]

    public init(generalCode: UInt16, protocolID: ProtocolID, protocolCode: UInt16, protocolData: [UInt8] = []) {
        self.generalCode = generalCode
        self.protocolID = protocolID
        self.protocolCode = protocolCode
        self.protocolData = protocolData
    }

    public init(general: GeneralStatusCode, secureChannel code: SecureChannelStatusCode, protocolData: [UInt8] = []) {
        self.init(
            generalCode: general.rawValue, protocolID: .secureChannel, protocolCode: code.rawValue,
            protocolData: protocolData)
    }

    public var general: GeneralStatusCode? { GeneralStatusCode(rawValue: generalCode) }

    /// The Secure Channel protocol code, when this report is about the Secure Channel protocol.
    public var secureChannelCode: SecureChannelStatusCode? {
        protocolID == .secureChannel ? SecureChannelStatusCode(rawValue: protocolCode) : nil
    }

    public static let sessionEstablishmentSuccess = StatusReport(general: .success, secureChannel: .sessionEstablishmentSuccess)
    public static let closeSession = StatusReport(general: .success, secureChannel: .closeSession)
    public static let invalidParameter = StatusReport(general: .failure, secureChannel: .invalidParameter)
    public static let noSharedTrustRoots = StatusReport(general: .failure, secureChannel: .noSharedTrustRoots)

    /// BUSY, with the minimum time the initiator should wait before retrying (spec 4.11.1.4).
    public static func busy(retryAfter: Duration) -> StatusReport {
        var data: [UInt8] = []
        data.appendLE(UInt16(clamping: SessionParameters.milliseconds(retryAfter)))
        return StatusReport(general: .busy, secureChannel: .busy, protocolData: data)
    }

    public var isSuccess: Bool { generalCode == GeneralStatusCode.success.rawValue }

    public func encoded() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(8 + protocolData.count)
        out.appendLE(generalCode)
        out.appendLE(protocolID.fullyQualified)
        out.appendLE(protocolCode)
        out.append(contentsOf: protocolData)
        return out
    }

    public static func decode(_ bytes: [UInt8]) throws(MessageCodecError) -> StatusReport {
        var c = ByteCursor(bytes)
        let general = try c.readUInt16("general code")
        let protocolID = ProtocolID(fullyQualified: try c.readUInt32("protocol ID"))
        let code = try c.readUInt16("protocol code")
        return StatusReport(generalCode: general, protocolID: protocolID, protocolCode: code, protocolData: c.readRest())
    }

    public var description: String {
        let g = general.map { "\($0)" } ?? "\(generalCode)"
        let p = secureChannelCode.map { "\($0)" } ?? "\(protocolCode)"
        return "StatusReport(\(g), protocol \(protocolID), \(p))"
    }
}
