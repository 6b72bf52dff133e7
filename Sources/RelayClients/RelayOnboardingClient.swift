import Foundation
import RelayProtocol

/// The relay's onboarding reports over HTTP (`RelayServer`'s `/v1/onboarding`): a fleet
/// replica reports the nodes it runs; a controller reads every replica's report of its home.
public enum RelayOnboardingClient {
    /// Replaces `source`'s report with `nodes`. `bearer` is a device credential of the home or
    /// the home's token. `relayURL` is the relay's ws:// or http:// base URL.
    public static func report(
        relayURL: String, bearer: String, source: String, nodes: [RelayOnboardingNode], timeout: Duration = .seconds(10)
    ) async throws {
        guard RelayFrame.isValidIdentifier(source) else { throw RelayError.invalidArgument("source '\(source)': use 1...64 of A-Z a-z 0-9 . _ -") }
        struct Body: Encodable { var nodes: [RelayOnboardingNode] }
        let body = try JSONEncoder().encode(Body(nodes: nodes))
        let response = try await RelayHTTP.request(
            "PUT", base(relayURL) + "/v1/onboarding/\(source)", bearer: bearer, json: Array(body), timeout: timeout)
        try RelayControllerClient.check(response)
    }

    /// Every report of the home `homeToken` belongs to.
    public static func list(relayURL: String, homeToken: String, timeout: Duration = .seconds(10)) async throws -> RelayOnboardingList {
        let response = try await RelayHTTP.request("GET", base(relayURL) + "/v1/onboarding", bearer: homeToken, timeout: timeout)
        try RelayControllerClient.check(response)
        do { return try JSONDecoder().decode(RelayOnboardingList.self, from: Data(response.body)) } catch {
            throw RelayError.invalidResponse("onboarding list: \(error)")
        }
    }

    /// `ws://host:port[/]` as the HTTP base (RelayHTTP takes ws:// as http://).
    static func base(_ relayURL: String) -> String {
        relayURL.hasSuffix("/") ? String(relayURL.dropLast()) : relayURL
    }
}
