import Testing
@testable import MatterCrypto

enum TestCredentials {
    static func paaCert() throws -> String { try readTestCredential("Chip-Test-PAA-NoVID-Cert.pem") }
    static func paaKey() throws -> String { try readTestCredential("Chip-Test-PAA-NoVID-Key.pem") }
    static func cdCert() throws -> String { try readTestCredential("Chip-Test-CD-Signing-Cert.pem") }
    static func cdKey() throws -> String { try readTestCredential("Chip-Test-CD-Signing-Key.pem") }
}

@Suite struct DeviceAttestationCertificateTests {
    @Test func testPAAParses() throws {
        let paa = try AttestationCertificate(pem: TestCredentials.paaCert())
        #expect(paa.isCA && paa.pathLengthConstraint == 1)
        #expect(paa.vendorID == nil)
        #expect(paa.subjectKeyIdentifier == hex("785CE705B86B8F4E6FC793AA60CB43EA696882D5"))
        #expect(paa.notAfter == 0)
        #expect(paa.isIssued(by: paa))
        #expect(try P256KeyPair(pem: TestCredentials.paaKey()).publicKey == paa.publicKey)
    }

    @Test func mintedChainVerifiesWithOpenSSL() throws {
        let creds = try DeviceAttestationCredentials.development(
            vendorID: 0xFFF1, productID: 0x8001, deviceTypeID: 0x0101,
            paaCertificatePEM: TestCredentials.paaCert(), paaKeyPEM: TestCredentials.paaKey(),
            cdSigningCertificatePEM: TestCredentials.cdCert(), cdSigningKeyPEM: TestCredentials.cdKey(),
            notBefore: matterTime2025)
        let paaDER = try AttestationCertificate(pem: TestCredentials.paaCert()).der

        // libcrypto builds and checks DAC → PAI → PAA with the PAA as the only trust anchor.
        #expect(OpenSSLCheck.verifyChain(leaf: creds.dac.der, untrusted: [creds.pai.der], trusted: [paaDER]) == nil)
        // As connectedhomeip's ValidateCertificateChain does it: strict, at the DAC's notBefore.
        #expect(
            OpenSSLCheck.verifyChain(
                leaf: creds.dac.der, untrusted: [creds.pai.der], trusted: [paaDER],
                unixTime: MatterEpoch.unixSeconds(creds.dac.notBefore)) == nil)
        #expect(creds.dac.notBefore >= creds.pai.notBefore)
        // And refuses it without the PAI or with another trust anchor.
        #expect(OpenSSLCheck.verifyChain(leaf: creds.dac.der, untrusted: [], trusted: [paaDER]) != nil)
        let otherRoot = try MatterCertificateIssuer.issueRoot(key: P256KeyPair(), rcacID: 1, notBefore: 0).x509DER()
        #expect(OpenSSLCheck.verifyChain(leaf: creds.dac.der, untrusted: [creds.pai.der], trusted: [otherRoot]) != nil)

        #expect(creds.dac.vendorID == 0xFFF1 && creds.dac.productID == 0x8001)
        #expect(creds.pai.vendorID == 0xFFF1 && creds.pai.productID == nil)
        #expect(creds.pai.isCA && creds.pai.pathLengthConstraint == 0)
        #expect(!creds.dac.isCA && creds.dac.keyUsage == .digitalSignature)
        #expect(creds.dac.publicKey == creds.dacKey.publicKey)
        let paa = try AttestationCertificate(der: paaDER)
        #expect(creds.dac.isIssued(by: creds.pai))
        #expect(creds.pai.isIssued(by: paa))
        #expect(!creds.dac.isIssued(by: paa))
        #expect(creds.dac.authorityKeyIdentifier == creds.pai.subjectKeyIdentifier)

        let paiText = OpenSSLCheck.text(creds.pai.der) ?? ""
        #expect(paiText.contains("CA:TRUE, pathlen:0"))
        #expect(paiText.contains("1.3.6.1.4.1.37244.2.1=FFF1"))
        #expect(paiText.contains("Issuer: CN=Matter Test PAA"))
        let dacText = OpenSSLCheck.text(creds.dac.der) ?? ""
        #expect(dacText.contains("CA:FALSE"))
        #expect(dacText.contains("Digital Signature"))
        #expect(dacText.contains("1.3.6.1.4.1.37244.2.2=8001"))
        // The trust store the project hands controllers holds the same PAA.
        let storePAA = try AttestationCertificate(
            pem: String(
                contentsOf:
                    testCredentialsDirectory
                    .appendingPathComponent("paa/Chip-Test-PAA-NoVID-Cert.pem"), encoding: .utf8))
        #expect(storePAA.der == paaDER)
    }

    @Test func dacMustMatchPAIVendor() throws {
        let paa = try AttestationCertificate(pem: TestCredentials.paaCert())
        let paiKey = P256KeyPair()
        let pai = try DeviceAttestationIssuer.issuePAI(
            publicKey: paiKey.publicKey, vendorID: 0xFFF1, productID: 0x8000,
            paa: paa, paaKey: P256KeyPair(pem: TestCredentials.paaKey()), notBefore: matterTime2025)
        #expect(throws: CertificateError.self) {
            try DeviceAttestationIssuer.issueDAC(
                publicKey: P256KeyPair().publicKey, vendorID: 0xFFF2, productID: 0x8000,
                pai: pai, paiKey: paiKey, notBefore: matterTime2025)
        }
        #expect(throws: CertificateError.self) {
            try DeviceAttestationIssuer.issueDAC(
                publicKey: P256KeyPair().publicKey, vendorID: 0xFFF1, productID: 0x8001,
                pai: pai, paiKey: paiKey, notBefore: matterTime2025)
        }
        // A DAC is not a Matter operational certificate (vendor/product ID attributes have no TLV form).
        let dac = try DeviceAttestationIssuer.issueDAC(
            publicKey: P256KeyPair().publicKey, vendorID: 0xFFF1, productID: 0x8000,
            pai: pai, paiKey: paiKey, notBefore: matterTime2025)
        #expect(throws: CertificateError.self) { try MatterCertificate(x509DER: dac.der) }
    }
}

import Foundation

/// connectedhomeip src/credentials/tests/TestCertificationDeclaration.cpp vectors.
enum ChipCDVectors {
    static let content01 = "152400012501f1ff360205008018250334122c04135a494732303134315a423333303030312d3234240500240600250794262408 0018"
    static let signed01 = """
        3081e806092a864886f70d010702a081da3081d7020103310d300b0609608648016503040201304506092a864886f70d010701a0
        380436152400012501f1ff360205008018250334122c04135a494732303134315a423333303030312d32342405002406002507
        9426240800 18317c307a020103801462fa823359acfaa9963e1cfa140addf504f37160300b0609608648016503040201300a
        06082a8648ce3d04030204463044022043a63f2b943df33c38b3e02fcaa75fe3532aebbf5e63f5bbdbc0b1f01d3c4f6002204c
        1abf5f1807b81894b1576c47e4724e4d966c612ed3fa25c118c3f2b3f90369
        """
    static let content02 = """
        152400012501f2ff36020501800502801825033412 2c04135a494732303134325a423333303030322d32342405002406002507
        94262408002509f1ff250a008018
        """
    static let signed02 = """
        3081f506092a864886f70d010702a081e73081e4020103310d300b0609608648016503040201305006092a864886f70d010701a0
        430441152400012501f2ff36020501800502801825033412 2c04135a494732303134325a423333303030322d3234240500240600
        25079426240800 2509f1ff250a008018317e307c020103801462fa823359acfaa9963e1cfa140addf504f37160300b060960864801
        6503040201300a06082a8648ce3d0403020448304602210092 6296f7578158be7c459388336ca7383766c9eedd9855cbda6f4cf6
        bdf43211022100e0dbf4a2bcec4ea274baf0dea208b3365c6ed544086d101afdaf079a2c23e0de
        """
}

@Suite struct CertificationDeclarationTests {
    static let signerKeyID = hex("62FA823359ACFAA9963E1CFA140ADDF504F37160")

    @Test func chipCDContentEncodes() throws {
        let cd1 = CertificationDeclaration(
            vendorID: 0xFFF1, productIDs: [0x8000], deviceTypeID: 0x1234,
            certificateID: "ZIG20141ZB330001-24", versionNumber: 0x2694)
        #expect(try cd1.tlvEncoded() == hex(ChipCDVectors.content01))
        let cd2 = CertificationDeclaration(
            vendorID: 0xFFF2, productIDs: [0x8001, 0x8002], deviceTypeID: 0x1234,
            certificateID: "ZIG20142ZB330002-24", versionNumber: 0x2694,
            dacOriginVendorID: 0xFFF1, dacOriginProductID: 0x8000)
        #expect(try cd2.tlvEncoded() == hex(ChipCDVectors.content02))
        #expect(try CertificationDeclaration(tlv: hex(ChipCDVectors.content02)) == cd2)
    }

    @Test(arguments: [(ChipCDVectors.signed01, ChipCDVectors.content01), (ChipCDVectors.signed02, ChipCDVectors.content02)])
    func chipCMSParsesVerifiesAndReencodes(signed: String, content: String) throws {
        let signerKey = try AttestationCertificate(pem: TestCredentials.cdCert()).publicKey
        let envelope = try CertificationDeclaration.parseCMS(hex(signed))
        #expect(envelope.content == hex(content))
        #expect(envelope.signerKeyIdentifier == Self.signerKeyID)
        let cd = try envelope.verify(signerPublicKey: signerKey)
        #expect(cd.certificateID.hasPrefix("ZIG2014"))
        // Our encoder, given connectedhomeip's signature, reproduces its envelope byte for byte.
        #expect(
            CertificationDeclaration.encodeCMS(
                content: envelope.content, signerKeyIdentifier: envelope.signerKeyIdentifier,
                signatureDER: envelope.signatureDER) == hex(signed))
        // Wrong key fails.
        #expect(throws: CertificateError.signatureInvalid) { try envelope.verify(signerPublicKey: P256KeyPair().publicKey) }
    }

    @Test func ourCMSVerifiesWithOpenSSL() throws {
        let cdKey = try P256KeyPair(pem: TestCredentials.cdKey())
        let cd = CertificationDeclaration(
            vendorID: 0xFFF1, productIDs: [0x8001], deviceTypeID: 0x0100,
            certificateID: "ZIG20142ZB330003-24", versionNumber: 0x2694)
        let cms = try cd.signedCMS(signingKey: cdKey, signerKeyIdentifier: Self.signerKeyID)
        // libcrypto's CMS_verify finds the signer by SKID and checks the signature over the content.
        let content = OpenSSLCheck.cmsVerifiedContent(cms, signerCertPEM: try TestCredentials.cdCert())
        #expect(content == (try cd.tlvEncoded()))
        #expect(try CertificationDeclaration(tlv: content ?? []) == cd)
        // A CMS signed by another key does not verify against the test CD certificate.
        let forged = try cd.signedCMS(signingKey: P256KeyPair(), signerKeyIdentifier: Self.signerKeyID)
        #expect(OpenSSLCheck.cmsVerifiedContent(forged, signerCertPEM: try TestCredentials.cdCert()) == nil)
        #expect(throws: CertificateError.signatureInvalid) {
            try CertificationDeclaration.parseCMS(forged).verify(signerPublicKey: cdKey.publicKey)
        }
    }

    @Test func rejectsBadContent() {
        let bad = CertificationDeclaration(vendorID: 1, productIDs: [], deviceTypeID: 1, certificateID: "short", versionNumber: 1)
        #expect(throws: CertificateError.self) { try bad.tlvEncoded() }
        #expect(throws: CertificateError.self) { try CertificationDeclaration(tlv: [0x15, 0x18]) }
        #expect(throws: CertificateError.self) { try CertificationDeclaration.parseCMS([0x30, 0x00]) }
        var rng = SystemRandomNumberGenerator()
        let signed = hex(ChipCDVectors.signed01)
        for _ in 0..<300 {
            var m = signed
            m[Int.random(in: 0..<m.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
            _ = try? CertificationDeclaration.parseCMS(m)
            _ = try? CertificationDeclaration.parseCMS(Array(m.prefix(Int.random(in: 0..<m.count, using: &rng))))
        }
    }
}

@Suite struct AttestationElementsTests {
    @Test func attestationAndCSRSignatures() throws {
        let dacKey = P256KeyPair()
        let challenge = SecureRandom.bytes(16)
        let nonce = SecureRandom.bytes(32)
        let elements = try DeviceAttestation.attestationElements(
            certificationDeclaration: [1, 2, 3], attestationNonce: nonce, timestamp: 0)
        // TLV: anonymous structure, tags 1, 2, 3.
        #expect(elements.prefix(5) == [0x15, 0x30, 0x01, 0x03, 0x01])
        let parsed = try DeviceAttestation.parseAttestationElements(elements)
        #expect(parsed.attestationNonce == nonce && parsed.certificationDeclaration == [1, 2, 3] && parsed.timestamp == 0)
        let sig = try DeviceAttestation.sign(elements: elements, attestationChallenge: challenge, dacKey: dacKey)
        #expect(
            DeviceAttestation.verify(elements: elements, attestationChallenge: challenge, signature: sig, dacPublicKey: dacKey.publicKey))
        // The signature covers the challenge: another session's challenge fails.
        #expect(
            !DeviceAttestation.verify(
                elements: elements, attestationChallenge: SecureRandom.bytes(16), signature: sig, dacPublicKey: dacKey.publicKey))

        let opKey = P256KeyPair()
        let csr = try CertificateSigningRequest.create(key: opKey)
        let nocsr = try DeviceAttestation.nocsrElements(csr: csr.der, csrNonce: nonce)
        let parsedCSR = try DeviceAttestation.parseNOCSRElements(nocsr)
        #expect(try CertificateSigningRequest(der: parsedCSR.csr).publicKey == opKey.publicKey)
        let csrSig = try DeviceAttestation.sign(elements: nocsr, attestationChallenge: challenge, dacKey: dacKey)
        #expect(
            DeviceAttestation.verify(elements: nocsr, attestationChallenge: challenge, signature: csrSig, dacPublicKey: dacKey.publicKey))
        #expect(throws: CertificateError.self) { try DeviceAttestation.nocsrElements(csr: csr.der, csrNonce: [1]) }
        #expect(throws: CertificateError.self) { try DeviceAttestation.parseNOCSRElements([0x15, 0x18]) }
    }
}
