import Testing

@testable import MatterDNSSD

/// The browse bookkeeping without Avahi: sightings per interface and transport, resolvers,
/// shared address lookups, and the events they add up to.
@Suite struct BrowseModelTests {
    typealias Key = BrowseModel.ServiceKey
    typealias Host = BrowseModel.HostKey

    let inet: Int32 = 0
    let inet6: Int32 = 1
    let node = Key(name: "00ABCDEF01234567", domain: "local")
    let other = Key(name: "1111111111111111", domain: "local")
    let third = Key(name: "2222222222222222", domain: "local")
    let host = Host(interface: 2, hostName: "Dev-A.local.")
    let v4 = DNSSDAddress(family: .ipv4, bytes: [10, 77, 0, 2], interfaceIndex: 2)!
    let v6 = DNSSDAddress("fe80::1", interfaceIndex: 2)!
    let txt = DNSSDTXTRecord(["D": "3840", "CM": "1"])

    @Test func hostKeysCompareAsDNSNames() {
        #expect(host == Host(interface: 2, hostName: "dev-a.local"))
        #expect(host != Host(interface: 3, hostName: "dev-a.local"))
    }

    @Test func oneResolverPerInterfaceWhateverTheTransport() {
        var model = BrowseModel(type: "_matterc._udp")
        #expect(model.serviceAppeared(node, interface: 2, protocol: inet).effects == [.startResolver(node, interface: 2)])
        #expect(model.serviceAppeared(node, interface: 2, protocol: inet6).effects.isEmpty)
        #expect(model.serviceAppeared(node, interface: 3, protocol: inet).effects == [.startResolver(node, interface: 3)])
    }

    @Test func addedOnceSRVTXTAndBothAddressFamiliesAreKnown() throws {
        var model = BrowseModel(type: "_matterc._udp")
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        let resolved = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        #expect(resolved.effects == [.startHostLookup(host)])
        #expect(resolved.events.isEmpty)
        // IPv4 found but IPv6 still being looked up: not yet.
        #expect(model.addressAppeared(host, v4, protocol: inet).events.isEmpty)
        let added = model.addressAppeared(host, v6, protocol: inet6).events
        let service = DNSSDResolvedService(
            instanceName: node.name, type: "_matterc._udp", domain: "local", hostName: "dev-a.local", port: 5540,
            addresses: [v4, v6], txt: txt)
        #expect(added == [.added(service)])
        #expect(model.announcedServices == [service])
    }

    @Test func aFamilyWithNothingToFindStopsHoldingBack() {
        var model = BrowseModel(type: "_matterc._udp")
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        #expect(model.addressAppeared(host, v4, protocol: inet).events.isEmpty)
        let events = model.hostLookupSettled(host, family: .ipv6).events
        guard case let .added(service)? = events.first else {
            Issue.record("expected added, got \(events)")
            return
        }
        #expect(service.addresses == [v4])
    }

    @Test func changesAfterAddedAreUpdates() {
        var model = announced()
        var changed = txt
        changed["CM"] = "0"
        let events = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: changed).events
        #expect(events.count == 1)
        guard case let .updated(service)? = events.first else {
            Issue.record("expected updated, got \(events)")
            return
        }
        #expect(service.txt["CM"] == "0")
        // The same again is no news.
        #expect(model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: changed).events.isEmpty)
        // A new address is.
        let extra = DNSSDAddress("10.77.0.9", interfaceIndex: 2)!
        guard case let .updated(withExtra)? = model.addressAppeared(host, extra, protocol: inet).events.first else {
            Issue.record("expected an update for the new address")
            return
        }
        #expect(withExtra.addresses == [v4, extra, v6])
    }

    @Test func anAddressSeenOverBothTransportsStaysUntilGoneFromBoth() {
        var model = announced()
        #expect(model.addressAppeared(host, v4, protocol: inet6).events.isEmpty)
        #expect(model.addressDisappeared(host, v4, protocol: inet).events.isEmpty)
        guard case let .updated(service)? = model.addressDisappeared(host, v4, protocol: inet6).events.first else {
            Issue.record("expected an update without the IPv4 address")
            return
        }
        #expect(service.addresses == [v6])
    }

    @Test func removedWhenGoneFromEveryInterfaceAndTransport() {
        var model = announced()
        _ = model.serviceAppeared(node, interface: 2, protocol: inet6)
        #expect(model.serviceDisappeared(node, interface: 2, protocol: inet) == .init())
        let gone = model.serviceDisappeared(node, interface: 2, protocol: inet6)
        #expect(gone.effects == [.stopResolver(node, interface: 2), .stopHostLookup(host)])
        #expect(gone.events == [.removed(instanceName: node.name)])
        #expect(model.announcedServices.isEmpty)
        #expect(model.hostLookups.isEmpty)
    }

    @Test func servicesOfOneHostShareItsAddressLookup() {
        var model = announced()
        _ = model.serviceAppeared(other, interface: 2, protocol: inet)
        let resolved = model.serviceResolved(other, interface: 2, hostName: "DEV-A.local", port: 5541, txt: txt)
        // The host is known and ready: no new lookup, the service is complete at once.
        #expect(resolved.effects.isEmpty)
        guard case let .added(service)? = resolved.events.first else {
            Issue.record("expected added, got \(resolved.events)")
            return
        }
        #expect(service.addresses == [v4, v6])
        #expect(service.port == 5541)
        // One goes; the lookup stays for the other.
        let gone = model.serviceDisappeared(node, interface: 2, protocol: inet)
        #expect(gone.effects == [.stopResolver(node, interface: 2)])
        #expect(model.hostLookups == [host])
        // An address change now concerns only the remaining service.
        let events = model.addressDisappeared(host, v6, protocol: inet6).events
        #expect(events.map(\.instanceName) == [other.name])
    }

    @Test func aMovedServiceReleasesItsOldHost() {
        var model = announced()
        let moved = model.serviceResolved(node, interface: 2, hostName: "dev-b.local", port: 5540, txt: txt)
        let newHost = Host(interface: 2, hostName: "dev-b.local")
        #expect(Set(moved.effects) == [.stopHostLookup(host), .startHostLookup(newHost)])
        #expect(model.hostLookups == [newHost])
    }

    @Test func lateAnswersForGoneServicesAreIgnored() {
        var model = BrowseModel(type: "_matterc._udp")
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceDisappeared(node, interface: 2, protocol: inet)
        let late = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        #expect(late.effects.isEmpty && late.events.isEmpty)
        #expect(model.addressAppeared(host, v4, protocol: inet).events.isEmpty)
        #expect(model.serviceDisappeared(node, interface: 2, protocol: inet) == .init())
    }

    @Test func unannouncedServicesLeaveSilently() {
        var model = BrowseModel(type: "_matterc._udp")
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        #expect(model.serviceDisappeared(node, interface: 2, protocol: inet).events.isEmpty)
    }

    @Test func losingTheDaemonRemovesWhatWasAnnounced() {
        var model = announced()
        _ = model.serviceAppeared(other, interface: 2, protocol: inet)
        let lost = model.connectionLost()
        #expect(lost.events == [.removed(instanceName: node.name)])
        #expect(lost.effects.isEmpty)
        #expect(model.hostLookups.isEmpty)
        // Found again afterwards: a fresh `added`.
        #expect(model.serviceAppeared(node, interface: 2, protocol: inet).effects == [.startResolver(node, interface: 2)])
    }

    @Test func servicesPastTheFollowLimitAreResolvedOnceThenLetGo() {
        // `node` is followed (the limit is one); `other`, on another host, gets one resolver
        // that also finds an address (no address lookups) on each interface it is seen on,
        // and is announced by whichever answers first.
        var model = announced(followLimit: 1)
        let v6b = DNSSDAddress("fe80::2", interfaceIndex: 3)!
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects == [.resolveOnce(other, interface: 2)])
        #expect(model.serviceAppeared(other, interface: 3, protocol: inet).effects == [.resolveOnce(other, interface: 3)])
        let found = model.serviceResolvedOnce(other, interface: 3, hostName: "dev-b.local", port: 5541, txt: txt, address: v6b)
        #expect(found.events.map(\.instanceName) == [other.name])
        if case let .added(service)? = found.events.first {
            #expect(service.addresses == [v6b])
            #expect(service.port == 5541)
        }
        #expect(found.effects == [.stopResolver(other, interface: 2), .stopResolver(other, interface: 3)])
        #expect(model.hostLookups == [host])
        #expect(model.followedServices == 1)
        // Late answers are ignored, and a further interface is not resolved.
        #expect(model.serviceResolvedOnce(other, interface: 2, hostName: "dev-b.local", port: 9, txt: txt, address: nil) == .init())
        #expect(model.serviceResolved(other, interface: 3, hostName: "dev-b.local", port: 9, txt: txt) == .init())
        #expect(model.serviceAppeared(other, interface: 4, protocol: inet).effects.isEmpty)
        // The followed one still reports its changes.
        #expect(model.addressDisappeared(host, v6, protocol: inet6).events.map(\.instanceName) == [node.name])
        // Gone from every interface: removed, with nothing left to stop.
        #expect(model.serviceDisappeared(other, interface: 4, protocol: inet) == .init())
        #expect(model.serviceDisappeared(other, interface: 3, protocol: inet) == .init())
        #expect(model.serviceDisappeared(other, interface: 2, protocol: inet)
            == .init(effects: [], events: [.removed(instanceName: other.name)]))
    }

    /// A service gone while it is being resolved once: its resolver stops; a late answer is ignored.
    @Test func aServiceGoneWhileResolvedOnceStopsItsResolvers() {
        var model = announced(followLimit: 1)
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects == [.resolveOnce(other, interface: 2)])
        #expect(model.serviceDisappeared(other, interface: 2, protocol: inet).effects == [.stopResolver(other, interface: 2)])
        #expect(model.serviceResolvedOnce(other, interface: 2, hostName: "dev-b.local", port: 9, txt: txt, address: nil) == .init())
    }

    @Test func aFreedPlaceIsTakenByTheNextServiceAnnounced() {
        var model = announced(followLimit: 1)
        // `node` goes: the next service announced is followed again.
        _ = model.serviceDisappeared(node, interface: 2, protocol: inet)
        _ = model.serviceAppeared(other, interface: 2, protocol: inet)
        _ = model.serviceResolved(other, interface: 2, hostName: "dev-a.local", port: 5541, txt: txt)
        _ = model.addressAppeared(host, v4, protocol: inet)
        let added = model.hostLookupSettled(host, family: .ipv6)
        #expect(added.events.map(\.instanceName) == [other.name])
        #expect(added.effects.isEmpty)
        #expect(model.followedServices == 1)
        #expect(model.hostLookups == [host])
    }

    @Test func aServiceResolvedOnceLeavesTheFollowedHostsLookupAlone() {
        var model = announced(followLimit: 1)
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects == [.resolveOnce(other, interface: 2)])
        let resolved = model.serviceResolvedOnce(other, interface: 2, hostName: "dev-a.local", port: 5541, txt: txt, address: v6)
        #expect(resolved.events.map(\.instanceName) == [other.name])
        #expect(resolved.effects == [.stopResolver(other, interface: 2)])
        #expect(model.hostLookups == [host])
        // The host's changes concern only `node`.
        #expect(model.addressDisappeared(host, v6, protocol: inet6).events.map(\.instanceName) == [node.name])
    }

    @Test func atMostResolveLimitServicesAreResolvedAtOnce() {
        var model = BrowseModel(type: "_matterc._udp", resolveLimit: 2)
        #expect(model.serviceAppeared(node, interface: 2, protocol: inet).effects == [.startResolver(node, interface: 2)])
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects == [.startResolver(other, interface: 2)])
        // The third waits, wherever it is seen.
        #expect(model.serviceAppeared(third, interface: 2, protocol: inet).effects.isEmpty)
        #expect(model.serviceAppeared(third, interface: 3, protocol: inet).effects.isEmpty)
        #expect(model.waitingServices == 1)
        // `node` announced: the third starts, on both its interfaces.
        _ = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        _ = model.addressAppeared(host, v4, protocol: inet)
        let added = model.addressAppeared(host, v6, protocol: inet6)
        #expect(added.events.map(\.instanceName) == [node.name])
        #expect(added.effects == [.startResolver(third, interface: 2), .startResolver(third, interface: 3)])
        #expect(model.waitingServices == 0)
    }

    @Test func aServiceWhoseResolversGaveUpMakesRoom() {
        var model = BrowseModel(type: "_matterc._udp", resolveLimit: 1)
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects.isEmpty)
        #expect(model.resolveFailed(node, interface: 2).effects == [.stopResolver(node, interface: 2), .startResolver(other, interface: 2)])
        // Told twice: nothing more.
        #expect(model.resolveFailed(node, interface: 2) == .init())
    }

    /// A daemon busy with a fleet's announcements misses answers (or D-Bus gives up on it
    /// after 25 s): the service goes back in line when the browse says so, behind those
    /// waiting, instead of never being resolved while its PTR is still listed.
    @Test func aServiceWhoseResolvingFailedIsTriedAgainBehindThoseWaiting() {
        var model = BrowseModel(type: "_matterc._udp", resolveLimit: 1)
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceAppeared(node, interface: 3, protocol: inet)
        _ = model.serviceAppeared(other, interface: 2, protocol: inet)
        #expect(!model.hasFailedServices)
        // Its resolvers on every interface stop; `other` takes the place.
        #expect(model.resolveFailed(node, interface: 2).effects
            == [.stopResolver(node, interface: 2), .stopResolver(node, interface: 3), .startResolver(other, interface: 2)])
        #expect(model.hasFailedServices)
        _ = model.serviceAppeared(third, interface: 2, protocol: inet)
        // Back in line, behind `third`: nothing starts while `other` holds the place.
        #expect(model.retryFailed() == .init())
        #expect(!model.hasFailedServices)
        #expect(model.waitingServices == 2)
        #expect(model.resolveFailed(other, interface: 2).effects == [.stopResolver(other, interface: 2), .startResolver(third, interface: 2)])
        // `third` announced: `node` starts again on both its interfaces.
        _ = model.serviceResolved(third, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        _ = model.addressAppeared(host, v4, protocol: inet)
        let added = model.addressAppeared(host, v6, protocol: inet6)
        #expect(added.events.map(\.instanceName) == [third.name])
        #expect(added.effects == [.startResolver(node, interface: 2), .startResolver(node, interface: 3)])
        // Resolved this time.
        #expect(model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5541, txt: txt).events.map(\.instanceName) == [node.name])
    }

    @Test func aFailedServiceGoneBeforeItsRetryIsDropped() {
        var model = BrowseModel(type: "_matterc._udp", resolveLimit: 1)
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.resolveFailed(node, interface: 2)
        #expect(model.serviceDisappeared(node, interface: 2, protocol: inet) == .init())
        #expect(model.retryFailed() == .init())
        #expect(model.waitingServices == 0)
    }

    @Test func aServiceGoneWhileWaitingIsSkippedAndQueuesAgainIfSeenAgain() {
        var model = BrowseModel(type: "_matterc._udp", resolveLimit: 1)
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceAppeared(other, interface: 2, protocol: inet)
        _ = model.serviceAppeared(third, interface: 2, protocol: inet)
        #expect(model.serviceDisappeared(other, interface: 2, protocol: inet) == .init())
        // `node` goes too: the next one still seen starts.
        #expect(model.serviceDisappeared(node, interface: 2, protocol: inet).effects
            == [.stopResolver(node, interface: 2), .startResolver(third, interface: 2)])
        // `other` back: it waits behind `third`, once.
        #expect(model.serviceAppeared(other, interface: 2, protocol: inet).effects.isEmpty)
        #expect(model.resolveFailed(third, interface: 2).effects == [.stopResolver(third, interface: 2), .startResolver(other, interface: 2)])
    }

    /// `node` announced on interface 2 over IPv4 with both addresses.
    private func announced(followLimit: Int = BrowseModel.defaultFollowLimit) -> BrowseModel {
        var model = BrowseModel(type: "_matterc._udp", followLimit: followLimit)
        _ = model.serviceAppeared(node, interface: 2, protocol: inet)
        _ = model.serviceResolved(node, interface: 2, hostName: "dev-a.local", port: 5540, txt: txt)
        _ = model.addressAppeared(host, v4, protocol: inet)
        _ = model.addressAppeared(host, v6, protocol: inet6)
        return model
    }
}

extension BrowseModel.Outcome: Equatable {
    public static func == (a: Self, b: Self) -> Bool {
        a.effects == b.effects && a.events == b.events
    }
}

