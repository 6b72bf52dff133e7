import HomeAPI
import Testing

/// The contract's rules for combining traits into a device type or device (issue #6),
/// one test per row.
@Suite("Connectivity combining rules")
struct ConnectivityRulesTests {
    static func c(_ state: ConnectivityState, _ locality: LocalityType = .unspecified) -> SourceConnectivity {
        SourceConnectivity(connectivityState: state, dataSourceLocality: locality)
    }

    static func combined(_ parts: SourceConnectivity...) -> SourceConnectivity { SourceConnectivity.combining(parts) }

    @Test func allOnlineIsOnline() {
        #expect(Self.combined(Self.c(.online, .direct), Self.c(.online, .direct)) == Self.c(.online, .direct))
    }

    @Test func noneOnlineIsOffline() {
        #expect(Self.combined(Self.c(.offline), Self.c(.offline)) == Self.c(.offline, .unspecified))
    }

    @Test func offlineAndUnknownIsOffline() {
        // None online, but not all unknown: offline.
        #expect(Self.combined(Self.c(.offline), Self.c(.unknown)) == Self.c(.offline, .unspecified))
        #expect(Self.combined(Self.c(.unknown), Self.c(.offline), Self.c(.unknown)).connectivityState == .offline)
    }

    @Test func someOnlineIsPartiallyOnline() {
        #expect(Self.combined(Self.c(.online, .direct), Self.c(.offline)) == Self.c(.partiallyOnline, .direct))
        #expect(Self.combined(Self.c(.online, .remote), Self.c(.unknown)) == Self.c(.partiallyOnline, .remote))
        #expect(Self.combined(Self.c(.partiallyOnline, .direct), Self.c(.offline)) == Self.c(.partiallyOnline, .direct))
    }

    @Test func allUnknownIsUnknown() {
        #expect(Self.combined(Self.c(.unknown), Self.c(.unknown)) == Self.c(.unknown, .unspecified))
        #expect(SourceConnectivity.combining([]) == Self.c(.unknown, .unspecified))
    }

    @Test func localityOfOneKindIsThatKind() {
        for kind in [LocalityType.direct, .localPeer, .remote] {
            #expect(Self.combined(Self.c(.online, kind), Self.c(.online, kind)).dataSourceLocality == kind)
        }
    }

    @Test func localityOfSeveralKindsIsMixed() {
        #expect(Self.combined(Self.c(.online, .direct), Self.c(.online, .remote)) == Self.c(.online, .mixed))
        #expect(Self.combined(Self.c(.online, .localPeer), Self.c(.online, .remote)).dataSourceLocality == .mixed)
        #expect(Self.combined(Self.c(.online, .mixed), Self.c(.online, .direct)).dataSourceLocality == .mixed)
    }

    @Test func localityCountsOnlineTraitsOnly() {
        // An offline or unknown part's locality (stale or not) does not count.
        #expect(Self.combined(Self.c(.online, .direct), Self.c(.offline, .remote)) == Self.c(.partiallyOnline, .direct))
        #expect(Self.combined(Self.c(.online, .remote), Self.c(.unknown, .direct)) == Self.c(.partiallyOnline, .remote))
    }

    @Test func noOnlineTraitIsUnspecified() {
        #expect(Self.combined(Self.c(.offline, .direct), Self.c(.offline, .remote)).dataSourceLocality == .unspecified)
        #expect(Self.combined(Self.c(.unknown, .direct)).dataSourceLocality == .unspecified)
    }

    /// The acceptance table's device-level rows, from their traits.
    @Test func acceptanceTableRows() {
        let matter = [Self.c(.online, .direct), Self.c(.online, .direct)]
        // LAN and cloud up: Matter traits direct, the cloud-only trait remote.
        #expect(SourceConnectivity.combining(matter + [Self.c(.online, .remote)]) == Self.c(.online, .mixed))
        // Cloud down.
        #expect(SourceConnectivity.combining(matter + [Self.c(.offline)]) == Self.c(.partiallyOnline, .direct))
        // LAN down: everything through the relay.
        #expect(SourceConnectivity.combining([Self.c(.online, .remote), Self.c(.online, .remote)]) == Self.c(.online, .remote))
        // Both down.
        #expect(SourceConnectivity.combining([Self.c(.offline), Self.c(.offline)]) == Self.c(.offline, .unspecified))
        // Hub reaches it: Matter traits localPeer.
        #expect(SourceConnectivity.combining([Self.c(.online, .localPeer), Self.c(.online, .localPeer)]) == Self.c(.online, .localPeer))
        // No cloud-only traits, cloud down.
        #expect(SourceConnectivity.combining(matter) == Self.c(.online, .direct))
    }
}
