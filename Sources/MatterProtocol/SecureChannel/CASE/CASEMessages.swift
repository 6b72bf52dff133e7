import MatterTLV

// CASE message payloads (Matter Core spec 4.14.2.3), TLV structures with context tags.

let caseRandomLength = 32
let p256PublicKeyLength = 65
let resumptionIDLength = 16
let aeadMICLength = 16

/// Sigma1 (opcode 0x30).
public struct Sigma1: Sendable, Hashable {
    public var initiatorRandom: [UInt8]
    public var initiatorSessionID: UInt16
    public var destinationID: [UInt8]
    public var initiatorEphemeralPublicKey: [UInt8]
    public var initiatorSessionParameters: SessionParameters?
    public var resumptionID: [UInt8]?
    public var initiatorResumeMIC: [UInt8]?

    public init(
        initiatorRandom: [UInt8], initiatorSessionID: UInt16, destinationID: [UInt8],
        initiatorEphemeralPublicKey: [UInt8], initiatorSessionParameters: SessionParameters?,
        resumptionID: [UInt8]? = nil, initiatorResumeMIC: [UInt8]? = nil
    ) {
        self.initiatorRandom = initiatorRandom
        self.initiatorSessionID = initiatorSessionID
        self.destinationID = destinationID
        self.initiatorEphemeralPublicKey = initiatorEphemeralPublicKey
        self.initiatorSessionParameters = initiatorSessionParameters
        self.resumptionID = resumptionID
        self.initiatorResumeMIC = initiatorResumeMIC
    }

    public func encoded() -> [UInt8] {
        var fields: [TLVElement] = [
            .context(1, .bytes(initiatorRandom)),
            .context(2, .unsigned(UInt64(initiatorSessionID))),
            .context(3, .bytes(destinationID)),
            .context(4, .bytes(initiatorEphemeralPublicKey)),
        ]
        if let p = initiatorSessionParameters { fields.append(p.tlv(tag: .context(5))) }
        if let r = resumptionID { fields.append(.context(6, .bytes(r))) }
        if let m = initiatorResumeMIC { fields.append(.context(7, .bytes(m))) }
        return TLVElement(.structure(fields)).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Sigma1")
        initiatorRandom = try s.bytes(1, length: caseRandomLength)
        initiatorSessionID = UInt16(try s.unsigned(2, max: UInt64(UInt16.max)))
        destinationID = try s.bytes(3, length: 32)
        initiatorEphemeralPublicKey = try s.bytes(4, length: p256PublicKeyLength)
        initiatorSessionParameters = try s.sessionParameters(5)
        resumptionID = try s.optionalBytes(6, length: resumptionIDLength)
        initiatorResumeMIC = try s.optionalBytes(7, length: aeadMICLength)
    }
}

/// Sigma2 (opcode 0x31).
public struct Sigma2: Sendable, Hashable {
    public var responderRandom: [UInt8]
    public var responderSessionID: UInt16
    public var responderEphemeralPublicKey: [UInt8]
    /// TBEData2 encrypted with S2K, MIC appended.
    public var encrypted2: [UInt8]
    public var responderSessionParameters: SessionParameters?

    public init(
        responderRandom: [UInt8], responderSessionID: UInt16, responderEphemeralPublicKey: [UInt8],
        encrypted2: [UInt8], responderSessionParameters: SessionParameters?
    ) {
        self.responderRandom = responderRandom
        self.responderSessionID = responderSessionID
        self.responderEphemeralPublicKey = responderEphemeralPublicKey
        self.encrypted2 = encrypted2
        self.responderSessionParameters = responderSessionParameters
    }

    public func encoded() -> [UInt8] {
        var fields: [TLVElement] = [
            .context(1, .bytes(responderRandom)),
            .context(2, .unsigned(UInt64(responderSessionID))),
            .context(3, .bytes(responderEphemeralPublicKey)),
            .context(4, .bytes(encrypted2)),
        ]
        if let p = responderSessionParameters { fields.append(p.tlv(tag: .context(5))) }
        return TLVElement(.structure(fields)).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Sigma2")
        responderRandom = try s.bytes(1, length: caseRandomLength)
        responderSessionID = UInt16(try s.unsigned(2, max: UInt64(UInt16.max)))
        responderEphemeralPublicKey = try s.bytes(3, length: p256PublicKeyLength)
        encrypted2 = try s.bytes(4, lengths: (aeadMICLength + 1)...4096)
        responderSessionParameters = try s.sessionParameters(5)
    }
}

/// Sigma3 (opcode 0x32).
public struct Sigma3: Sendable, Hashable {
    /// TBEData3 encrypted with S3K, MIC appended.
    public var encrypted3: [UInt8]
    public init(encrypted3: [UInt8]) { self.encrypted3 = encrypted3 }

    public func encoded() -> [UInt8] {
        TLVElement(.structure([.context(1, .bytes(encrypted3))])).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Sigma3")
        encrypted3 = try s.bytes(1, lengths: (aeadMICLength + 1)...4096)
    }
}

/// Sigma2_Resume (opcode 0x33).
public struct Sigma2Resume: Sendable, Hashable {
    public var resumptionID: [UInt8]
    public var sigma2ResumeMIC: [UInt8]
    public var responderSessionID: UInt16
    public var responderSessionParameters: SessionParameters?

    public init(
        resumptionID: [UInt8], sigma2ResumeMIC: [UInt8], responderSessionID: UInt16,
        responderSessionParameters: SessionParameters?
    ) {
        self.resumptionID = resumptionID
        self.sigma2ResumeMIC = sigma2ResumeMIC
        self.responderSessionID = responderSessionID
        self.responderSessionParameters = responderSessionParameters
    }

    public func encoded() -> [UInt8] {
        var fields: [TLVElement] = [
            .context(1, .bytes(resumptionID)),
            .context(2, .bytes(sigma2ResumeMIC)),
            .context(3, .unsigned(UInt64(responderSessionID))),
        ]
        if let p = responderSessionParameters { fields.append(p.tlv(tag: .context(4))) }
        return TLVElement(.structure(fields)).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Sigma2_Resume")
        resumptionID = try s.bytes(1, length: resumptionIDLength)
        sigma2ResumeMIC = try s.bytes(2, length: aeadMICLength)
        responderSessionID = UInt16(try s.unsigned(3, max: UInt64(UInt16.max)))
        responderSessionParameters = try s.sessionParameters(4)
    }
}

/// The signed part of Sigma2/Sigma3 (TBSData2/TBSData3): sender NOC, ICAC,
/// sender's and receiver's ephemeral keys.
struct CASESignedData {
    var noc: [UInt8]
    var icac: [UInt8]?
    var senderEphemeralPublicKey: [UInt8]
    var receiverEphemeralPublicKey: [UInt8]

    func encoded() -> [UInt8] {
        var fields: [TLVElement] = [.context(1, .bytes(noc))]
        if let icac { fields.append(.context(2, .bytes(icac))) }
        fields.append(.context(3, .bytes(senderEphemeralPublicKey)))
        fields.append(.context(4, .bytes(receiverEphemeralPublicKey)))
        return TLVElement(.structure(fields)).encoded()
    }
}

/// The encrypted part of Sigma2/Sigma3 (TBEData2/TBEData3); Sigma2's carries a resumption ID.
struct CASEEncryptedData {
    var noc: [UInt8]
    var icac: [UInt8]?
    var signature: [UInt8]
    var resumptionID: [UInt8]?

    func encoded() -> [UInt8] {
        var fields: [TLVElement] = [.context(1, .bytes(noc))]
        if let icac { fields.append(.context(2, .bytes(icac))) }
        fields.append(.context(3, .bytes(signature)))
        if let resumptionID { fields.append(.context(4, .bytes(resumptionID))) }
        return TLVElement(.structure(fields)).encoded()
    }

    init(noc: [UInt8], icac: [UInt8]?, signature: [UInt8], resumptionID: [UInt8]?) {
        self.noc = noc
        self.icac = icac
        self.signature = signature
        self.resumptionID = resumptionID
    }

    init(decoding bytes: [UInt8], what: String, requireResumptionID: Bool) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: what)
        noc = try s.bytes(1, lengths: 1...600)
        icac = try s.optionalBytes(2, lengths: 1...600)
        signature = try s.bytes(3, length: 64)
        resumptionID = requireResumptionID ? try s.bytes(4, length: resumptionIDLength) : nil
    }
}
