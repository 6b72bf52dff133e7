// Onboarding reports: a fleet replica tells its home's controllers, through the relay, which
// nodes it runs, their onboarding payloads and where they listen (issue #43), instead of a
// file both sides share. The relay checks the shape, keeps the last report of each source and
// hands them to the home's token only (a payload holds the node's passcode).
import Foundation
import RelayProtocol

#if canImport(Glibc)
import Glibc
#endif

extension RelayStore {
    /// Nodes one report may hold (about 1.3 MB of JSON, under the server's 2 MB request limit).
    public static let maxOnboardingNodes = 10_000

    /// Replaces `source`'s report with `nodes`. `reporter` is the device ID whose credential
    /// reports (nil for the home's token, which may replace any source); a source another
    /// device reported stays that device's. Throws `invalidOnboarding` naming the first fault.
    public func reportOnboarding(homeID: String, source: String, reporter: String?, nodes: [RelayOnboardingNode]) async throws {
        guard RelayFrame.isValidIdentifier(source) else { throw RelayStoreError.invalidIdentifier(source) }
        guard nodes.count <= Self.maxOnboardingNodes else {
            throw RelayStoreError.invalidOnboarding("\(nodes.count) nodes, more than \(Self.maxOnboardingNodes)")
        }
        for (index, node) in nodes.enumerated() {
            if let fault = Self.onboardingFault(node) { throw RelayStoreError.invalidOnboarding("node \(index): \(fault)") }
        }
        let json = String(decoding: try JSONEncoder().encode(nodes), as: UTF8.self)
        try await engine.replaceOnboarding(homeID: homeID, source: source, reporter: reporter, nodesJSON: json, at: Date())
    }

    /// Every report of the home, by source.
    public func onboarding(homeID: String) async throws -> [RelayOnboardingReport] {
        try await engine.onboarding(homeID: homeID).map { row in
            RelayOnboardingReport(
                source: row.source, reportedBy: row.reporter,
                nodes: try JSONDecoder().decode([RelayOnboardingNode].self, from: Data(row.nodesJSON.utf8)))
        }
    }

    /// What is wrong with a node's entry, or nil. Names and places are shown to people; the
    /// payload and address are only checked for shape here (the controller parses them).
    static func onboardingFault(_ node: RelayOnboardingNode) -> String? {
        func text(_ value: String?, _ what: String) -> String? {
            guard let value else { return nil }
            let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
            if trimmed.isEmpty || value.utf8.count > 128 || value.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                return "\(what) must be 1...128 bytes of printable text"
            }
            return nil
        }
        if let fault = text(node.name, "name") ?? text(node.structure, "structure") ?? text(node.room, "room") { return fault }
        let code = node.setupCode
        let isQR = code.hasPrefix("MT:") && (4...64).contains(code.utf8.count)
            && code.utf8.dropFirst(3).allSatisfy { Self.base38.contains($0) }
        let digits = code.filter { $0 != "-" && $0 != " " }
        let isManual = [11, 21].contains(digits.count) && digits.allSatisfy(\.isASCII) && digits.allSatisfy(\.isNumber)
        guard isQR || isManual else { return "setupCode must be an MT: payload or an 11- or 21-digit manual code" }
        guard Self.isIPAddress(node.host) else { return "host must be an IPv4 or IPv6 address" }
        guard (1...65535).contains(node.port) else { return "port \(node.port) is not 1...65535" }
        return nil
    }

    private static let base38 = Set("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ-.".utf8)

    /// An IPv4 or IPv6 address (an IPv6 one may name its interface after `%`), not a host name.
    static func isIPAddress(_ host: String) -> Bool {
        guard host.utf8.count <= 64 else { return false }
        var buffer = [UInt8](repeating: 0, count: 16)
        if inet_pton(AF_INET, host, &buffer) == 1 { return true }
        let address = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        return inet_pton(AF_INET6, address, &buffer) == 1
    }
}
