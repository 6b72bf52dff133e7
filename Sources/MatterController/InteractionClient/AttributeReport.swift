import MatterModel
import MatterProtocol
import MatterTLV

/// One attribute's value, or why it could not be read, as a report carried it.
public struct AttributeReport: Sendable, Hashable, CustomStringConvertible {
    public var path: AttributePath
    public var value: TLVValue?
    public var status: InteractionStatus?
    public var dataVersion: DataVersion?

    public init(path: AttributePath, value: TLVValue?, status: InteractionStatus? = nil, dataVersion: DataVersion? = nil) {
        self.path = path
        self.value = value
        self.status = status
        self.dataVersion = dataVersion
    }

    public var description: String {
        if let value { return "\(path) = \(value)" }
        return "\(path): \(status.map(\.description) ?? "no data")"
    }

    /// Turns the IBs of one ReportData into reports. List-entry appends (ListIndex null) are
    /// folded into the preceding whole-list value, as chunked lists arrive (spec 10.6.4.3).
    public static func collect(_ ibs: [AttributeReportIB], into reports: inout [AttributeReport]) {
        for ib in ibs {
            switch ib {
            case .status(let s):
                guard let path = s.path.concretePath else { continue }
                reports.append(AttributeReport(path: path, value: nil, status: s.status.status))
            case .data(let d):
                guard let path = d.path.concretePath else { continue }
                if d.path.listIndex == .append {
                    if let i = reports.lastIndex(where: { $0.path == path }), case .array(var items)? = reports[i].value {
                        items.append(TLVElement(d.data))
                        reports[i].value = .array(items)
                        reports[i].dataVersion = d.dataVersion ?? reports[i].dataVersion
                    } else {
                        reports.append(AttributeReport(path: path, value: .array([TLVElement(d.data)]), dataVersion: d.dataVersion))
                    }
                } else {
                    reports.append(AttributeReport(path: path, value: d.data, dataVersion: d.dataVersion))
                }
            }
        }
    }
}

/// The outcome of one command: its response fields, or success without any.
public struct CommandResponse: Sendable, Hashable {
    /// The response command's ID, when the node answered with one.
    public var command: CommandID?
    /// The response fields (a structure), when the node answered with a command.
    public var fields: TLVValue?

    public init(command: CommandID? = nil, fields: TLVValue? = nil) {
        self.command = command
        self.fields = fields
    }
}
