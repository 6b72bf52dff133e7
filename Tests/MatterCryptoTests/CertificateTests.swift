import COpenSSL
import MatterTLV
import SwiftASN1
import Testing
@testable import MatterCrypto

func derFromPEM(_ pem: String) throws -> [UInt8] {
    try PEMDocument(pemString: pem).derBytes
}

/// 2025-01-01T00:00:00Z in Matter epoch seconds.
let matterTime2025 = MatterEpoch.seconds(fromUnix: 1_735_689_600)

@Suite struct ChipCertificateConversionTests {
    @Test(arguments: ChipCertificateVectors.all)
    func tlvToX509ByteForByte(_ v: ChipTestCertificate) throws {
        let cert = try MatterCertificate(tlv: hex(v.tlvHex))
        #expect(try cert.x509DER() == derFromPEM(v.pem))
    }

    @Test(arguments: ChipCertificateVectors.all)
    func x509ToTLVByteForByte(_ v: ChipTestCertificate) throws {
        let cert = try MatterCertificate(x509DER: derFromPEM(v.pem))
        #expect(cert.tlvEncoded == hex(v.tlvHex))
    }

    @Test func root01Fields() throws {
        let cert = try MatterCertificate(tlv: hex(ChipCertificateVectors.root01.tlvHex))
        #expect(try cert.certificateType() == .root)
        #expect(cert.subject.rcacID == 0xCACA_CACA_0000_0001)
        #expect(cert.isCA && cert.pathLengthConstraint == nil)
        #expect(cert.keyUsage == [.keyCertSign, .cRLSign])
        #expect(cert.subjectKeyIdentifier == hex("CC1308AF82CFEE505EB23B57BFE86A311665535F"))
        // Oct 15 14:23:43 2020 GMT .. Oct 15 14:23:42 2040 GMT
        #expect(MatterEpoch.unixSeconds(cert.notBefore) == 1_602_771_823)
        #expect(MatterEpoch.unixSeconds(cert.notAfter) == 2_233_923_822)
        // SKID is SHA-1 of the key, as the spec recommends.
        #expect(try P256PublicKey(cert.publicKey).keyIdentifier == cert.subjectKeyIdentifier)
        try cert.verifySignature(issuerPublicKey: cert.publicKey)
    }

    @Test func root03HasNoExpiry() throws {
        let cert = try MatterCertificate(tlv: hex(ChipCertificateVectors.root03.tlvHex))
        #expect(cert.notAfter == 0)
        #expect(cert.pathLengthConstraint == 1)
    }

    @Test func node02_02CarriesCommonName() throws {
        let cert = try MatterCertificate(tlv: hex(ChipCertificateVectors.node02_02.tlvHex))
        #expect(cert.subject.commonName == "TEST CERT COMMON NAME Attr for Node02_02")
        #expect(cert.extendedKeyUsage == [.clientAuth, .serverAuth])
    }

    @Test(arguments: ChipCertificateVectors.all)
    func openSSLAcceptsOurX509(_ v: ChipTestCertificate) throws {
        let der = try MatterCertificate(tlv: hex(v.tlvHex)).x509DER()
        #expect(OpenSSLCheck.x509(der) != nil)
    }
}

@Suite struct CertificateChainTests {
    static func load(_ v: ChipTestCertificate) throws -> MatterCertificate {
        try MatterCertificate(tlv: hex(v.tlvHex))
    }

    @Test func chipChainValidates() throws {
        let root = try Self.load(ChipCertificateVectors.root02)
        let ica = try Self.load(ChipCertificateVectors.ica02)
        for node in [ChipCertificateVectors.node02_01, ChipCertificateVectors.node02_02] {
            let noc = try Self.load(node)
            let identity = try CertificateChain.validate(noc: noc, icac: ica, rcac: root, at: matterTime2025)
            #expect(identity.fabricID == 0xFAB0_0000_0000_001D)
            #expect(identity.rootPublicKey == root.publicKey)
            #expect(identity.nodePublicKey == noc.publicKey)
        }
        let id1 = try CertificateChain.validate(noc: Self.load(ChipCertificateVectors.node02_01), icac: ica, rcac: root)
        #expect(id1.nodeID == 0xDEDE_DEDE_0002_0001)
        #expect(id1.caseAuthenticatedTags.isEmpty)
    }

    @Test func chainRejections() throws {
        let root = try Self.load(ChipCertificateVectors.root02)
        let ica = try Self.load(ChipCertificateVectors.ica02)
        let noc = try Self.load(ChipCertificateVectors.node02_01)
        // Outside the validity period (Oct 2020 .. Oct 2040).
        #expect(throws: CertificateError.expired) {
            try CertificateChain.validate(noc: noc, icac: ica, rcac: root, at: MatterEpoch.seconds(fromUnix: 2_300_000_000))
        }
        #expect(throws: CertificateError.notYetValid) {
            try CertificateChain.validate(noc: noc, icac: ica, rcac: root, at: MatterEpoch.seconds(fromUnix: 1_500_000_000))
        }
        // Wrong root.
        #expect(throws: CertificateError.issuerMismatch) {
            try CertificateChain.validate(noc: noc, icac: ica, rcac: Self.load(ChipCertificateVectors.root01))
        }
        // Missing ICAC.
        #expect(throws: CertificateError.issuerMismatch) { try CertificateChain.validate(noc: noc, icac: nil, rcac: root) }
        // Altered signature.
        var forged = noc
        forged.signature[5] ^= 1
        #expect(throws: CertificateError.signatureInvalid) { try CertificateChain.validate(noc: forged, icac: ica, rcac: root) }
        // Altered content under the original signature.
        var altered = noc
        altered.subject = DistinguishedName([.matterNodeID(0xDEDE_DEDE_0002_0099), .matterFabricID(0xFAB0_0000_0000_001D)])
        #expect(throws: CertificateError.signatureInvalid) { try CertificateChain.validate(noc: altered, icac: ica, rcac: root) }
        // A NOC in the root slot.
        #expect(throws: CertificateError.self) { try CertificateChain.validate(noc: noc, icac: nil, rcac: noc) }
    }
}

@Suite struct CertificateIssuanceTests {
    struct Fabric {
        let rootKey = P256KeyPair(), icaKey = P256KeyPair()
        let root: MatterCertificate, ica: MatterCertificate
        let fabricID: UInt64 = 0x0000_0000_0000_0A0B
        init() throws {
            root = try MatterCertificateIssuer.issueRoot(key: rootKey, rcacID: 1, fabricID: fabricID, notBefore: matterTime2025 - 3600)
            ica = try MatterCertificateIssuer.issueIntermediate(
                publicKey: icaKey.publicKey, icacID: 2, fabricID: fabricID, issuer: root, issuerKey: rootKey,
                notBefore: matterTime2025 - 3600, notAfter: matterTime2025 + 10 * 365 * 86400)
        }
    }

    @Test func issuedChainFromCSRValidatesEverywhere() throws {
        let fabric = try Fabric()
        let deviceKey = P256KeyPair()
        let csr = try CertificateSigningRequest.create(key: deviceKey)
        let noc = try MatterCertificateIssuer.issueNode(
            csr: csr.der, nodeID: 0x1122_3344_5566_7788, fabricID: fabric.fabricID, caseAuthenticatedTags: [0x0001_0001],
            issuer: fabric.ica, issuerKey: fabric.icaKey, notBefore: matterTime2025 - 60)
        #expect(noc.publicKey == deviceKey.publicKey.uncompressed)

        let identity = try CertificateChain.validate(noc: noc, icac: fabric.ica, rcac: fabric.root, at: matterTime2025)
        #expect(identity.nodeID == 0x1122_3344_5566_7788)
        #expect(identity.fabricID == fabric.fabricID)
        #expect(identity.caseAuthenticatedTags == [0x0001_0001])

        // TLV ⇄ X.509 round trips, and OpenSSL agrees with the signatures and the chain.
        for cert in [fabric.root, fabric.ica, noc] {
            let der = try cert.x509DER()
            #expect(try MatterCertificate(x509DER: der) == cert)
            #expect(try MatterCertificate(tlv: cert.tlvEncoded) == cert)
        }
        #expect(OpenSSLCheck.signatureVerifies(try fabric.root.x509DER(), issuer: try fabric.root.x509DER()))
        #expect(OpenSSLCheck.signatureVerifies(try fabric.ica.x509DER(), issuer: try fabric.root.x509DER()))
        #expect(OpenSSLCheck.signatureVerifies(try noc.x509DER(), issuer: try fabric.ica.x509DER()))
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: try noc.x509DER(), untrusted: [try fabric.ica.x509DER()],
                trusted: [try fabric.root.x509DER()]) == nil)
        let text = OpenSSLCheck.text(try noc.x509DER()) ?? ""
        #expect(text.contains("1.3.6.1.4.1.37244.1.1=1122334455667788"))
        #expect(text.contains("1.3.6.1.4.1.37244.1.6=00010001"))
        #expect(text.contains("CA:FALSE"))
        #expect(text.contains("TLS Web Client Authentication, TLS Web Server Authentication"))
    }

    @Test func nocDirectlyUnderRoot() throws {
        let fabric = try Fabric()
        let noc = try MatterCertificateIssuer.issueNode(
            publicKey: P256KeyPair().publicKey, nodeID: 5, fabricID: fabric.fabricID,
            issuer: fabric.root, issuerKey: fabric.rootKey, notBefore: matterTime2025)
        #expect(try CertificateChain.validate(noc: noc, icac: nil, rcac: fabric.root).nodeID == 5)
        // The fabric ID in the root's subject must match the NOC's.
        let other = try MatterCertificateIssuer.issueNode(
            publicKey: P256KeyPair().publicKey, nodeID: 5, fabricID: 99,
            issuer: fabric.root, issuerKey: fabric.rootKey, notBefore: matterTime2025)
        #expect(throws: CertificateError.fabricIDMismatch) { try CertificateChain.validate(noc: other, icac: nil, rcac: fabric.root) }
    }

    @Test func issuerRejectsBadIdentifiers() throws {
        let fabric = try Fabric()
        let key = P256KeyPair().publicKey
        #expect(throws: CertificateError.self) {
            try MatterCertificateIssuer.issueNode(
                publicKey: key, nodeID: 0, fabricID: 1, issuer: fabric.root, issuerKey: fabric.rootKey, notBefore: 0)
        }
        #expect(throws: CertificateError.self) {
            try MatterCertificateIssuer.issueNode(
                publicKey: key, nodeID: 0xFFFF_FFFF_0000_0001, fabricID: 1, issuer: fabric.root, issuerKey: fabric.rootKey, notBefore: 0)
        }
        #expect(throws: CertificateError.self) {
            try MatterCertificateIssuer.issueNode(
                publicKey: key, nodeID: 1, fabricID: 1, caseAuthenticatedTags: [0x0001_0000], issuer: fabric.root,
                issuerKey: fabric.rootKey, notBefore: 0)
        }
    }

    @Test func csrRoundTripAndTamper() throws {
        let key = P256KeyPair()
        let csr = try CertificateSigningRequest.create(key: key)
        let parsed = try CertificateSigningRequest(der: csr.der)
        #expect(parsed.publicKey == key.publicKey)
        // OpenSSL parses and verifies it too.
        let ok: Bool = csr.der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            guard let req = d2i_X509_REQ(nil, &p, buf.count) else { return false }
            defer { X509_REQ_free(req) }
            guard let pkey = X509_REQ_get0_pubkey(req) else { return false }
            return X509_REQ_verify(req, pkey) == 1
        }
        #expect(ok)
        var bad = csr.der
        bad[bad.count - 3] ^= 0x01
        #expect(throws: CertificateError.self) { try CertificateSigningRequest(der: bad) }
    }
}

@Suite struct CertificateRobustnessTests {
    /// Random single-byte changes and truncations of valid encodings must throw or parse, never trap.
    @Test func mutatedInputsNeverTrap() throws {
        var rng = SystemRandomNumberGenerator()
        for v in ChipCertificateVectors.all {
            let tlv = hex(v.tlvHex), der = try derFromPEM(v.pem)
            for _ in 0..<150 {
                var t = tlv
                t[Int.random(in: 0..<t.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                _ = try? MatterCertificate(tlv: t)
                _ = try? MatterCertificate(tlv: Array(t.prefix(Int.random(in: 0..<t.count, using: &rng))))
                var d = der
                d[Int.random(in: 0..<d.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
                _ = try? MatterCertificate(x509DER: d)
                _ = try? MatterCertificate(x509DER: Array(d.prefix(Int.random(in: 0..<d.count, using: &rng))))
                _ = try? CertificateSigningRequest(der: d)
            }
        }
        #expect(throws: CertificateError.self) { try MatterCertificate(tlv: []) }
        #expect(throws: CertificateError.self) { try MatterCertificate(x509DER: []) }
    }

    @Test func x509OutsideTheMatterProfile() throws {
        // The published test PAA converts (CN only, P-256, the four standard extensions) but names no
        // Matter identity, so it has no operational certificate type.
        let paa = try derFromPEM(readTestCredential("Chip-Test-PAA-NoVID-Cert.pem"))
        let converted = try MatterCertificate(x509DER: paa)
        #expect(throws: CertificateError.self) { try converted.certificateType() }
        // A DER that differs from the canonical re-encoding (here: key usage marked non-critical) is refused,
        // since its signature could not be checked after conversion to TLV.
        let root = try derFromPEM(ChipCertificateVectors.root01.pem)
        let criticalKeyUsage: [UInt8] = [0x06, 0x03, 0x55, 0x1d, 0x0f, 0x01, 0x01, 0xff]
        guard
            let at = (0..<(root.count - criticalKeyUsage.count)).first(where: {
                Array(root[$0..<($0 + criticalKeyUsage.count)]) == criticalKeyUsage
            })
        else {
            Issue.record("key usage extension not found")
            return
        }
        var modified = root
        modified[at + 7] = 0x00  // BOOLEAN FALSE: not DER (DEFAULT must be omitted), and not what Matter emits
        #expect(throws: CertificateError.notMatterEncodable) { try MatterCertificate(x509DER: modified) }
    }
}
