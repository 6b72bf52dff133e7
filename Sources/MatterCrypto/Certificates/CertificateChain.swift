/// What a validated NOC chain establishes about its subject.
public struct OperationalIdentity: Sendable, Equatable {
    public let nodeID: UInt64
    public let fabricID: UInt64
    public let caseAuthenticatedTags: [UInt32]
    /// The RCAC's public key (input to the compressed fabric ID and CASE destination ID).
    public let rootPublicKey: [UInt8]
    /// The NOC's public key (verifies the peer's CASE signatures).
    public let nodePublicKey: [UInt8]
}

/// Validation of NOC → (ICAC) → RCAC chains (spec 6.5.x, 6.3 certificate path validation).
public enum CertificateChain {
    /// Validates the chain and returns the node's identity. `time` is Matter epoch seconds; nil skips
    /// validity-period checks (a node without a trusted clock, spec 3.5.6.1 "last known good time").
    public static func validate(
        noc: MatterCertificate, icac: MatterCertificate?, rcac: MatterCertificate,
        at time: UInt32? = nil
    ) throws(CertificateError) -> OperationalIdentity {
        // Root: self-issued, self-signed CA.
        guard try rcac.certificateType() == .root else { throw .wrongCertificateType("RCAC subject has no rcac-id") }
        guard rcac.issuer == rcac.subject else { throw .issuerMismatch }
        try checkCA(rcac)
        try rcac.verifySignature(issuerPublicKey: rcac.publicKey)
        try checkValidity(rcac, time)

        var issuer = rcac
        var depthBelowRoot = 0
        if let icac {
            guard try icac.certificateType() == .intermediate else { throw .wrongCertificateType("ICAC subject has no icac-id") }
            try checkIssued(icac, by: rcac)
            try checkCA(icac)
            try checkValidity(icac, time)
            issuer = icac
            depthBelowRoot = 1
        }
        guard try noc.certificateType() == .node else { throw .wrongCertificateType("NOC subject has no node-id") }
        try checkIssued(noc, by: issuer)
        guard !noc.isCA else { throw .wrongCertificateType("NOC is a CA") }
        guard let usage = noc.keyUsage, usage.contains(.digitalSignature), !usage.contains(.keyCertSign) else {
            throw .keyUsageNotPermitted
        }
        if let eku = noc.extendedKeyUsage {
            guard eku.contains(.clientAuth), eku.contains(.serverAuth) else { throw .keyUsageNotPermitted }
        }
        try checkValidity(noc, time)
        if let p = rcac.pathLengthConstraint, depthBelowRoot > Int(p) { throw .pathLengthExceeded }

        guard let nodeID = noc.subject.nodeID, OperationalIdentifiers.isOperationalNodeID(nodeID) else {
            throw .invalidIdentifier("NOC node ID")
        }
        guard let fabricID = noc.subject.fabricID, fabricID != 0 else { throw .invalidIdentifier("NOC fabric ID") }
        // A fabric ID in any CA subject must agree with the NOC's.
        for ca in [rcac] + (icac.map { [$0] } ?? []) {
            if let f = ca.subject.fabricID, f != fabricID { throw .fabricIDMismatch }
        }
        let cats = noc.subject.caseAuthenticatedTags
        guard cats.count <= 3, cats.allSatisfy(OperationalIdentifiers.isValidCASEAuthenticatedTag) else {
            throw .invalidIdentifier("CASE Authenticated Tags")
        }
        return OperationalIdentity(
            nodeID: nodeID, fabricID: fabricID, caseAuthenticatedTags: cats,
            rootPublicKey: rcac.publicKey, nodePublicKey: noc.publicKey)
    }

    static func checkCA(_ cert: MatterCertificate) throws(CertificateError) {
        guard cert.isCA else { throw .notACertificateAuthority }
        guard let usage = cert.keyUsage, usage.contains(.keyCertSign) else { throw .keyUsageNotPermitted }
    }

    static func checkIssued(_ cert: MatterCertificate, by issuer: MatterCertificate) throws(CertificateError) {
        guard cert.issuer == issuer.subject else { throw .issuerMismatch }
        if let akid = cert.authorityKeyIdentifier, let skid = issuer.subjectKeyIdentifier, akid != skid {
            throw .issuerMismatch
        }
        try cert.verifySignature(issuerPublicKey: issuer.publicKey)
    }

    static func checkValidity(_ cert: MatterCertificate, _ time: UInt32?) throws(CertificateError) {
        guard let time else { return }
        guard time >= cert.notBefore else { throw .notYetValid }
        if cert.notAfter != 0, time > cert.notAfter { throw .expired }
    }
}
