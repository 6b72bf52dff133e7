import MatterModel
import MatterTLV

/// Global attribute IDs (0xF000...0xFFFE) may be named under a wildcard cluster.
private let globalAttributeRange: ClosedRange<UInt32> = 0xF000...0xFFFE

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
        let scope = ReadScope(
            subject: exchange.subject, isFabricFiltered: request.isFabricFiltered,
            dataVersionFilters: Self.filterTable(request.dataVersionFilters), session: exchange.sessionIdentity)
        let attributeReports = await attributeReports(for: request.attributeRequests, scope: scope)
        let eventReports = await eventReports(for: request.eventRequests, filters: request.eventFilters, subject: scope.subject)
        _ = try await sendReportData(
            attributeReports: attributeReports, eventReports: eventReports, subscriptionID: nil, isRead: true, on: exchange)
    }

    /// Read and subscribe paths may not address list entries, and a wildcard
    /// cluster may only be combined with a global attribute.
    static func validRequestPaths(_ paths: [AttributePathIB]) -> Bool {
        paths.allSatisfy { path in
            guard path.listIndex == nil else { return false }
            if path.cluster == nil, let attribute = path.attribute {
                return globalAttributeRange.contains(attribute.rawValue)
            }
            return true
        }
    }

    static func filterTable(_ filters: [DataVersionFilterIB]) -> [ClusterPath: DataVersion] {
        var table: [ClusterPath: DataVersion] = [:]
        for filter in filters { table[filter.path.clusterPath] = filter.dataVersion }
        return table
    }

    /// Expands request paths into reports. Errors are reported only for
    /// concrete paths; a wildcard expansion silently skips what does not
    /// exist or may not be read (spec chapter 8, Read Interaction).
    func attributeReports(for paths: [AttributePathIB], scope: ReadScope) async -> [AttributeReportIB] {
        var reports: [AttributeReportIB] = []
        for path in paths {
            await expand(path, reportErrors: !path.isWildcard, scope: scope, into: &reports)
        }
        return reports
    }

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
                            .data(AttributeDataIB(dataVersion: versioned.dataVersion, path: AttributePathIB(attributePath), data: versioned.value)))
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
        switch attribute.rawValue {
        case 0xFFFB: flags & WildcardPathFlag.skipAttributeList != 0
        case 0xFFFA: flags & WildcardPathFlag.skipEventList != 0
        case 0xFFF8, 0xFFF9: flags & WildcardPathFlag.skipCommandLists != 0
        default: false
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
            let isLast = index == chunks.count - 1
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
        }
        return true
    }
}
