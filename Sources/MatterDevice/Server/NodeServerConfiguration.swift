import MatterModel
import MatterProtocol

/// How a NodeServer puts its node on the network.
public struct NodeServerConfiguration: Sendable {
    /// What the `_matterc._udp` advertisement says about the device (Core spec 4.3.1).
    public struct Advertisement: Sendable, Hashable {
        public var vendorID: UInt16
        public var productID: UInt16
        /// DT: the primary device type (that of the first application endpoint).
        public var deviceType: UInt32?
        /// DN: at most 32 bytes; longer names are cut at a character boundary.
        public var deviceName: String?
        /// What the node's simulated MAC address is derived from, with its UDP port and addresses
        /// (the serial number): its services go on a host name of their own made of it (Core spec
        /// 4.3.1, 4.3.2), with the node's addresses. nil: on the Avahi daemon's host name.
        public var hostSeed: String?

        public init(
            vendorID: UInt16, productID: UInt16, deviceType: UInt32? = nil, deviceName: String? = nil, hostSeed: String? = nil
        ) {
            self.vendorID = vendorID
            self.productID = productID
            self.deviceType = deviceType
            self.deviceName = deviceName.map(Self.deviceNameField)
            self.hostSeed = hostSeed
        }

        /// DN carries at most 32 bytes of UTF-8 (Core spec 4.3.1.5): a longer name is cut
        /// at a character boundary.
        public static func deviceNameField(_ name: String) -> String {
            var result = ""
            for character in name {
                guard result.utf8.count + character.utf8.count <= 32 else { break }
                result.append(character)
            }
            return result
        }
    }

    /// UDP port; 0 picks an ephemeral one (see `NodeServer.port`).
    public var port: Int
    public var binding: UDPTransport.Binding
    /// The onboarding passcode and discriminator of the basic commissioning window.
    public var passcode: UInt32
    public var discriminator: UInt16
    /// PBKDF2 iterations of the basic window's verifier (spec 5.1.1.6: 1000 to 100000).
    public var pbkdfIterations: UInt32
    /// How long the window opened at boot (when the node has no fabric) stays open: by
    /// default the spec's longest announcement (Core 5.4.2.4, 15 minutes), after which a
    /// power cycle reopens it; nil keeps it open until commissioning completes (lab use).
    public var bootWindowTimeout: Duration?
    public static let defaultBootWindowTimeout = Duration.seconds(900)
    /// nil: no DNS-SD at all (loopback tests). Otherwise the node advertises through Avahi.
    public var advertisement: Advertisement?
    public var exchange: ExchangeManager.Configuration
    public var secureChannel: SecureChannelServer.Configuration
    public var interactionModel: InteractionServerConfiguration
    /// Cluster instances served only through the cloud relay (`NodeServer.cloudInteractionServer`):
    /// over UDP they do not exist.
    public var cloudOnlyClusters: Set<ClusterPath>
    /// Logs each commissioning's phases with their times (`matter-sim run --trace`).
    public var traceCommissioning = false
    /// How long after start the node's first advertisement waits (`AnnouncementPacing`).
    public var advertisementSlot: Duration = .zero
    /// Slots shared with the other processes of a home (`AnnouncementSlots`): when set, the
    /// first advertisement waits for the home's next slot instead of `advertisementSlot`.
    public var announcementSlots: AnnouncementSlots?
    /// Where the nodes a switch is bound to listen; nil looks up their operational DNS-SD records.
    public var boundNodeAddresses: OperationalAddressLookup?

    public init(
        port: Int = 5540, binding: UDPTransport.Binding = .dualStack, passcode: UInt32, discriminator: UInt16,
        pbkdfIterations: UInt32 = 1000, bootWindowTimeout: Duration? = defaultBootWindowTimeout, advertisement: Advertisement? = nil,
        exchange: ExchangeManager.Configuration = ExchangeManager.Configuration(),
        secureChannel: SecureChannelServer.Configuration = SecureChannelServer.Configuration(),
        interactionModel: InteractionServerConfiguration = InteractionServerConfiguration(),
        cloudOnlyClusters: Set<ClusterPath> = []
    ) {
        self.port = port
        self.binding = binding
        self.passcode = passcode
        self.discriminator = discriminator
        self.pbkdfIterations = pbkdfIterations
        self.bootWindowTimeout = bootWindowTimeout
        self.advertisement = advertisement
        self.exchange = exchange
        self.secureChannel = secureChannel
        self.interactionModel = interactionModel
        self.cloudOnlyClusters = cloudOnlyClusters
    }
}
