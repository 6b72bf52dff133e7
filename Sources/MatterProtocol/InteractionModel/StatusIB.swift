import MatterModel
import MatterTLV

/// StatusIB (Matter Core spec 10.6.17): an IM status with an optional
/// cluster-specific status.
public struct StatusIB: InformationBlock, CustomStringConvertible {
    enum Tag {
        static let status: UInt8 = 0
        static let clusterStatus: UInt8 = 1
    }

    public var status: InteractionStatus

    public init(_ status: InteractionStatus) {
        self.status = status
    }

    public init(_ code: StatusCode, clusterStatus: UInt8? = nil) {
        self.status = InteractionStatus(code, clusterStatus: clusterStatus)
    }

    public static let success = StatusIB(.success)

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.status, uint: status.status.rawValue)
        b.add(Tag.clusterStatus, uint: status.clusterStatus)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        let code: UInt8 = try r.requiredUInt(Tag.status, "status")
        status = InteractionStatus(StatusCode(wireValue: code), clusterStatus: try r.uint(Tag.clusterStatus, "clusterStatus"))
    }

    public var description: String { status.description }
}

extension StatusCode {
    /// A status code from the wire; codes this revision does not know are read
    /// as FAILURE, the generic error.
    init(wireValue: UInt8) {
        self = StatusCode(rawValue: wireValue) ?? .failure
    }
}
