import MatterModel
import MatterTLV

/// WildcardPathFlags bits honoured during expansion (spec 10.6.2).
private enum WildcardPathFlag {
    static let skipRootNode: UInt32 = 1 << 0
    static let skipAttributeList: UInt32 = 1 << 2
    static let skipEventList: UInt32 = 1 << 3
    static let skipCommandLists: UInt32 = 1 << 4
}

/// Everything a Read or Subscribe needs to turn paths into reports.
struct ReadScope {
    var subject: SubjectDescriptor
    var isFabricFiltered: Bool
    /// Clusters whose data the client already holds at this version.
    var dataVersionFilters: [ClusterPath: DataVersion] = [:]
    var session: InteractionSessionIdentity? = nil

    var context: AttributeReadContext {
        AttributeReadContext(subject: subject, isFabricFiltered: isFabricFiltered, session: session)
    }
}

extension InteractionServer {
    func handleRead(_ payload: [UInt8], on exchange: any IMExchange) async throws {
        let request: ReadRequestMessage
        do {
            request = try ReadRequestMessage(payload: payload)
        } catch {
            logger.debug("malformed ReadRequest: \(error)")
            return try await reply(.invalidAction, on: exchange)
        }
        guard !(request.attributeRequests.isEmpty && request.eventRequests.isEmpty),
            Self.validRequestPaths(request.attributeRequests)
        else {
            return try await reply(.invalidAction, on: exchange)
        }
        guard request.attributeRequests.count + request.eventRequests.count <= configuration.maxPathsPerRequest else {
            return try await reply(.pathsExhausted, on: exchange)
        }
        let scope = ReadScope(
            subject: exchange.subject, isFabricFiltered: request.isFabricFiltered,
            dataVersionFilters: Self.filterTable(request.dataVersionFilters), session: exchange.sessionIdentity)
        _ = try await sendReports(
            for: request.attributeRequests, scope: scope,
            events: { await self.eventReports(for: request.eventRequests, filters: request.eventFilters, subject: scope.subject) },
            subscriptionID: nil, isRead: true, on: exchange)
    }

    /// Expands the paths one at a time and sends each chunk as soon as a later report shows
    /// it is not the last, each acknowledged before the next is made: a read holds one
    /// path's reports and one chunk, however much it names (spec 8.4 chunking). Returns
    /// false when the peer did not acknowledge a chunk.
    func sendReports(
        for paths: [AttributePathIB], scope: ReadScope, events: () async -> [EventReportIB],
        subscriptionID: UInt32?, isRead: Bool, on exchange: any IMExchange
    ) async throws -> Bool {
        var builder = ReportChunker.Builder(chunker: ReportChunker(maxPayloadSize: configuration.maxPayloadSize))
        for path in paths {
            var reports: [AttributeReportIB] = []
            await expand(path, reportErrors: !path.isWildcard, scope: scope, into: &reports)
            for report in reports { builder.append(report) }
            for chunk in builder.takeClosed() {
                guard try await send(chunk, isLast: false, subscriptionID: subscriptionID, isRead: isRead, on: exchange) else {
                    return false
                }
            }
        }
        for report in await events() { builder.append(report) }
        let rest = builder.finish()
        for (index, chunk) in rest.enumerated() {
            guard try await send(chunk, isLast: index == rest.count - 1, subscriptionID: subscriptionID, isRead: isRead, on: exchange)
            else { return false }
        }
        return true
    }

    /// Read and subscribe paths may not address list entries, and a wildcard
    /// cluster may only be combined with a global attribute.
    static func validRequestPaths(_ paths: [AttributePathIB]) -> Bool {
        paths.allSatisfy { path in
            guard path.listIndex == nil else { return false }
            if path.cluster == nil, let attribute = path.attribute {
                // Only a global attribute's ID may be named under a wildcard cluster.
                return attribute.isGlobal
            }
            return true
        }
    }

    static func filterTable(_ filters: [DataVersionFilterIB]) -> [ClusterPath: DataVersion] {
        var table: [ClusterPath: DataVersion] = [:]
        for filter in filters { table[filter.path.clusterPath] = filter.dataVersion }
        return table
    }

    /// Expands one request path into reports. Errors are reported only for
    /// concrete paths; a wildcard expansion silently skips what does not
    /// exist or may not be read (spec chapter 8, Read Interaction).
    func expand(_ path: AttributePathIB, reportErrors: Bool, scope: ReadScope, into reports: inout [AttributeReportIB]) async {
        func fail(_ status: StatusCode) {
            guard reportErrors, let concrete = path.concretePath else { return }
            reports.append(.status(AttributeStatusIB(path: AttributePathIB(concrete), status: StatusIB(status))))
        }
        let flags = path.wildcardPathFlags ?? 0
        let allEndpoints = await provider.endpoints()
        let endpoints: [EndpointNumber]
        if let endpoint = path.endpoint {
            guard allEndpoints.contains(endpoint) else { return fail(.unsupportedEndpoint) }
            endpoints = [endpoint]
        } else {
            endpoints = flags & WildcardPathFlag.skipRootNode != 0 ? allEndpoints.filter { $0 != 0 } : allEndpoints
        }
        for endpoint in endpoints {
            let present = await provider.clusters(on: endpoint)
            let clusters: [ClusterID]
            if let cluster = path.cluster {
                guard present.contains(cluster) else {
                    fail(.unsupportedCluster)
                    continue
                }
                clusters = [cluster]
            } else {
                clusters = present
            }
            for cluster in clusters {
                let clusterPath = ClusterPath(endpoint: endpoint, cluster: cluster)
                if let known = scope.dataVersionFilters[clusterPath], await provider.dataVersion(of: clusterPath) == known {
                    continue
                }
                let attributes = await provider.attributes(of: clusterPath)
                let targets: [AttributeMetadata]
                if let attribute = path.attribute {
                    guard let metadata = attributes.first(where: { $0.id == attribute }) else {
                        fail(.unsupportedAttribute)
                        continue
                    }
                    targets = [metadata]
                } else {
                    targets = attributes.filter { !Self.skippedByFlags($0.id, flags) }
                }
                for metadata in targets {
                    guard await provider.checkAccess(scope.subject, to: clusterPath, privilege: metadata.readPrivilege) else {
                        fail(.unsupportedAccess)
                        continue
                    }
                    let attributePath = AttributePath(endpoint: endpoint, cluster: cluster, attribute: metadata.id)
                    switch await provider.read(attributePath, context: scope.context) {
                    case .success(let versioned):
                        reports.append(
                            .data(
                                AttributeDataIB(
                                    dataVersion: versioned.dataVersion, path: AttributePathIB(attributePath), data: versioned.value)))
                    case .failure(let status):
                        if reportErrors {
                            reports.append(.status(AttributeStatusIB(path: AttributePathIB(attributePath), status: StatusIB(status))))
                        }
                    }
                }
            }
        }
    }

    private static func skippedByFlags(_ attribute: AttributeID, _ flags: UInt32) -> Bool {
        typealias Global = Clusters.Global.Attribute
        switch attribute {
        case Global.attributeList: return flags & WildcardPathFlag.skipAttributeList != 0
        case Global.generatedCommandList, Global.acceptedCommandList: return flags & WildcardPathFlag.skipCommandLists != 0
        // EventList, which the 1.4 model no longer has; the flag still names it.
        case Clusters.Global.RetiredAttribute.eventList: return flags & WildcardPathFlag.skipEventList != 0
        default: return false
        }
    }

    func eventReports(for paths: [EventPathIB], filters: [EventFilterIB], subject: SubjectDescriptor) async -> [EventReportIB] {
        guard !paths.isEmpty else { return [] }
        let minimum = filters.map(\.eventMin).max()
        return await provider.events(matching: paths, minimumEventNumber: minimum, subject: subject)
    }

    /// Sends reports as one or more ReportData messages. Between chunks, and
    /// after every message of a subscription, the peer must acknowledge with a
    /// SUCCESS StatusResponse; returns false when it does not. The last
    /// message of a Read suppresses the response.
    func sendReportData(
        attributeReports: [AttributeReportIB], eventReports: [EventReportIB], subscriptionID: UInt32?,
        isRead: Bool, on exchange: any IMExchange
    ) async throws -> Bool {
        let chunks = ReportChunker(maxPayloadSize: configuration.maxPayloadSize)
            .chunks(attributeReports: attributeReports, eventReports: eventReports)
        for (index, chunk) in chunks.enumerated() {
            guard
                try await send(
                    chunk, isLast: index == chunks.count - 1, subscriptionID: subscriptionID, isRead: isRead,
                    on: exchange)
            else { return false }
        }
        return true
    }

    /// One ReportData message; unless it ends a Read, waits for the peer's StatusResponse.
    private func send(
        _ chunk: ReportChunker.Chunk, isLast: Bool, subscriptionID: UInt32?, isRead: Bool,
        on exchange: any IMExchange
    ) async throws -> Bool {
        let message = ReportDataMessage(
            subscriptionID: subscriptionID, attributeReports: chunk.attributeReports, eventReports: chunk.eventReports,
            moreChunkedMessages: !isLast, suppressResponse: isRead && isLast,
            interactionModelRevision: configuration.interactionModelRevision)
        let payload = message.encoded()
        if payload.count > configuration.maxPayloadSize {
            logger.warning("report of \(payload.count) bytes exceeds the \(configuration.maxPayloadSize)-byte budget")
        }
        try await exchange.send(opcode: InteractionOpcode.reportData.rawValue, payload: payload)
        if message.suppressResponse { return true }
        let status = try await awaitStatusResponse(on: exchange)
        guard status == .success else {
            logger.debug("report not acknowledged: \(status)")
            return false
        }
        return true
    }
}
