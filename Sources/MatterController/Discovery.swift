import Foundation
import MatterDNSSD
import MatterModel
import MatterProtocol
import NIOCore

/// A node advertising `_matterc._udp` (spec 4.3.1), with where to reach it.
public struct CommissionableNode: Sendable, Hashable {
    public var record: MatterCommissionableRecord
    public var addresses: [SocketAddress]
    public var hostName: String
}

/// DNS-SD discovery over Avahi: commissionable nodes (`_matterc._udp`, optionally by
/// discriminator) and operational nodes (`_matter._tcp`).
public final class DNSSDDiscovery: OperationalResolver {
    let browser: DNSSDBrowser

    /// Throws when the system D-Bus (and so Avahi) cannot be reached.
    public init() throws {
        browser = try DNSSDBrowser()
    }

    /// Commissionable nodes seen within `duration`; with a discriminator, only those whose
    /// long (or, for short codes, short) discriminator matches.
    public func commissionableNodes(
        duration: Duration = .seconds(3), longDiscriminator: UInt16? = nil,
        shortDiscriminator: UInt8? = nil
    ) async throws -> [CommissionableNode] {
        let events = try browser.browse(type: MatterCommissionableRecord.serviceType)
        let found = FoundNodes()
        let collector = Task {
            for await event in events {
                switch event {
                case .added(let s), .updated(let s):
                    guard let record = try? MatterCommissionableRecord(resolved: s) else { continue }
                    if let d = longDiscriminator, record.longDiscriminator != d { continue }
                    if let d = shortDiscriminator, record.shortDiscriminator != d { continue }
                    let addresses = s.addresses.compactMap { try? SocketAddress(ipAddress: $0.text, port: Int(s.port)) }
                    await found.put(s.instanceName, CommissionableNode(record: record, addresses: addresses, hostName: s.hostName))
                case .removed(let name):
                    await found.remove(name)
                }
            }
        }
        // real time: external: browsing listens to the Avahi daemon for the given time.
        try? await Task.sleep(for: duration)
        collector.cancel()
        return await found.all()
    }

    public func resolve(compressedFabricID: UInt64, nodeID: NodeID) async throws -> SocketAddress {
        let name = MatterOperationalRecord.instanceName(compressedFabricID: compressedFabricID, nodeID: nodeID)
        let service = try await browser.resolve(instanceName: name, type: MatterOperationalRecord.serviceType, timeout: .seconds(5))
        for address in service.addresses.sorted() {
            if let a = try? SocketAddress(ipAddress: address.text, port: Int(service.port)) { return a }
        }
        throw ControllerError.notFound("\(name) has no usable address")
    }
}

private actor FoundNodes {
    var nodes: [String: CommissionableNode] = [:]
    func put(_ name: String, _ node: CommissionableNode) { nodes[name] = node }
    func remove(_ name: String) { nodes[name] = nil }
    func all() -> [CommissionableNode] { nodes.keys.sorted().compactMap { nodes[$0] } }
}
