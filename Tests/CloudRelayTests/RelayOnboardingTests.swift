@testable import CloudRelay
import Foundation
import RelayClients
import RelayProtocol
import Testing

/// Issue #43: a fleet replica reports its nodes' onboarding payloads and addresses through the
/// relay, and the home's controller reads them back (`RelayOnboarding.swift`).
@Suite struct RelayOnboardingTests {
    static func node(_ i: Int, host: String = "172.18.0.5") -> RelayOnboardingNode {
        RelayOnboardingNode(
            name: "Node \(i)", structure: "Fleet a", room: "Rack 1", setupCode: "MT:Y.K9042C00KA0648G00", host: host, port: 5539 + i)
    }

    /// The store keeps each source's last report whole, keeps a source its reporting device's,
    /// lets the home's token replace any, and refuses malformed reports naming the fault.
    @Test(arguments: StoreEngine.testable) func reportsAreKeptPerSourceAndChecked(engine: StoreEngine) async throws {
        try await withStore(engine) { store, _ in
            let (home, _) = try await store.addHome(name: "Fleet Home")
            let (other, _) = try await store.addHome(name: "Elsewhere")
            try await store.reportOnboarding(homeID: home.id, source: "replica-b", reporter: "FLEET", nodes: [Self.node(1)])
            try await store.reportOnboarding(homeID: home.id, source: "replica-a", reporter: "FLEET", nodes: [Self.node(1), Self.node(2)])
            var reports = try await store.onboarding(homeID: home.id)
            #expect(reports.map(\.source) == ["replica-a", "replica-b"])
            #expect(reports.first?.nodes == [Self.node(1), Self.node(2)])
            #expect(reports.first?.reportedBy == "FLEET")
            #expect(try await store.onboarding(homeID: other.id).isEmpty, "another home sees the reports")

            // A new report replaces the source's nodes whole.
            try await store.reportOnboarding(homeID: home.id, source: "replica-a", reporter: "FLEET", nodes: [Self.node(3, host: "fd00::5")])
            reports = try await store.onboarding(homeID: home.id)
            #expect(reports.first?.nodes == [Self.node(3, host: "fd00::5")])

            // Another device cannot take the source over; the home's token can.
            await #expect(throws: RelayStoreError.onboardingSourceTaken(source: "replica-a", reportedBy: "FLEET")) {
                try await store.reportOnboarding(homeID: home.id, source: "replica-a", reporter: "lamp", nodes: [])
            }
            try await store.reportOnboarding(homeID: home.id, source: "replica-a", reporter: nil, nodes: [])
            reports = try await store.onboarding(homeID: home.id)
            #expect(reports.first?.nodes == [] && reports.first?.reportedBy == nil)

            await #expect(throws: RelayStoreError.noSuchHome("hmissing")) {
                try await store.reportOnboarding(homeID: "hmissing", source: "a", reporter: nil, nodes: [])
            }
            await #expect(throws: RelayStoreError.invalidIdentifier("bad source")) {
                try await store.reportOnboarding(homeID: home.id, source: "bad source", reporter: nil, nodes: [])
            }
            var bad: [(RelayOnboardingNode, String)] = []
            var n = Self.node(1)
            n.host = "relay.example"
            bad.append((n, "host"))
            n = Self.node(1)
            n.port = 0
            bad.append((n, "port"))
            n = Self.node(1)
            n.setupCode = "MT:lower"
            bad.append((n, "setupCode"))
            n = Self.node(1)
            n.name = "Node\u{7}"
            bad.append((n, "name"))
            n = Self.node(1)
            n.room = ""
            bad.append((n, "room"))
            for (node, field) in bad {
                do {
                    try await store.reportOnboarding(homeID: home.id, source: "replica-c", reporter: "FLEET", nodes: [Self.node(1), node])
                    Issue.record("a node with a bad \(field) was accepted")
                } catch let error as RelayStoreError {
                    guard case .invalidOnboarding(let why) = error else { Issue.record("\(error)"); continue }
                    #expect(why.hasPrefix("node 1: \(field)"), "\(why)")
                }
            }
            let manual = RelayOnboardingNode(name: "Lamp", setupCode: "3497-011-2332", host: "10.0.0.2", port: 5540)
            try await store.reportOnboarding(homeID: home.id, source: "replica-c", reporter: "FLEET", nodes: [manual])
            #expect(try await store.onboarding(homeID: home.id).map(\.source) == ["replica-a", "replica-b", "replica-c"])
        }
    }

    /// Over HTTP: a device credential reports (never reads: a payload holds a passcode), the
    /// home's token reads, nothing without either, a malformed report is a 400 naming the
    /// fault, and another device's source is a 403.
    @Test func theAPIReportsWithACredentialAndListsWithTheHomeToken() async throws {
        try await withRelay { relay in
            let (home, token, fleetCredential) = try await relay.home("Fleet Home", device: "FLEET")
            let lampCredential = try await relay.store.registerDevice(homeID: home.id, deviceID: "lamp")
            let nodes = (1...3).map { Self.node($0) }
            try await RelayOnboardingClient.report(relayURL: relay.baseURL, bearer: fleetCredential, source: "fleet-1", nodes: nodes)

            let list = try await RelayOnboardingClient.list(relayURL: relay.baseURL, homeToken: token)
            #expect(list.homeID == home.id)
            #expect(list.reports == [RelayOnboardingReport(source: "fleet-1", reportedBy: "FLEET", nodes: nodes)])

            await #expect(throws: RelayError.unauthorized) {
                _ = try await RelayOnboardingClient.list(relayURL: relay.baseURL, homeToken: fleetCredential)
            }
            await #expect(throws: RelayError.unauthorized) {
                try await RelayOnboardingClient.report(relayURL: relay.baseURL, bearer: "mrd_nothing", source: "fleet-1", nodes: [])
            }
            await #expect(throws: RelayError.forbidden) {
                try await RelayOnboardingClient.report(relayURL: relay.baseURL, bearer: lampCredential, source: "fleet-1", nodes: [])
            }
            var bad = Self.node(1)
            bad.host = "fleet-1.local"
            do {
                try await RelayOnboardingClient.report(relayURL: relay.baseURL, bearer: fleetCredential, source: "fleet-2", nodes: [bad])
                Issue.record("a host name was accepted as an address")
            } catch RelayError.http(let status, let body) {
                #expect(status == 400)
                #expect(body.contains("host must be an IPv4 or IPv6 address"), "\(body)")
            }
            let garbage = try await RelayHTTP.request(
                "PUT", relay.httpURL + "/v1/onboarding/fleet-2", bearer: fleetCredential, json: Array(#"{"nodes": 7}"#.utf8))
            #expect(garbage.status == 400)
            // The refused reports changed nothing.
            #expect(try await RelayOnboardingClient.list(relayURL: relay.baseURL, homeToken: token).reports.map(\.source) == ["fleet-1"])
        }
    }
}
