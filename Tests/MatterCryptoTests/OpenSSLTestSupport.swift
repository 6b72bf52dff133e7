import COpenSSL

/// Independent checks with libcrypto's X.509 / CMS code, so tests do not only agree with themselves.
enum OpenSSLCheck {
    static func x509(_ der: [UInt8]) -> OpaquePointer? {
        der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_X509(nil, &p, buf.count)
        }
    }

    /// X509_verify of `certDER` with the public key of `issuerDER`.
    static func signatureVerifies(_ certDER: [UInt8], issuer issuerDER: [UInt8]) -> Bool {
        guard let cert = x509(certDER) else { return false }
        defer { X509_free(cert) }
        guard let issuer = x509(issuerDER) else { return false }
        defer { X509_free(issuer) }
        guard let key = X509_get0_pubkey(issuer) else { return false }
        return X509_verify(cert, key) == 1
    }

    /// X509_verify_cert with `trusted` as the only trust anchors and `untrusted` as chain candidates, in
    /// X509_STRICT mode, at `unixTime` if given (connectedhomeip validates attestation chains at the
    /// DAC's notBefore). Returns nil on success, else libcrypto's error text.
    static func verifyChain(leaf: [UInt8], untrusted: [[UInt8]], trusted: [[UInt8]], unixTime: Int64? = nil) -> String? {
        guard let store = X509_STORE_new() else { return "X509_STORE_new" }
        defer { X509_STORE_free(store) }
        for t in trusted {
            guard let c = x509(t) else { return "bad trusted cert" }
            X509_STORE_add_cert(store, c)
            X509_free(c)
        }
        guard let stack = OPENSSL_sk_new_null() else { return "sk_new" }
        var held: [OpaquePointer] = []
        defer {
            OPENSSL_sk_free(stack)
            for c in held { X509_free(c) }
        }
        for u in untrusted {
            guard let c = x509(u) else { return "bad untrusted cert" }
            held.append(c)
            OPENSSL_sk_push(stack, UnsafeRawPointer(c))
        }
        guard let leafCert = x509(leaf) else { return "bad leaf" }
        held.append(leafCert)
        guard let ctx = X509_STORE_CTX_new() else { return "ctx" }
        defer { X509_STORE_CTX_free(ctx) }
        guard X509_STORE_CTX_init(ctx, store, leafCert, stack) == 1 else { return "ctx init" }
        guard let param = X509_STORE_CTX_get0_param(ctx) else { return "param" }
        X509_VERIFY_PARAM_set_flags(param, UInt(X509_V_FLAG_X509_STRICT))
        if let unixTime { X509_VERIFY_PARAM_set_time(param, time_t(unixTime)) }
        if X509_verify_cert(ctx) == 1 { return nil }
        return String(cString: X509_verify_cert_error_string(Int(X509_STORE_CTX_get_error(ctx))))
    }

    /// Human-readable certificate text (X509_print), for assertions on what OpenSSL sees.
    static func text(_ der: [UInt8]) -> String? {
        guard let cert = x509(der), let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { X509_free(cert); BIO_free(bio) }
        guard X509_print(bio, cert) == 1 else { return nil }
        return readAll(bio)
    }

    static func readAll(_ bio: OpaquePointer) -> String {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = BIO_read(bio, &buf, Int32(buf.count))
            if n <= 0 { break }
            out += buf[0..<Int(n)]
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// CMS_verify of a DER SignedData with `signerCertPEM` supplied as the signer certificate (its chain
    /// is not checked, only the signature). Returns the verified content, or nil.
    static func cmsVerifiedContent(_ der: [UInt8], signerCertPEM: String) -> [UInt8]? {
        let cms: OpaquePointer? = der.withUnsafeBufferPointer { buf in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_CMS_ContentInfo(nil, &p, buf.count)
        }
        guard let cms else { return nil }
        defer { CMS_ContentInfo_free(cms) }
        let pemBytes = Array(signerCertPEM.utf8)
        guard let certBIO = pemBytes.withUnsafeBytes({ BIO_new_mem_buf($0.baseAddress, Int32($0.count)) }) else { return nil }
        defer { BIO_free(certBIO) }
        guard let signer = PEM_read_bio_X509(certBIO, nil, nil, nil) else { return nil }
        defer { X509_free(signer) }
        guard let certs = OPENSSL_sk_new_null(), let out = BIO_new(BIO_s_mem()) else { return nil }
        defer { OPENSSL_sk_free(certs); BIO_free(out) }
        OPENSSL_sk_push(certs, UnsafeRawPointer(signer))
        let flags = UInt32(CMS_NO_SIGNER_CERT_VERIFY | CMS_BINARY)
        guard CMS_verify(cms, certs, nil, nil, out, flags) == 1 else { return nil }
        return readAllBytes(out)
    }

    static func readAllBytes(_ bio: OpaquePointer) -> [UInt8] {
        var out: [UInt8] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = BIO_read(bio, &buf, Int32(buf.count))
            if n <= 0 { break }
            out += buf[0..<Int(n)]
        }
        return out
    }
}
