import MatterTLV

// PASE message payloads (Matter Core spec 4.14.1.2), TLV structures with context tags.

/// Length of the random values in PBKDFParamRequest/Response.
let paseRandomLength = 32

/// PBKDFParamRequest (opcode 0x20).
public struct PBKDFParamRequest: Sendable, Hashable {
    public var initiatorRandom: [UInt8]
    public var initiatorSessionID: UInt16
    /// 0: the default commissioning passcode (the only one defined).
    public var passcodeID: UInt16
    /// True if the initiator already knows salt and iterations (then the response omits them).
    public var hasPBKDFParameters: Bool
    public var initiatorSessionParameters: SessionParameters?

    public init(
        initiatorRandom: [UInt8], initiatorSessionID: UInt16, passcodeID: UInt16 = 0,
        hasPBKDFParameters: Bool = false, initiatorSessionParameters: SessionParameters? = nil
    ) {
        self.initiatorRandom = initiatorRandom
        self.initiatorSessionID = initiatorSessionID
        self.passcodeID = passcodeID
        self.hasPBKDFParameters = hasPBKDFParameters
        self.initiatorSessionParameters = initiatorSessionParameters
    }

    public func encoded() -> [UInt8] {
        var fields: [TLVElement] = [
            .context(1, .bytes(initiatorRandom)),
            .context(2, .unsigned(UInt64(initiatorSessionID))),
            .context(3, .unsigned(UInt64(passcodeID))),
            .context(4, .bool(hasPBKDFParameters)),
        ]
        if let p = initiatorSessionParameters { fields.append(p.tlv(tag: .context(5))) }
        return TLVElement(.structure(fields)).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "PBKDFParamRequest")
        initiatorRandom = try s.bytes(1, length: paseRandomLength)
        initiatorSessionID = UInt16(try s.unsigned(2, max: UInt64(UInt16.max)))
        passcodeID = UInt16(try s.unsigned(3, max: UInt64(UInt16.max)))
        hasPBKDFParameters = try s.bool(4)
        initiatorSessionParameters = try s.sessionParameters(5)
    }
}

/// Salt and iteration count for the passcode's PBKDF2 (pbkdf_parameters).
public struct PBKDFParameters: Sendable, Hashable {
    public var iterations: UInt32
    public var salt: [UInt8]

    public init(iterations: UInt32, salt: [UInt8]) {
        self.iterations = iterations
        self.salt = salt
    }
}

/// PBKDFParamResponse (opcode 0x21).
public struct PBKDFParamResponse: Sendable, Hashable {
    public var initiatorRandom: [UInt8]
    public var responderRandom: [UInt8]
    public var responderSessionID: UInt16
    public var pbkdfParameters: PBKDFParameters?
    public var responderSessionParameters: SessionParameters?

    public init(
        initiatorRandom: [UInt8], responderRandom: [UInt8], responderSessionID: UInt16,
        pbkdfParameters: PBKDFParameters?, responderSessionParameters: SessionParameters?
    ) {
        self.initiatorRandom = initiatorRandom
        self.responderRandom = responderRandom
        self.responderSessionID = responderSessionID
        self.pbkdfParameters = pbkdfParameters
        self.responderSessionParameters = responderSessionParameters
    }

    public func encoded() -> [UInt8] {
        var fields: [TLVElement] = [
            .context(1, .bytes(initiatorRandom)),
            .context(2, .bytes(responderRandom)),
            .context(3, .unsigned(UInt64(responderSessionID))),
        ]
        if let p = pbkdfParameters {
            fields.append(
                .context(
                    4,
                    .structure([
                        .context(1, .unsigned(UInt64(p.iterations))),
                        .context(2, .bytes(p.salt)),
                    ])))
        }
        if let p = responderSessionParameters { fields.append(p.tlv(tag: .context(5))) }
        return TLVElement(.structure(fields)).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "PBKDFParamResponse")
        initiatorRandom = try s.bytes(1, length: paseRandomLength)
        responderRandom = try s.bytes(2, length: paseRandomLength)
        responderSessionID = UInt16(try s.unsigned(3, max: UInt64(UInt16.max)))
        if let p = try s.structure(4) {
            pbkdfParameters = PBKDFParameters(
                iterations: UInt32(try p.unsigned(1, max: UInt64(UInt32.max))),
                salt: try p.bytes(2, lengths: 16...32))
        } else {
            pbkdfParameters = nil
        }
        responderSessionParameters = try s.sessionParameters(5)
    }
}

/// Pake1 (opcode 0x22): the prover's share pA.
public struct Pake1: Sendable, Hashable {
    public var pA: [UInt8]
    public init(pA: [UInt8]) { self.pA = pA }

    public func encoded() -> [UInt8] {
        TLVElement(.structure([.context(1, .bytes(pA))])).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Pake1")
        pA = try s.bytes(1, length: 65)
    }
}

/// Pake2 (opcode 0x23): the verifier's share pB and confirmation cB.
public struct Pake2: Sendable, Hashable {
    public var pB: [UInt8]
    public var cB: [UInt8]
    public init(pB: [UInt8], cB: [UInt8]) {
        self.pB = pB
        self.cB = cB
    }

    public func encoded() -> [UInt8] {
        TLVElement(.structure([.context(1, .bytes(pB)), .context(2, .bytes(cB))])).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Pake2")
        pB = try s.bytes(1, length: 65)
        cB = try s.bytes(2, length: 32)
    }
}

/// Pake3 (opcode 0x24): the prover's confirmation cA.
public struct Pake3: Sendable, Hashable {
    public var cA: [UInt8]
    public init(cA: [UInt8]) { self.cA = cA }

    public func encoded() -> [UInt8] {
        TLVElement(.structure([.context(1, .bytes(cA))])).encoded()
    }

    public init(decoding bytes: [UInt8]) throws(SecureChannelError) {
        let s = try TLVStructReader(bytes, what: "Pake3")
        cA = try s.bytes(1, length: 32)
    }
}
