import Testing
@testable import MatterProtocol

@Suite struct OnboardingPayloadTests {
    // The default test device of connectedhomeip: passcode 20202021, discriminator 3840.
    @Test func manualCodeOfTheTestDevice() throws {
        let payload = OnboardingPayload(vendorID: 0xFFF1, productID: 0x8000, discriminator: 3840, passcode: 20202021)
        #expect(try payload.manualPairingCode() == "34970112332")
        #expect(OnboardingPayload.grouped("34970112332") == "3497-011-2332")
    }

    @Test func manualCodeParsesBack() throws {
        let parsed = try OnboardingPayload.parseManualCode("3497-011-2332")
        #expect(parsed.passcode == 20202021)
        #expect(parsed.shortDiscriminator == 15)
        #expect(parsed.hasShortDiscriminatorOnly)
    }

    @Test func manualCodeRejectsABadCheckDigitAndCharacters() {
        #expect(throws: OnboardingPayloadError.badCheckDigit) { try OnboardingPayload.parseManualCode("34970112333") }
        #expect(throws: OnboardingPayloadError.badCharacter("x")) { try OnboardingPayload.parseManualCode("3497011233x") }
        #expect(throws: OnboardingPayloadError.badLength) { try OnboardingPayload.parseManualCode("123") }
    }

    @Test func qrCodeRoundTrips() throws {
        let payload = OnboardingPayload(
            vendorID: 0xFFF1, productID: 0x8001, discriminator: 3840, passcode: 20202021,
            discoveryCapabilities: .onNetwork)
        let qr = try payload.qrCode()
        #expect(qr.hasPrefix("MT:"))
        #expect(qr.count == 3 + 19)  // 11 bytes → 3×5 + 4 Base38 characters
        #expect(try OnboardingPayload.parseQRCode(qr) == payload)
    }

    // A payload printed by connectedhomeip's example apps (the Linux all-clusters-app).
    @Test func decodesAKnownQRCode() throws {
        let parsed = try OnboardingPayload.parseQRCode("MT:-24J0AFN00KA0648G00")
        #expect(parsed.vendorID == 0xFFF1)
        #expect(parsed.productID == 0x8001)  // the all-clusters-app product
        #expect(parsed.discriminator == 3840)
        #expect(parsed.passcode == 20202021)
        #expect(parsed.discoveryCapabilities == .onNetwork)  // Linux example apps are on-network only
    }

    @Test func invalidPasscodesAreRefused() {
        for bad: UInt32 in [0, 11111111, 22222222, 99999999, 12345678, 87654321, 100_000_000] {
            #expect(!OnboardingPayload.isValidPasscode(bad))
            #expect(throws: OnboardingPayloadError.invalidPasscode(bad)) {
                try OnboardingPayload(vendorID: 1, productID: 1, discriminator: 1, passcode: bad).manualPairingCode()
            }
        }
        #expect(OnboardingPayload.isValidPasscode(20202021))
    }

    @Test func base38RejectsForeignCharacters() {
        #expect(throws: OnboardingPayloadError.badCharacter("a")) { try OnboardingPayload.parseQRCode("MT:aaaaa") }
    }
}
