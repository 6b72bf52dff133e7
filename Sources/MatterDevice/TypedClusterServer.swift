import MatterModel

/// A cluster server whose commands arrive typed: it conforms to its cluster's generated
/// `<Name>Handler` (Generated/, scripts/matter-codegen.py), implements a method per command
/// it handles, and never reads a field by its tag number. Servers that still switch over
/// `invoke` themselves keep plain `ClusterServer`.
protocol TypedClusterServer: StandardClusterServer {
    /// What a command whose fields do not decode is answered with. By default the status the
    /// error says (Core spec 8.8.3.2: INVALID_COMMAND for a missing field or a wrong type,
    /// CONSTRAINT_ERROR for a value outside its type); a cluster whose spec asks otherwise
    /// (CertificateChainRequest's unknown type is INVALID_COMMAND, SetRegulatoryConfig's unknown
    /// location a response with ValueOutsideRange) says so here, from the fields as they came.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult
}

/// What a command answered with a response command returns: the response, or a status.
enum CommandReply<Response: ClusterCommand> {
    case response(Response)
    case status(InteractionStatus)

    static func failure(_ code: StatusCode) -> CommandReply { .status(InteractionStatus(code)) }
}

extension TypedClusterServer {
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        .failure(error.status)
    }

    /// Decodes a request answered with a status and calls its method.
    func answerStatus<Request: ClusterCommand>(
        _ fields: CommandFields, _ command: CommandID, _ context: ClusterContext, _ call: (Request) -> InteractionStatus
    ) -> InvokeResult {
        switch decode(Request.self, fields, command, context) {
        case .success(let request): .status(call(request))
        case .failure(let error): reply(to: error, decoding: command, fields: fields, context: context)
        }
    }

    /// Decodes a request answered with a response command, calls its method and encodes the response.
    func answerResponse<Request: ClusterCommand, Response: ClusterCommand>(
        _ fields: CommandFields, _ command: CommandID, _ context: ClusterContext, _ call: (Request) -> CommandReply<Response>
    ) -> InvokeResult {
        switch decode(Request.self, fields, command, context) {
        case .success(let request):
            switch call(request) {
            case .response(let response): .response(Response.commandID, response.tlv)
            case .status(let status): .status(status)
            }
        case .failure(let error): reply(to: error, decoding: command, fields: fields, context: context)
        }
    }

    private func decode<Request: ClusterCommand>(
        _ type: Request.Type, _ fields: CommandFields, _ command: CommandID, _ context: ClusterContext
    ) -> Result<Request, TLVDecodingError> {
        do {
            return .success(try Request(tlv: fields.value))
        } catch {
            let failure = error as? TLVDecodingError ?? TLVDecodingError(.wrongType(expected: "the command's fields", found: "\(error)"))
            context.logger.debug("invoke \(context.cluster)/\(command) rejected: \(failure)")
            return .failure(failure)
        }
    }
}
