import Foundation
import MatterCrypto

/// PAA certificates (and Certification Declaration signing certificates) trusted for
/// device attestation, loaded from a directory of PEM or DER files, as connectedhomeip's
/// `--paa-trust-store-path` (spec 6.2.3).
public struct PAATrustStore: Sendable {
    public let certificates: [AttestationCertificate]

    public init(certificates: [AttestationCertificate]) {
        self.certificates = certificates
    }

    /// Loads every `.pem`/`.der`/`.crt` file of `directory`; files that hold no certificate
    /// are skipped. A directory that cannot be listed is an error.
    public init(directory: URL) throws {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw ControllerError.invalidArgument("PAA trust store \(directory.path) cannot be read: \(error.localizedDescription)")
        }
        var certs: [AttestationCertificate] = []
        for name in names.sorted() {
            let url = directory.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: url) else { continue }
            if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
                // A file may hold several PEM blocks.
                for block in text.components(separatedBy: "-----END CERTIFICATE-----") where block.contains("-----BEGIN CERTIFICATE-----") {
                    if let start = block.range(of: "-----BEGIN CERTIFICATE-----"),
                        let cert = try? AttestationCertificate(pem: String(block[start.lowerBound...]) + "-----END CERTIFICATE-----")
                    {
                        certs.append(cert)
                    }
                }
            } else if let cert = try? AttestationCertificate(der: [UInt8](data)) {
                certs.append(cert)
            }
        }
        certificates = certs
    }

    /// The trusted issuer of a PAI, if any.
    func issuer(of pai: AttestationCertificate) -> AttestationCertificate? {
        certificates.first { $0.isCA && pai.isIssued(by: $0) }
    }

    /// The certificate whose key signed a Certification Declaration, by key identifier.
    func declarationSigner(keyIdentifier: [UInt8]) -> AttestationCertificate? {
        certificates.first { $0.subjectKeyIdentifier == keyIdentifier }
    }
}

/// What the commissioner learned from device attestation.
public struct AttestationResult: Sendable, Hashable {
    public var vendorID: UInt16?
    public var productID: UInt16?
    /// True when the chain ended at a trusted PAA and the declaration verified.
    public var isTrusted: Bool
    /// Why the attestation is not trusted (empty when it is).
    public var problems: [String]
}

/// Device attestation checks of the commissioner (Matter Core spec 6.2.3.1): the DAC is
/// issued by the PAI, the PAI by a trusted PAA; the attestation signature over the
/// elements and the session's challenge verifies with the DAC key; the nonce is ours;
/// the Certification Declaration is signed by a trusted key and names the DAC's vendor
/// and product.
public struct AttestationVerifier: Sendable {
    public var trustStore: PAATrustStore?
    /// Proceed with an untrusted chain (the caller said so explicitly).
    public var allowUntrusted: Bool

    public init(trustStore: PAATrustStore?, allowUntrusted: Bool = false) {
        self.trustStore = trustStore
        self.allowUntrusted = allowUntrusted
    }

    public func verify(
        dacDER: [UInt8], paiDER: [UInt8], attestationElements: [UInt8], signature: [UInt8],
        nonce: [UInt8], attestationChallenge: [UInt8]
    ) throws -> (AttestationResult, P256PublicKey) {
        let dac: AttestationCertificate
        let pai: AttestationCertificate
        do {
            dac = try AttestationCertificate(der: dacDER)
            pai = try AttestationCertificate(der: paiDER)
        } catch {
            throw ControllerError.attestationFailed("malformed DAC or PAI: \(error)")
        }
        // These prove the device holds the DAC key for this session: never waivable.
        guard
            DeviceAttestation.verify(
                elements: attestationElements, attestationChallenge: attestationChallenge,
                signature: signature, dacPublicKey: dac.publicKey)
        else {
            throw ControllerError.attestationFailed("attestation signature does not verify with the DAC key")
        }
        let elements: DeviceAttestation.ParsedAttestationElements
        do { elements = try DeviceAttestation.parseAttestationElements(attestationElements) } catch {
            throw ControllerError.attestationFailed("attestation elements: \(error)")
        }
        guard elements.attestationNonce == nonce else {
            throw ControllerError.attestationFailed("attestation nonce is not the one sent")
        }

        var problems: [String] = []
        if !dac.isIssued(by: pai) { problems.append("DAC is not issued by the PAI") }
        if !pai.isCA { problems.append("PAI is not a CA certificate") }
        if let pv = pai.vendorID, pv != dac.vendorID { problems.append("PAI vendor ID differs from the DAC's") }
        if let store = trustStore {
            if store.issuer(of: pai) == nil { problems.append("PAI is not issued by any PAA in the trust store") }
            do {
                let envelope = try CertificationDeclaration.parseCMS(elements.certificationDeclaration)
                if let signer = store.declarationSigner(keyIdentifier: envelope.signerKeyIdentifier) {
                    let cd = try envelope.verify(signerPublicKey: signer.publicKey)
                    if let vid = dac.vendorID, cd.vendorID != vid && cd.dacOriginVendorID != vid {
                        problems.append("Certification Declaration vendor ID \(cd.vendorID) is not the DAC's \(vid)")
                    }
                    if let pid = dac.productID, !cd.productIDs.contains(pid) && cd.dacOriginProductID != pid {
                        problems.append("Certification Declaration does not list product ID \(pid)")
                    }
                } else {
                    problems.append("Certification Declaration signer is not trusted")
                }
            } catch {
                problems.append("Certification Declaration: \(error)")
            }
        } else {
            problems.append("no PAA trust store configured")
        }
        let result = AttestationResult(
            vendorID: dac.vendorID, productID: dac.productID, isTrusted: problems.isEmpty,
            problems: problems)
        if !problems.isEmpty && !allowUntrusted {
            throw ControllerError.attestationFailed(
                problems.joined(separator: "; ")
                    + " (pass allowUntrustedAttestation to commission anyway)")
        }
        return (result, dac.publicKey)
    }
}
