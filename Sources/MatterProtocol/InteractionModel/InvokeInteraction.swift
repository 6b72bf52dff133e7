import MatterModel
import MatterTLV

extension InteractionServer {
    /// An Invoke interaction (spec chapter 8): one or more commands, answered in
    /// order with responses or statuses, chunked when they do not fit.
    func handleInvoke(_ payload: [UInt8], on exchange: any IMExchange, timed: Bool) async throws {
        let request: InvokeRequestMessage
        do {
            request = try InvokeRequestMessage(payload: payload)
        } catch {
            logger.debug("malformed InvokeRequest: \(error)")
            return try await reply(.invalidAction, on: exchange)
        }
        guard request.timedRequest == timed else {
            return try await reply(.timedRequestMismatch, on: exchange)
        }
        guard Self.validBatch(request.invokeRequests, maxPaths: configuration.maxPathsPerInvoke) else {
            return try await reply(.invalidAction, on: exchange)
        }
        let context = InteractionContext(subject: exchange.subject, isTimed: timed, session: exchange.sessionIdentity)
        var responses: [InvokeResponseIB] = []
        for command in request.invokeRequests {
            guard let path = command.path.concretePath else { continue }
            responses.append(await invoke(command, at: path, context: context))
        }
        await provider.persistChanges()
        if request.suppressResponse { return }

        let chunks = InvokeResponseChunker(maxPayloadSize: configuration.maxPayloadSize).chunks(responses)
        for (index, chunk) in chunks.enumerated() {
            let isLast = index == chunks.count - 1
            try await exchange.send(
                InvokeResponseMessage(
                    invokeResponses: chunk, moreChunkedMessages: !isLast,
                    interactionModelRevision: configuration.interactionModelRevision))
            if isLast { break }
            guard try await awaitStatusResponse(on: exchange) == .success else { return }
        }
    }

    /// A batch is 1...MaxPathsPerInvoke concrete commands; with more than one,
    /// every command carries a distinct CommandRef and paths do not repeat.
    static func validBatch(_ commands: [CommandDataIB], maxPaths: Int) -> Bool {
        guard !commands.isEmpty, commands.count <= maxPaths,
            commands.allSatisfy({ $0.path.concretePath != nil })
        else { return false }
        guard commands.count > 1 else { return true }
        let refs = commands.compactMap(\.ref)
        let paths = commands.compactMap(\.path.concretePath)
        return refs.count == commands.count && Set(refs).count == refs.count && Set(paths).count == paths.count
    }

    /// Checks then runs one command, in connectedhomeip's order.
    private func invoke(_ command: CommandDataIB, at path: ConcreteCommandPath, context: InteractionContext) async -> InvokeResponseIB {
        func status(_ code: StatusCode) -> InvokeResponseIB {
            .status(CommandStatusIB(path: command.path, status: StatusIB(code), ref: command.ref))
        }
        guard await provider.endpoints().contains(path.endpoint) else { return status(.unsupportedEndpoint) }
        guard await provider.clusters(on: path.endpoint).contains(path.cluster) else { return status(.unsupportedCluster) }
        guard let metadata = await provider.commands(of: path.clusterPath).first(where: { $0.id == path.command }) else {
            return status(.unsupportedCommand)
        }
        guard await provider.checkAccess(context.subject, to: path.clusterPath, privilege: metadata.invokePrivilege) else {
            return status(.unsupportedAccess)
        }
        if metadata.requiresTimedInvoke && !context.isTimed { return status(.needsTimedInteraction) }
        if metadata.isFabricScoped && context.subject.fabricIndex == 0 { return status(.unsupportedAccess) }

        switch await provider.invoke(path, fields: command.fields, context: context) {
        case .status(let result):
            return .status(CommandStatusIB(path: command.path, status: StatusIB(result), ref: command.ref))
        case .response(let responseID, let fields):
            let responsePath = CommandPathIB(endpoint: path.endpoint, cluster: path.cluster, command: responseID)
            return .command(CommandDataIB(path: responsePath, fields: fields, ref: command.ref))
        }
    }
}
