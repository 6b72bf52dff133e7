import MatterModel
import MatterProtocol
import MatterTLV

/// The client side of the Interaction Model (Matter Core spec chapter 8) over one
/// `InteractionChannel`: Read (wildcards allowed), Write, Invoke and Subscribe, each
/// optionally Timed. The channel is a CASE or PASE session (`SessionChannel`) or a relay
/// or hub connection; the interactions are written once, here. Every wait is bounded by
/// `timeout`, so a silent node ends in `ControllerError.timeout`; a channel's own failure
/// (`InteractionChannelError`, e.g. an offline relay device) is passed on as it is.
public struct InteractionClient: Sendable {
    public let channel: any InteractionChannel
    /// How long to wait for each response message.
    public var timeout: Duration

    public init(channel: any InteractionChannel, timeout: Duration = .seconds(10)) {
        self.channel = channel
        self.timeout = timeout
    }

    /// A client on one secure session of `manager`.
    public init(manager: ExchangeManager, session: SessionHandle, timeout: Duration = .seconds(10)) {
        self.init(channel: SessionChannel(manager: manager, session: session), timeout: timeout)
    }

    // MARK: Read

    /// Reads (spec 8.4); chunked reports come back merged into one message, list chunks
    /// kept as their ListIndex-append items, in order.
    public func read(_ request: ReadRequestMessage) async throws -> ReportDataMessage {
        try await withExchange("Read") { exchange in
            try await send(request, on: exchange, "Read")
            var merged = ReportDataMessage()
            while true {
                let report: ReportDataMessage = try await receive(on: exchange, "Read")
                merged.attributeReports += report.attributeReports
                merged.eventReports += report.eventReports
                if report.moreChunkedMessages || !report.suppressResponse {
                    try await send(StatusResponseMessage(status: .success), on: exchange, "Read")
                }
                if !report.moreChunkedMessages { return merged }
            }
        }
    }

    /// Reads attributes; paths may be wildcards. Attributes that could not be read come
    /// back with a status, not as a thrown error.
    public func read(
        _ paths: [AttributePathIB], dataVersionFilters: [DataVersionFilterIB] = [],
        fabricFiltered: Bool = true
    ) async throws -> [AttributeReport] {
        guard !paths.isEmpty else { throw ControllerError.invalidArgument("a read needs at least one path") }
        let report = try await read(
            ReadRequestMessage(attributeRequests: paths, isFabricFiltered: fabricFiltered, dataVersionFilters: dataVersionFilters))
        var reports: [AttributeReport] = []
        AttributeReport.collect(report.attributeReports, into: &reports)
        return reports
    }

    /// Reads one concrete attribute; throws with its status when it cannot be read.
    public func read(_ path: AttributePath) async throws -> TLVValue {
        let reports = try await read([AttributePathIB(path)])
        guard let report = reports.first(where: { $0.path == path }) else {
            throw ControllerError.invalidResponse("no report for \(path)")
        }
        if let value = report.value { return value }
        throw ControllerError.status(report.status ?? InteractionStatus(.failure), "read \(path)")
    }

    /// Reads events (spec 8.4); paths may be wildcards. Only events numbered at or above
    /// `eventMin` come back, in number order.
    public func readEvents(_ paths: [EventPathIB], eventMin: UInt64? = nil, fabricFiltered: Bool = true) async throws -> [EventReport] {
        guard !paths.isEmpty else { throw ControllerError.invalidArgument("a read needs at least one path") }
        let report = try await read(
            ReadRequestMessage(
                eventRequests: paths, eventFilters: eventMin.map { [EventFilterIB(eventMin: $0)] } ?? [],
                isFabricFiltered: fabricFiltered))
        return EventReport.collect(report.eventReports)
    }

    // MARK: Write

    /// Writes (spec 8.7). With `timed`, a Timed Request opens a window of that length
    /// first (spec 8.7.2.3).
    public func write(_ request: WriteRequestMessage, timed: Duration? = nil) async throws -> WriteResponseMessage {
        var request = request
        if timed != nil { request.timedRequest = true }
        return try await withExchange("Write") { exchange in
            if let timed { try await openTimedWindow(timed, on: exchange) }
            try await send(request, on: exchange, "Write")
            return try await receive(on: exchange, "Write")
        }
    }

    /// Writes attributes; returns each path's status.
    public func write(_ values: [(AttributePath, TLVValue)], timed: Duration? = nil) async throws -> [AttributePath: InteractionStatus] {
        guard !values.isEmpty else { throw ControllerError.invalidArgument("a write needs at least one value") }
        let response = try await write(
            WriteRequestMessage(writeRequests: values.map { AttributeDataIB(path: AttributePathIB($0.0), data: $0.1) }), timed: timed)
        var statuses: [AttributePath: InteractionStatus] = [:]
        for s in response.writeResponses {
            if let path = s.path.concretePath { statuses[path] = s.status.status }
        }
        return statuses
    }

    /// Writes one attribute; throws with the node's status unless it succeeded.
    public func write(_ path: AttributePath, value: TLVValue, timed: Duration? = nil) async throws {
        let statuses = try await write([(path, value)], timed: timed)
        let status = statuses[path] ?? InteractionStatus(.failure)
        guard status.status == .success else { throw ControllerError.status(status, "write \(path)") }
    }

    // MARK: Invoke

    /// Invokes (spec 8.8); chunked responses come back merged. With `suppressResponse`
    /// set in the request, returns an empty response once the request is sent.
    public func invoke(_ request: InvokeRequestMessage, timed: Duration? = nil) async throws -> InvokeResponseMessage {
        var request = request
        if timed != nil { request.timedRequest = true }
        // Named only when it fails: interpolating the path (reflection) cost more than the rest of a
        // relay round trip's client side (issue #42's bench).
        let sent = request
        let what = { sent.invokeRequests.first.map { "command \($0.path)" } ?? "Invoke" }
        return try await withExchange(what()) { exchange in
            if let timed { try await openTimedWindow(timed, on: exchange) }
            try await send(request, on: exchange, what())
            var merged = InvokeResponseMessage(invokeResponses: [])
            if request.suppressResponse { return merged }
            while true {
                let response: InvokeResponseMessage = try await receive(on: exchange, what())
                merged.invokeResponses += response.invokeResponses
                guard response.moreChunkedMessages else { return merged }
                try await send(StatusResponseMessage(status: .success), on: exchange, what())
            }
        }
    }

    /// Invokes one command; throws with the node's status unless it succeeded.
    public func invoke(
        _ path: ConcreteCommandPath, fields: TLVValue = .structure([]),
        timed: Duration? = nil
    ) async throws -> CommandResponse {
        let response = try await invoke(
            InvokeRequestMessage(invokeRequests: [CommandDataIB(path: CommandPathIB(path), fields: fields)]), timed: timed)
        let what = { "command \(path)" }
        guard let first = response.invokeResponses.first else { throw ControllerError.invalidResponse("\(what()): empty InvokeResponse") }
        switch first {
        case .command(let data):
            return CommandResponse(command: data.path.command, fields: data.fields)
        case .status(let s):
            guard s.status.status.status == .success else { throw ControllerError.status(s.status.status, what()) }
            return CommandResponse()
        }
    }

    // MARK: Plumbing

    func withExchange<T: Sendable>(_ what: @autoclosure () -> String, _ body: (any InteractionExchange) async throws -> T) async throws -> T {
        let exchange: any InteractionExchange
        do {
            exchange = try await channel.openExchange()
        } catch {
            throw Self.failure(error, what())
        }
        do {
            let result = try await body(exchange)
            await exchange.close()
            return result
        } catch {
            await exchange.close()
            throw Self.failure(error, what())
        }
    }

    /// A failure during `what`, as callers see it: the channel's own failures as they
    /// are, everything else as a `ControllerError`.
    static func failure(_ error: any Error, _ what: @autoclosure () -> String) -> any Error {
        if error is any InteractionChannelError { return error }
        if let decoding = error as? IMDecodingError { return ControllerError.invalidResponse("\(what()): \(decoding)") }
        return ControllerError.transport(error, what())
    }

    /// TimedRequest, then the node's StatusResponse (spec 8.6, Timed Interaction).
    func openTimedWindow(_ window: Duration, on exchange: any InteractionExchange) async throws {
        let ms = UInt16(clamping: window.components.seconds * 1000 + window.components.attoseconds / 1_000_000_000_000_000)
        try await send(TimedRequestMessage(timeout: ms), on: exchange, "Timed request")
        let _: StatusResponseMessage = try await receive(on: exchange, "Timed request")
    }

    func send<M: InteractionMessage>(_ message: M, on exchange: any InteractionExchange, _ what: @autoclosure () -> String) async throws {
        do {
            try await exchange.send(opcode: M.opcode.rawValue, payload: message.encoded())
        } catch {
            throw Self.failure(error, what())
        }
    }

    /// The next IM message, which must be an `M`. A StatusResponse in its place (or a
    /// non-success one when one is expected) is the node's rejection of the whole action
    /// and is thrown as `.status`.
    func receive<M: InteractionMessage>(on exchange: any InteractionExchange, _ what: @autoclosure () -> String) async throws -> M {
        let message: (opcode: UInt8, payload: [UInt8])
        do {
            message = try await exchange.receive(within: timeout)
        } catch {
            throw Self.failure(error, what())
        }
        return try Self.decode(message, what())
    }

    static func decode<M: InteractionMessage>(_ message: (opcode: UInt8, payload: [UInt8]), _ what: @autoclosure () -> String) throws -> M {
        if message.opcode == InteractionOpcode.statusResponse.rawValue && M.opcode != .statusResponse {
            let status = (try? StatusResponseMessage(payload: message.payload))?.status ?? .failure
            throw ControllerError.status(InteractionStatus(status), what())
        }
        guard message.opcode == M.opcode.rawValue else {
            throw ControllerError.invalidResponse("\(what()): unexpected opcode \(message.opcode)")
        }
        let decoded: M
        do {
            decoded = try M(payload: message.payload)
        } catch {
            throw ControllerError.invalidResponse("\(what()): \(error)")
        }
        if let status = decoded as? StatusResponseMessage, status.status != .success {
            throw ControllerError.status(InteractionStatus(status.status), what())
        }
        return decoded
    }
}
