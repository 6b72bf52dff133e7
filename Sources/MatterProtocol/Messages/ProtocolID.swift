/// A protocol, named by vendor ID and protocol number (spec 4.4.3.4/4.4.3.5).
/// Standard protocols have vendor ID 0 (the "Matter Standard" vendor).
public struct ProtocolID: Hashable, Sendable, CustomStringConvertible {
    public var vendorID: UInt16
    public var protocolNumber: UInt16

    public init(vendorID: UInt16 = 0, _ protocolNumber: UInt16) {
        self.vendorID = vendorID
        self.protocolNumber = protocolNumber
    }

    /// The 32-bit form used in StatusReport (vendor ID in the high half).
    public var fullyQualified: UInt32 { UInt32(vendorID) << 16 | UInt32(protocolNumber) }

    public init(fullyQualified: UInt32) {
        self.init(vendorID: UInt16(truncatingIfNeeded: fullyQualified >> 16), UInt16(truncatingIfNeeded: fullyQualified))
    }

    /// Secure Channel protocol (spec 4.11).
    public static let secureChannel = ProtocolID(0x0000)
    /// Interaction Model protocol (spec 8).
    public static let interactionModel = ProtocolID(0x0001)
    /// Bulk Data Exchange (spec 11.21).
    public static let bdx = ProtocolID(0x0002)
    /// User Directed Commissioning (spec 5.3).
    public static let userDirectedCommissioning = ProtocolID(0x0003)
    /// Protocol reserved for testing.
    public static let forTesting = ProtocolID(0x0004)

    public var description: String {
        vendorID == 0
            ? "0x\(String(protocolNumber, radix: 16))"
            : "0x\(String(vendorID, radix: 16)):0x\(String(protocolNumber, radix: 16))"
    }
}
