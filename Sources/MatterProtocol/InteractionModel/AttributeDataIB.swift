import MatterModel
import MatterTLV

/// AttributeDataIB (Matter Core spec 10.6.4): one attribute's value, or one
/// list entry when the path carries a ListIndex.
public struct AttributeDataIB: InformationBlock {
    enum Tag {
        static let dataVersion: UInt8 = 0
        static let path: UInt8 = 1
        static let data: UInt8 = 2
    }

    public var dataVersion: DataVersion?
    public var path: AttributePathIB
    public var data: TLVValue

    public init(dataVersion: DataVersion? = nil, path: AttributePathIB, data: TLVValue) {
        self.dataVersion = dataVersion
        self.path = path
        self.data = data
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.dataVersion, uint: dataVersion)
        b.add(Tag.path, block: path)
        b.add(Tag.data, data)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        dataVersion = try r.uint(Tag.dataVersion, "dataVersion")
        path = try r.requiredBlock(Tag.path, "path")
        guard let data = r.value(Tag.data) else { throw IMDecodingError(.missingField, field: "data") }
        self.data = data
    }
}

/// AttributeStatusIB (spec 10.6.16): the outcome for one attribute path.
public struct AttributeStatusIB: InformationBlock {
    enum Tag {
        static let path: UInt8 = 0
        static let status: UInt8 = 1
    }

    public var path: AttributePathIB
    public var status: StatusIB

    public init(path: AttributePathIB, status: StatusIB) {
        self.path = path
        self.status = status
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        b.add(Tag.path, block: path)
        b.add(Tag.status, block: status)
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        path = try r.requiredBlock(Tag.path, "path")
        status = try r.requiredBlock(Tag.status, "status")
    }
}

/// AttributeReportIB (spec 10.6.5): either a status or data, never both.
public enum AttributeReportIB: InformationBlock {
    case status(AttributeStatusIB)
    case data(AttributeDataIB)

    enum Tag {
        static let attributeStatus: UInt8 = 0
        static let attributeData: UInt8 = 1
    }

    public var tlvValue: TLVValue {
        var b = IBBuilder()
        switch self {
        case .status(let s): b.add(Tag.attributeStatus, block: s)
        case .data(let d): b.add(Tag.attributeData, block: d)
        }
        return b.structure
    }

    public init(tlvValue: TLVValue) throws(IMDecodingError) {
        let r = try IBReader(tlvValue, .structure)
        let status: AttributeStatusIB? = try r.block(Tag.attributeStatus, "attributeStatus")
        let data: AttributeDataIB? = try r.block(Tag.attributeData, "attributeData")
        switch (status, data) {
        case (let s?, nil): self = .status(s)
        case (nil, let d?): self = .data(d)
        default:
            throw IMDecodingError(.invalidCombination("needs exactly one of attributeStatus and attributeData"), field: "")
        }
    }
}
