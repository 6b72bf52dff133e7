// GENERATED from DeviceProfiles/credentials/*.pem: do not edit by hand.
//
// TEST ONLY. These are the Matter test credentials connectedhomeip publishes (the test
// PAA "Chip-Test-PAA-NoVID" and the test Certification Declaration signing key). Their
// private keys are public knowledge: anything signed with them proves nothing. They let
// `matter-sim run` mint development DACs that the reference controller accepts with its
// test trust store. Never use them for a product.

extension AttestationAuthority {
    /// The published Matter test PAA and CD signing credentials (TEST ONLY, see above).
    public static let connectedhomeipTest = AttestationAuthority(
        paaCertificatePEM: TestAttestationAuthority.paaCertificatePEM,
        paaKeyPEM: TestAttestationAuthority.paaKeyPEM,
        cdSigningCertificatePEM: TestAttestationAuthority.cdSigningCertificatePEM,
        cdSigningKeyPEM: TestAttestationAuthority.cdSigningKeyPEM)
}

/// The four PEM files, verbatim (TEST ONLY).
enum TestAttestationAuthority {
    /// Chip-Test-PAA-NoVID-Cert.pem
    static let paaCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBkTCCATegAwIBAgIHC4+6qN2G7jAKBggqhkjOPQQDAjAaMRgwFgYDVQQDDA9N
        YXR0ZXIgVGVzdCBQQUEwIBcNMjEwNjI4MTQyMzQzWhgPOTk5OTEyMzEyMzU5NTla
        MBoxGDAWBgNVBAMMD01hdHRlciBUZXN0IFBBQTBZMBMGByqGSM49AgEGCCqGSM49
        AwEHA0IABBDvAqgah7aBIfuo0xl4+AejF+UKqKgoRGgokUuTPejt1KXDnJ/3Gkzj
        ZH/X9iZTt9JJX8ukwPR/h2iAA54HIEqjZjBkMBIGA1UdEwEB/wQIMAYBAf8CAQEw
        DgYDVR0PAQH/BAQDAgEGMB0GA1UdDgQWBBR4XOcFuGuPTm/Hk6pgy0PqaWiC1TAf
        BgNVHSMEGDAWgBR4XOcFuGuPTm/Hk6pgy0PqaWiC1TAKBggqhkjOPQQDAgNIADBF
        AiEAue/bPqBqUuwL8B5h2u0sLRVt22zwFBAdq3mPrAX6R+UCIGAGHT411g2dSw1E
        ja12EvfoXFguP8MS3Bh5TdNzcV5d
        -----END CERTIFICATE-----
        """

    /// Chip-Test-PAA-NoVID-Key.pem
    static let paaKeyPEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIOHwc8k0hTuv+zi/fova16CmdBB8d2mJKg/y4GwaLvenoAoGCCqGSM49
        AwEHoUQDQgAEEO8CqBqHtoEh+6jTGXj4B6MX5QqoqChEaCiRS5M96O3UpcOcn/ca
        TONkf9f2JlO30klfy6TA9H+HaIADngcgSg==
        -----END EC PRIVATE KEY-----
        """

    /// Chip-Test-CD-Signing-Cert.pem
    static let cdSigningCertificatePEM = """
        -----BEGIN CERTIFICATE-----
        MIIBszCCAVqgAwIBAgIIRdrzneR6oI8wCgYIKoZIzj0EAwIwKzEpMCcGA1UEAwwg
        TWF0dGVyIFRlc3QgQ0QgU2lnbmluZyBBdXRob3JpdHkwIBcNMjEwNjI4MTQyMzQz
        WhgPOTk5OTEyMzEyMzU5NTlaMCsxKTAnBgNVBAMMIE1hdHRlciBUZXN0IENEIFNp
        Z25pbmcgQXV0aG9yaXR5MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEPDmJIkUr
        VcrzicJb0bykZWlSzLkOiGkkmthHRlMBTL+V1oeWXgNrUhxRA35rjO3vyh60QEZp
        T6CIgu7WUZ3suqNmMGQwEgYDVR0TAQH/BAgwBgEB/wIBATAOBgNVHQ8BAf8EBAMC
        AQYwHQYDVR0OBBYEFGL6gjNZrPqplj4c+hQK3fUE83FgMB8GA1UdIwQYMBaAFGL6
        gjNZrPqplj4c+hQK3fUE83FgMAoGCCqGSM49BAMCA0cAMEQCICxUXOTkV9im8NnZ
        u+vW7OHd/n+MbZps83UyH8b6xxOEAiBUB3jodDlyUn7t669YaGIgtUB48s1OYqdq
        58u5L/VMiw==
        -----END CERTIFICATE-----
        """

    /// Chip-Test-CD-Signing-Key.pem
    static let cdSigningKeyPEM = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIK7zSEEW6UgexXvgRy30G/SZBk5QJK2GnspeiJgC1IB1oAoGCCqGSM49
        AwEHoUQDQgAEPDmJIkUrVcrzicJb0bykZWlSzLkOiGkkmthHRlMBTL+V1oeWXgNr
        UhxRA35rjO3vyh60QEZpT6CIgu7WUZ3sug==
        -----END EC PRIVATE KEY-----
        """
}
