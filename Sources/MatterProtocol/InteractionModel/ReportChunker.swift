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
        let envelope = ReportDataMessage(subscriptionID: .max, moreChunkedMessages: true, suppressResponse: true)
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
        var items: [(Item, Int)] = []
        for report in attributeReports {
            let size = encodedSize(report)
            if size > budget, case .data(let data) = report, case .array(let entries) = data.data {
                var head = data
                head.data = .array([])
                items.append((.attribute(.data(head)), encodedSize(AttributeReportIB.data(head))))
                var appendPath = data.path
                appendPath.listIndex = .append
                for entry in entries {
                    let item = AttributeReportIB.data(AttributeDataIB(dataVersion: data.dataVersion, path: appendPath, data: entry.value))
                    items.append((.attribute(item), encodedSize(item)))
                }
            } else {
                items.append((.attribute(report), size))
            }
        }
        for report in eventReports {
            items.append((.event(report), encodedSize(report)))
        }

        var chunks: [Chunk] = []
        var current = Chunk()
        var used = 0
        for (item, size) in items {
            if used + size > budget && used > 0 {
                chunks.append(current)
                current = Chunk()
                used = 0
            }
            switch item {
            case .attribute(let r): current.attributeReports.append(r)
            case .event(let r): current.eventReports.append(r)
            }
            used += size
        }
        if used > 0 || chunks.isEmpty { chunks.append(current) }
        return chunks
    }

    private func encodedSize(_ block: some InformationBlock) -> Int {
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
