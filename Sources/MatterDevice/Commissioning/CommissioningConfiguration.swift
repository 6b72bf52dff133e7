import Foundation
import MatterCrypto
import MatterModel

/// RegulatoryLocationTypeEnum (Core spec 11.10.5.3).
public enum RegulatoryLocation: UInt8, Sendable, Hashable, Codable {
    case indoor = 0
    case outdoor = 1
    case indoorOutdoor = 2
}

/// One network interface, as General Diagnostics reports it (Core spec 11.12.6.1).
public struct NetworkInterfaceInfo: Sendable, Hashable {
    public var name: String
    /// 6-byte MAC address.
    public var hardwareAddress: [UInt8]
    public var ipv4Addresses: [[UInt8]]
    public var ipv6Addresses: [[UInt8]]

    public init(
        name: String = "eth0", hardwareAddress: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01],
        ipv4Addresses: [[UInt8]] = [], ipv6Addresses: [[UInt8]] = []
    ) {
        self.name = name
        self.hardwareAddress = hardwareAddress
        self.ipv4Addresses = ipv4Addresses
        self.ipv6Addresses = ipv6Addresses
    }
}

/// What the commissioning clusters need from outside the data model.
public struct CommissioningConfiguration: Sendable {
    /// Where fabrics, ACL, group keys, the reboot count and non-volatile attributes are
    /// kept across restarts; nil keeps everything in memory.
    public var stateStore: NodeStateStore?
    /// DAC key, DAC, PAI and Certification Declaration. Without them attestation and
    /// CSR requests fail with FAILURE (a node that cannot be commissioned).
    public var attestation: DeviceAttestationCredentials?
    /// BasicCommissioningInfo (Core spec 11.10.5.2); also the fail-safe armed when a
    /// PASE session is established (5.5).
    public var failSafeExpiryLengthSeconds: UInt16 = 60
    public var maxCumulativeFailsafeSeconds: UInt16 = 900
    /// SupportedFabrics (11.18.5.3): at least 5.
    public var supportedFabrics: UInt8 = 5
    public var locationCapability: RegulatoryLocation = .indoorOutdoor
    /// The one Ethernet interface of the Network Commissioning and General Diagnostics clusters.
    public var networkInterface = NetworkInterfaceInfo()
    /// MaxGroupKeysPerFabric (11.2.6.4), the IPK's key set included.
    public var maxGroupKeysPerFabric: UInt16 = 3
    /// MaxGroupsPerFabric (11.2.6.3).
    public var maxGroupsPerFabric: UInt16 = 4
    /// How long a changed non-volatile attribute may wait before it is written out.
    public var attributePersistenceDelay: Duration = .seconds(1)
    /// The EnableKey of General Diagnostics' TestEventTrigger (Core 11.12.7.1), 16 bytes; nil
    /// (the default, as in a shipped device) leaves TestEventTriggersEnabled false.
    public var testEventTriggerKey: [UInt8]?
    /// Wall-clock time for TimeSnapshot (milliseconds since 1970); nil when unknown.
    public var posixTimeMilliseconds: @Sendable () -> UInt64? = {
        UInt64(exactly: (Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    public init(stateStore: NodeStateStore? = nil, attestation: DeviceAttestationCredentials? = nil) {
        self.stateStore = stateStore
        self.attestation = attestation
    }
}
