import MatterModel
import MatterProtocol

// The generated commands (MatterModel's `Clusters.<Name>.Commands`) sent as they are: the
// request encoded from its type, the response decoded into its own.
extension InteractionClient {
    /// Invokes a request answered with a status; a failure status throws.
    public func invoke<Request: ClusterCommand>(_ request: Request, endpoint: EndpointNumber = 0, timed: Duration? = nil) async throws {
        _ = try await invoke(path(of: request, endpoint: endpoint), fields: request.tlv, timed: timed)
    }

    /// Invokes a request answered with a response command and decodes the response; a status,
    /// another command or fields that are not the response's throw.
    public func invoke<Request: ClusterCommandWithResponse>(
        _ request: Request, endpoint: EndpointNumber = 0, timed: Duration? = nil
    ) async throws -> Request.Response {
        let commandPath = path(of: request, endpoint: endpoint)
        let response = try await invoke(commandPath, fields: request.tlv, timed: timed)
        guard response.command == Request.Response.commandID, let fields = response.fields else {
            throw ControllerError.invalidResponse(
                "command \(commandPath): expected \(Request.Response.self), got \(response.command.map { "command \($0)" } ?? "no command")"
            )
        }
        do {
            return try Request.Response(tlv: fields)
        } catch {
            throw ControllerError.invalidResponse("command \(commandPath): \(error)")
        }
    }

    private func path<Request: ClusterCommand>(of request: Request, endpoint: EndpointNumber) -> ConcreteCommandPath {
        ConcreteCommandPath(endpoint: endpoint, cluster: Request.clusterID, command: Request.commandID)
    }
}
