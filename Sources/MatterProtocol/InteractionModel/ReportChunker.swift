import MatterModel
import MatterTLV

/// Splits report content into ReportData messages that each fit the payload
/// budget (Matter Core spec chapter 8, chunking of reports). A list attribute too large for
/// one message becomes a replace-all with an empty list followed by one
/// append (ListIndex null) per entry, as connectedhomeip does (spec 10.6.4).
struct ReportChunker {
    /// Bytes available to the report IBs of one message.
    let budget: Int

    init(maxPayloadSize: Int) {
        // The envelope of the largest ReportData: a 4-octet subscription ID,
        // both flags, the revision and two array containers (control, tag, end).
        let envelope =
            ReportDataMessage(subscriptionID: .max, moreChunkedMessages: true, suppressResponse: true)
            .encoded().count + 2 * 3
        budget = max(1, maxPayloadSize - envelope)
    }

    struct Chunk: Equatable {
        var attributeReports: [AttributeReportIB] = []
        var eventReports: [EventReportIB] = []
    }

    private enum Item {
        case attribute(AttributeReportIB)
        case event(EventReportIB)
    }

    func chunks(attributeReports: [AttributeReportIB], eventReports: [EventReportIB]) -> [Chunk] {
        var builder = Builder(chunker: self)
        for report in attributeReports { builder.append(report) }
        for report in eventReports { builder.append(report) }
        return builder.finish()
    }

    /// Packs reports as they come: a chunk is closed once the next report does not fit, so
    /// a closed chunk is never the last message and can be sent while more are produced.
    struct Builder {
        let chunker: ReportChunker
        private var closed: [Chunk] = []
        private var current = Chunk()
        private var used = 0

        init(chunker: ReportChunker) { self.chunker = chunker }

        mutating func append(_ report: AttributeReportIB) {
            let size = chunker.encodedSize(report)
            if size > chunker.budget, case .data(let data) = report, case .array(let entries) = data.data {
                var head = data
                head.data = .array([])
                add(.attribute(.data(head)), chunker.encodedSize(AttributeReportIB.data(head)))
                var appendPath = data.path
                appendPath.listIndex = .append
                for entry in entries {
                    let item = AttributeReportIB.data(AttributeDataIB(dataVersion: data.dataVersion, path: appendPath, data: entry.value))
                    add(.attribute(item), chunker.encodedSize(item))
                }
            } else {
                add(.attribute(report), size)
            }
        }

        mutating func append(_ report: EventReportIB) {
            add(.event(report), chunker.encodedSize(report))
        }

        /// The chunks closed so far (none of them the last), handed over once.
        mutating func takeClosed() -> [Chunk] {
            defer { closed = [] }
            return closed
        }

        /// Every remaining chunk; the last one is the final message (possibly empty).
        mutating func finish() -> [Chunk] {
            var all = takeClosed()
            if used > 0 || all.isEmpty { all.append(current) }
            current = Chunk()
            used = 0
            return all
        }

        private mutating func add(_ item: Item, _ size: Int) {
            if used + size > chunker.budget && used > 0 {
                closed.append(current)
                current = Chunk()
                used = 0
            }
            switch item {
            case .attribute(let r): current.attributeReports.append(r)
            case .event(let r): current.eventReports.append(r)
            }
            used += size
        }
    }

    fileprivate func encodedSize(_ block: some InformationBlock) -> Int {
        block.element().encoded().count
    }
}

/// Packs invoke responses into InvokeResponse messages under the budget.
struct InvokeResponseChunker {
    let budget: Int

    init(maxPayloadSize: Int) {
        let envelope = InvokeResponseMessage(invokeResponses: [], moreChunkedMessages: true).encoded().count
        budget = max(1, maxPayloadSize - envelope)
    }

    func chunks(_ responses: [InvokeResponseIB]) -> [[InvokeResponseIB]] {
        var chunks: [[InvokeResponseIB]] = []
        var current: [InvokeResponseIB] = []
        var used = 0
        for response in responses {
            let size = response.element().encoded().count
            if used + size > budget && !current.isEmpty {
                chunks.append(current)
                current = []
                used = 0
            }
            current.append(response)
            used += size
        }
        if !current.isEmpty || chunks.isEmpty { chunks.append(current) }
        return chunks
    }
}
