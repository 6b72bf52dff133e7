import MatterModel
import MatterTLV

extension InteractionServer {
    /// A Write interaction (spec chapter 8), possibly in chunks: each WriteRequest
    /// chunk gets its WriteResponse before the client sends the next.
    func handleWrite(_ payload: [UInt8], on exchange: any IMExchange, timed: Bool) async throws {
        var payload = payload
        while true {
            let request: WriteRequestMessage
            do {
                request = try WriteRequestMessage(payload: payload)
            } catch {
                logger.debug("malformed WriteRequest: \(error)")
                return try await reply(.invalidAction, on: exchange)
            }
            guard request.timedRequest == timed else {
                return try await reply(.timedRequestMismatch, on: exchange)
            }
            // Unicast writes name concrete paths only.
            guard request.writeRequests.allSatisfy({ $0.path.concretePath != nil }) else {
                return try await reply(.invalidAction, on: exchange)
            }
            let context = InteractionContext(subject: exchange.subject, isTimed: timed, session: exchange.sessionIdentity)
            let statuses = await applyWrites(request.writeRequests, context: context)
            await provider.persistChanges()
            let response = WriteResponseMessage(writeResponses: statuses, interactionModelRevision: configuration.interactionModelRevision)
            guard request.moreChunkedMessages else {
                if !request.suppressResponse { try await exchange.send(response) }
                return
            }
            try await exchange.send(response)
            let (opcode, next) = try await exchange.receive()
            guard opcode == InteractionOpcode.writeRequest.rawValue else {
                return try await reply(.invalidAction, on: exchange)
            }
            payload = next
        }
    }

    /// Applies the AttributeDataIBs of one WriteRequest in order. A list
    /// written as a replace-all followed by appends to the same path (how
    /// large lists are chunked, spec 10.6.4) reaches the provider as one
    /// replace, so the node validates and versions the final list once.
    func applyWrites(_ writes: [AttributeDataIB], context: InteractionContext) async -> [AttributeStatusIB] {
        var statuses: [AttributeStatusIB] = []
        var index = 0
        while index < writes.count {
            let write = writes[index]
            index += 1
            guard let path = write.path.concretePath else { continue }
            let operation: AttributeWriteOperation
            let statusPath: AttributePathIB
            switch write.path.listIndex {
            case .none:
                statusPath = AttributePathIB(path)
                if case .array(var entries) = write.data {
                    while index < writes.count, writes[index].path.listIndex == .append,
                        writes[index].path.concretePath == path
                    {
                        entries.append(TLVElement(writes[index].data))
                        index += 1
                    }
                    operation = .replace(.array(entries))
                } else {
                    operation = .replace(write.data)
                }
            case .append:
                statusPath = AttributePathIB(path, listIndex: .append)
                operation = .appendItem(write.data)
            case .index:
                // Addressing one list entry by index is not part of this revision.
                statuses.append(AttributeStatusIB(path: write.path, status: StatusIB(.invalidAction)))
                continue
            }
            let status = await checkedWrite(path, operation, dataVersion: write.dataVersion, context: context)
            statuses.append(AttributeStatusIB(path: statusPath, status: StatusIB(status)))
        }
        return statuses
    }

    /// The checks before a write reaches the data, in connectedhomeip's order.
    private func checkedWrite(
        _ path: AttributePath, _ operation: AttributeWriteOperation, dataVersion: DataVersion?, context: InteractionContext
    ) async -> InteractionStatus {
        let clusterPath = ClusterPath(endpoint: path.endpoint, cluster: path.cluster)
        guard await provider.endpoints().contains(path.endpoint) else { return InteractionStatus(.unsupportedEndpoint) }
        guard await provider.clusters(on: path.endpoint).contains(path.cluster) else {
            return InteractionStatus(.unsupportedCluster)
        }
        guard let metadata = await provider.attributes(of: clusterPath).first(where: { $0.id == path.attribute }) else {
            return InteractionStatus(.unsupportedAttribute)
        }
        guard let writePrivilege = metadata.writePrivilege else { return InteractionStatus(.unsupportedWrite) }
        guard await provider.checkAccess(context.subject, to: clusterPath, privilege: writePrivilege) else {
            return InteractionStatus(.unsupportedAccess)
        }
        if metadata.requiresTimedWrite && !context.isTimed { return InteractionStatus(.needsTimedInteraction) }
        if metadata.isFabricScoped && context.subject.fabricIndex == 0 { return InteractionStatus(.unsupportedAccess) }
        if let dataVersion, await provider.dataVersion(of: clusterPath) != dataVersion {
            return InteractionStatus(.dataVersionMismatch)
        }
        return await provider.write(path, operation, context: context)
    }
}
