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

/// One event a node reported (spec 8.4, 10.6.9), or why an event path could not be read.
public struct EventReport: Sendable, Hashable, CustomStringConvertible {
    public var path: EventPath
    /// The node's event number: monotonic for the node, across its restarts.
    public var number: UInt64
    public var priority: EventDataIB.Priority
    /// Milliseconds since the Unix epoch, when the node knows the time.
    public var epochTimestamp: UInt64?
    /// Milliseconds since the node booted, when it does not.
    public var systemTimestamp: UInt64?
    /// The event's fields (a structure).
    public var data: TLVValue?

    public init(
        path: EventPath, number: UInt64, priority: EventDataIB.Priority, epochTimestamp: UInt64? = nil,
        systemTimestamp: UInt64? = nil, data: TLVValue? = nil
    ) {
        self.path = path
        self.number = number
        self.priority = priority
        self.epochTimestamp = epochTimestamp
        self.systemTimestamp = systemTimestamp
        self.data = data
    }

    public var description: String { "#\(number) \(path) \(data.map { "\($0)" } ?? "")" }

    /// The events of one ReportData, in number order. Delta timestamps (spec 10.6.9) are
    /// resolved against the previous event's; an event status names a path the node
    /// could not read and carries no event, so it is left out.
    public static func collect(_ ibs: [EventReportIB]) -> [EventReport] {
        var events: [EventReport] = []
        var lastEpoch: UInt64?
        var lastSystem: UInt64?
        for ib in ibs {
            guard case .data(let d) = ib, let path = d.path.concretePath else { continue }
            let epoch = d.epochTimestamp ?? d.deltaEpochTimestamp.flatMap { delta in lastEpoch.map { $0 + delta } }
            let system = d.systemTimestamp ?? d.deltaSystemTimestamp.flatMap { delta in lastSystem.map { $0 + delta } }
            lastEpoch = epoch ?? lastEpoch
            lastSystem = system ?? lastSystem
            events.append(
                EventReport(
                    path: path, number: d.eventNumber, priority: d.priority, epochTimestamp: epoch, systemTimestamp: system,
                    data: d.data))
        }
        return events.sorted { $0.number < $1.number }
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
