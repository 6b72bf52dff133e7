import MatterModel
import MatterProtocol
import MatterTLV

/// The client side of the Interaction Model (Matter Core spec chapter 8) on one secure
/// session: Read (wildcards allowed), Write, Invoke, each optionally Timed. Every wait
/// is bounded by `timeout`, so a silent node ends in `ControllerError.timeout`.
public struct InteractionClient: Sendable {
    public let manager: ExchangeManager
    public let session: SessionHandle
    /// How long to wait for each response message.
    public var timeout: Duration

    public init(manager: ExchangeManager, session: SessionHandle, timeout: Duration = .seconds(10)) {
        self.manager = manager
        self.session = session
        self.timeout = timeout
    }

    // MARK: Read

    /// Reads attributes; paths may be wildcards (spec 8.4). Attributes that could not be
    /// read come back with a status, not as a thrown error.
    public func read(
        _ paths: [AttributePathIB], dataVersionFilters: [DataVersionFilterIB] = [],
        fabricFiltered: Bool = true
    ) async throws -> [AttributeReport] {
        guard !paths.isEmpty else { throw ControllerError.invalidArgument("a read needs at least one path") }
        let request = ReadRequestMessage(
            attributeRequests: paths, isFabricFiltered: fabricFiltered,
            dataVersionFilters: dataVersionFilters)
        return try await withExchange("Read") { exchange in
            try await send(request, on: exchange, "Read")
            var reports: [AttributeReport] = []
            while true {
                let report: ReportDataMessage = try await receive(on: exchange, "Read")
                AttributeReport.collect(report.attributeReports, into: &reports)
                if report.moreChunkedMessages {
                    try await send(StatusResponseMessage(status: .success), on: exchange, "Read")
                    continue
                }
                if !report.suppressResponse {
                    try await send(StatusResponseMessage(status: .success), on: exchange, "Read")
                }
                return reports
            }
        }
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

    // MARK: Write

    /// Writes attributes (spec 8.7); returns each path's status. With `timed`, a Timed
    /// Request opens a window of that length first (spec 8.7.2.3).
    public func write(_ values: [(AttributePath, TLVValue)], timed: Duration? = nil) async throws -> [AttributePath: InteractionStatus] {
        guard !values.isEmpty else { throw ControllerError.invalidArgument("a write needs at least one value") }
        let request = WriteRequestMessage(
            timedRequest: timed != nil,
            writeRequests: values.map { AttributeDataIB(path: AttributePathIB($0.0), data: $0.1) })
        return try await withExchange("Write") { exchange in
            if let timed { try await openTimedWindow(timed, on: exchange) }
            try await send(request, on: exchange, "Write")
            let response: WriteResponseMessage = try await receive(on: exchange, "Write")
            var statuses: [AttributePath: InteractionStatus] = [:]
            for s in response.writeResponses {
                if let path = s.path.concretePath { statuses[path] = s.status.status }
            }
            return statuses
        }
    }

    /// Writes one attribute; throws with the node's status unless it succeeded.
    public func write(_ path: AttributePath, value: TLVValue, timed: Duration? = nil) async throws {
        let statuses = try await write([(path, value)], timed: timed)
        let status = statuses[path] ?? InteractionStatus(.failure)
        guard status.status == .success else { throw ControllerError.status(status, "write \(path)") }
    }

    // MARK: Invoke

    /// Invokes one command (spec 8.8); throws with the node's status unless it succeeded.
    public func invoke(
        _ path: ConcreteCommandPath, fields: TLVValue = .structure([]),
        timed: Duration? = nil
    ) async throws -> CommandResponse {
        let request = InvokeRequestMessage(
            timedRequest: timed != nil,
            invokeRequests: [CommandDataIB(path: CommandPathIB(path), fields: fields)])
        let what = "command \(path)"
        return try await withExchange(what) { exchange in
            if let timed { try await openTimedWindow(timed, on: exchange) }
            try await send(request, on: exchange, what)
            var responses: [InvokeResponseIB] = []
            while true {
                let response: InvokeResponseMessage = try await receive(on: exchange, what)
                responses += response.invokeResponses
                guard response.moreChunkedMessages else { break }
                try await send(StatusResponseMessage(status: .success), on: exchange, what)
            }
            guard let first = responses.first else { throw ControllerError.invalidResponse("\(what): empty InvokeResponse") }
            switch first {
            case .command(let data):
                return CommandResponse(command: data.path.command, fields: data.fields)
            case .status(let s):
                guard s.status.status.status == .success else { throw ControllerError.status(s.status.status, what) }
                return CommandResponse()
            }
        }
    }

    // MARK: Plumbing

    func withExchange<T: Sendable>(_ what: String, _ body: (Exchange) async throws -> T) async throws -> T {
        let exchange: Exchange
        do {
            exchange = try await manager.openExchange(session: session, protocolID: .interactionModel)
        } catch {
            throw ControllerError.transport(error, what)
        }
        do {
            let result = try await body(exchange)
            await exchange.close()
            return result
        } catch {
            await exchange.close()
            throw ControllerError.transport(error, what)
        }
    }

    /// TimedRequest, then the node's StatusResponse (spec 8.6, Timed Interaction).
    func openTimedWindow(_ window: Duration, on exchange: Exchange) async throws {
        let ms = UInt16(clamping: window.components.seconds * 1000 + window.components.attoseconds / 1_000_000_000_000_000)
        try await send(TimedRequestMessage(timeout: ms), on: exchange, "Timed request")
        let _: StatusResponseMessage = try await receive(on: exchange, "Timed request")
    }

    func send<M: InteractionMessage>(_ message: M, on exchange: Exchange, _ what: String) async throws {
        do {
            try await exchange.send(opcode: M.opcode.rawValue, payload: message.encoded(), reliable: true)
        } catch {
            throw ControllerError.transport(error, what)
        }
    }

    /// The next IM message, which must be an `M`. A StatusResponse in its place (or a
    /// non-success one when one is expected) is the node's rejection of the whole action
    /// and is thrown as `.status`.
    func receive<M: InteractionMessage>(on exchange: Exchange, _ what: String) async throws -> M {
        let message: Message
        do {
            message = try await exchange.receive(timeout: timeout)
        } catch {
            throw ControllerError.transport(error, what)
        }
        guard message.protocolID == .interactionModel else {
            throw ControllerError.invalidResponse("\(what): unexpected protocol \(message.protocolID)")
        }
        if message.opcode == InteractionOpcode.statusResponse.rawValue && M.opcode != .statusResponse {
            let status = (try? StatusResponseMessage(payload: message.payload))?.status ?? .failure
            throw ControllerError.status(InteractionStatus(status), what)
        }
        guard message.opcode == M.opcode.rawValue else {
            throw ControllerError.invalidResponse("\(what): unexpected opcode \(message.opcode)")
        }
        let decoded: M
        do {
            decoded = try M(payload: message.payload)
        } catch {
            throw ControllerError.invalidResponse("\(what): \(error)")
        }
        if let status = decoded as? StatusResponseMessage, status.status != .success {
            throw ControllerError.status(InteractionStatus(status.status), what)
        }
        return decoded
    }
}
