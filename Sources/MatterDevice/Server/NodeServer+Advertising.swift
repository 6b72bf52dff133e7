import Logging
import MatterDNSSD
import MatterModel
import MatterProtocol

// What the node advertises (Core spec 4.3): the records are built from the node's
// window and fabrics, the advertisement identity and the session parameters the
// exchange manager announces in PASE and CASE.

extension NodeServer {
    func advertiseCommissionable(_ window: CommissioningWindowInfo) async {
        guard let identity = configuration.advertisement else { return }
        let discriminator: UInt16
        let mode: MatterCommissionableRecord.CommissioningMode
        switch window.kind {
        case .basic:
            discriminator = configuration.discriminator
            mode = .basic
        case .enhanced(_, let windowDiscriminator, _, _):
            discriminator = windowDiscriminator
            mode = .enhanced
        }
        let timing = advertisedTiming
        let record = MatterCommissionableRecord(
            longDiscriminator: discriminator, vendorID: identity.vendorID, productID: identity.productID,
            deviceType: identity.deviceType, deviceName: identity.deviceName,
            commissioningMode: mode, sessionIdleInterval: timing.idle, sessionActiveInterval: timing.active,
            sessionActiveThreshold: timing.threshold, tcpSupport: 0, port: UInt16(clamping: port))
        do {
            await advertiser.advertise(try record.service(host: Self.host(configuration, transport: transport)), as: .commissionable)
        } catch {
            logger.error("cannot build the commissionable advertisement: \(error)")
        }
    }

    func advertiseOperational(_ fabric: FabricInfo) async {
        await Self.advertiseOperational(
            fabric, advertiser: advertiser, configuration: configuration, transport: transport, logger: logger)
    }

    /// Also called on AddNOC before its response goes out (see `NodeDataProvider.fabricAdded`);
    /// the fabricAdded event that follows finds the same record published and leaves it.
    static func advertiseOperational(
        _ fabric: FabricInfo, advertiser: NodeAdvertiser, configuration: NodeServerConfiguration,
        transport: UDPTransport, logger: Logger
    ) async {
        guard configuration.advertisement != nil else { return }
        let timing = advertisedTiming(configuration)
        let record = MatterOperationalRecord(
            compressedFabricID: fabric.compressedFabricID, nodeID: fabric.nodeID, sessionIdleInterval: timing.idle,
            sessionActiveInterval: timing.active, sessionActiveThreshold: timing.threshold, tcpSupport: 0,
            port: UInt16(clamping: transport.port))
        do {
            await advertiser.advertise(try record.service(host: host(configuration, transport: transport)), as: .operational(fabric.index))
        } catch {
            logger.error("cannot build the operational advertisement of fabric \(fabric.index): \(error)")
        }
    }

    /// The node's own host (Core spec 4.3.1, 4.3.2: a host name of a link-layer address, which
    /// TC-SC-4.3 checks), with the addresses it is reached at; nil (the daemon's host name) without
    /// a seed or an address. The simulated MAC derives from the seed, the port and the addresses:
    /// two nodes of one profile on two hosts (same serial number and port) get two names.
    static func host(_ configuration: NodeServerConfiguration, transport: UDPTransport) -> MatterHost? {
        guard let seed = configuration.advertisement?.hostSeed else { return nil }
        let reachable = transport.reachableAddresses().compactMap { DNSSDAddress($0.address, interfaceIndex: Int32($0.interfaceIndex)) }
        // Announcements and answers carry only IPv6 address records where the node has IPv6
        // (Core 4.3: Matter is IPv6; TC-SC-4.3 step 8 takes the first address record of the
        // answer to its AAAA query as it); an IPv4-only node gives its A records.
        let ipv6 = reachable.filter { $0.family == .ipv6 }
        let addresses = ipv6.isEmpty ? reachable : ipv6
        guard !addresses.isEmpty else { return nil }
        let mac = MatterHost.simulatedMACAddress(seed: "\(seed)/\(transport.port)/\(addresses.sorted().map(\.description))")
        return MatterHost(linkLayerAddress: mac, addresses: addresses)
    }

    private var advertisedTiming: (idle: UInt32, active: UInt32, threshold: UInt16) {
        Self.advertisedTiming(configuration)
    }

    /// SII, SAI (ms) and SAT (ms): the MRP parameters peers must use (spec 4.3.4).
    private static func advertisedTiming(_ configuration: NodeServerConfiguration) -> (idle: UInt32, active: UInt32, threshold: UInt16) {
        let parameters = configuration.exchange.localParameters
        return (
            UInt32(clamping: parameters.idleInterval.totalMilliseconds),
            UInt32(clamping: parameters.activeInterval.totalMilliseconds),
            UInt16(clamping: parameters.activeThreshold.totalMilliseconds)
        )
    }
}
