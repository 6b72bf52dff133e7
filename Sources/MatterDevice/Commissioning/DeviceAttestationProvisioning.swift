import Foundation
import MatterCrypto

/// The authority simulated devices' attestation chains are minted under: a PAA (normally
/// the published test PAA, Chip-Test-PAA-NoVID) and the Certification Declaration signing
/// key the reference controller trusts for development CDs.
public struct AttestationAuthority: Sendable {
    public var paaCertificatePEM: String
    public var paaKeyPEM: String
    public var cdSigningCertificatePEM: String
    public var cdSigningKeyPEM: String

    public init(paaCertificatePEM: String, paaKeyPEM: String, cdSigningCertificatePEM: String, cdSigningKeyPEM: String) {
        self.paaCertificatePEM = paaCertificatePEM
        self.paaKeyPEM = paaKeyPEM
        self.cdSigningCertificatePEM = cdSigningCertificatePEM
        self.cdSigningKeyPEM = cdSigningKeyPEM
    }

    /// Reads the four PEM files under the names connectedhomeip publishes them with.
    public static func load(fromDirectory directory: URL) throws -> AttestationAuthority {
        func read(_ name: String) throws -> String {
            try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return AttestationAuthority(
            paaCertificatePEM: try read("Chip-Test-PAA-NoVID-Cert.pem"), paaKeyPEM: try read("Chip-Test-PAA-NoVID-Key.pem"),
            cdSigningCertificatePEM: try read("Chip-Test-CD-Signing-Cert.pem"), cdSigningKeyPEM: try read("Chip-Test-CD-Signing-Key.pem"))
    }
}

/// Gives a simulated device its attestation credentials (Core spec 6.2): minted once
/// for its vendor and product under an AttestationAuthority, then kept in its state
/// directory, so a restarted device presents the same DAC.
public enum DeviceAttestationProvisioning {
    static let record = "attestation"

    struct Record: Codable {
        var vendorID: UInt16
        var productID: UInt16
        var deviceTypeID: UInt32
        var dacKey: Data
        var dac: Data
        var pai: Data
        var certificationDeclaration: Data
    }

    public enum ProvisioningError: Error, CustomStringConvertible {
        case storedCredentialsInvalid(String)

        public var description: String {
            switch self {
            case .storedCredentialsInvalid(let why): "stored attestation credentials are invalid: \(why)"
            }
        }
    }

    /// The stored credentials when they are for this vendor, product and device type;
    /// otherwise freshly minted ones, stored for next time (nil store: never stored).
    public static func loadOrMint(
        store: NodeStateStore?, vendorID: UInt16, productID: UInt16, deviceTypeID: UInt32, authority: AttestationAuthority
    ) throws -> DeviceAttestationCredentials {
        if let stored = try store?.load(Record.self, record),
            stored.vendorID == vendorID, stored.productID == productID, stored.deviceTypeID == deviceTypeID
        {
            return try credentials(from: stored)
        }
        // notBefore 0: the chain is valid from the PAA's own start, so any clock accepts it.
        let minted = try DeviceAttestationCredentials.development(
            vendorID: vendorID, productID: productID, deviceTypeID: deviceTypeID,
            paaCertificatePEM: authority.paaCertificatePEM, paaKeyPEM: authority.paaKeyPEM,
            cdSigningCertificatePEM: authority.cdSigningCertificatePEM, cdSigningKeyPEM: authority.cdSigningKeyPEM,
            notBefore: 0)
        try store?.save(
            Record(
                vendorID: vendorID, productID: productID, deviceTypeID: deviceTypeID,
                dacKey: Data(minted.dacKey.rawPrivateKey), dac: Data(minted.dac.der), pai: Data(minted.pai.der),
                certificationDeclaration: Data(minted.certificationDeclaration)), record)
        return minted
    }

    static func credentials(from stored: Record) throws -> DeviceAttestationCredentials {
        let key = try P256KeyPair(rawPrivateKey: [UInt8](stored.dacKey))
        let dac = try AttestationCertificate(der: [UInt8](stored.dac))
        let pai = try AttestationCertificate(der: [UInt8](stored.pai))
        guard dac.publicKey == key.publicKey else { throw ProvisioningError.storedCredentialsInvalid("DAC key does not match the DAC") }
        guard dac.isIssued(by: pai) else { throw ProvisioningError.storedCredentialsInvalid("DAC is not issued by the PAI") }
        return DeviceAttestationCredentials(
            dacKey: key, dac: dac, pai: pai,
            certificationDeclaration: [UInt8](stored.certificationDeclaration))
    }
}
