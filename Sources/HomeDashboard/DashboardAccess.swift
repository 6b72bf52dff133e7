import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The dashboard's own origin: the `Host` a request must name (the listen address, localhost,
/// 127.0.0.1, [::1], or a name given with `--dashboard-host`, each with the port it listens
/// on) and the `Origin` a browser's request must come from when it says one. A page of another
/// site can make the browser send requests here, but not with this Host (DNS rebinding names
/// the attacker's host) nor with this Origin.
final class DashboardAccess: Sendable {
    /// Host names and addresses, lowercased, IPv6 in brackets.
    let hosts: Set<String>
    /// Bound to every address (0.0.0.0, ::): any IP address of the machine is its own.
    let anyAddress: Bool
    private let configuredPort: Int
    /// The port bound, once known (the configured one may be 0).
    private let boundPort = Atomic<Int>(0)

    init(listenHost: String, port: Int, names: [String]) {
        anyAddress = ["0.0.0.0", "::", "", "*"].contains(listenHost)
        hosts = Set((["localhost", "127.0.0.1", "::1", listenHost] + names).map(Self.bracketed))
        configuredPort = port
    }

    func listening(on port: Int) { boundPort.store(port, ordering: .relaxed) }

    var port: Int {
        let bound = boundPort.load(ordering: .relaxed)
        return bound != 0 ? bound : configuredPort
    }

    /// What is wrong with a request's Host and Origin; nil when both are this dashboard's.
    func refusal(host: String?, origin: String?) -> String? {
        var expected: String {
            "expected \(hosts.sorted().map { "\($0):\(port)" }.joined(separator: ", "))"
                + (anyAddress ? ", an address of this machine" : "") + " or a name given with --dashboard-host"
        }
        guard let host else { return "the request names no Host: \(expected)" }
        guard allows(authority: host) else { return "Host \(host.prefix(100)) is not this dashboard: \(expected)" }
        guard let origin, !allows(origin: origin.lowercased()) else { return nil }
        return "Origin \(origin.prefix(100)) is not this dashboard's: only its own pages may use it (\(expected))"
    }

    /// A browser's page here has `http://HOST:PORT`. A WebSocket client outside a browser may
    /// say `ws://HOST` (HummingbirdWSClient does): no web page has such an origin, so it is
    /// taken for this dashboard's when HOST is.
    private func allows(origin: String) -> Bool {
        if origin.hasPrefix("http://") { return allows(authority: String(origin.dropFirst(7))) }
        guard origin.hasPrefix("ws://"), let (host, _) = Self.split(String(origin.dropFirst(5))) else { return false }
        return hosts.contains(host)
    }

    /// `host[:port]` names this dashboard.
    func allows(authority: String) -> Bool {
        guard let (host, port) = Self.split(authority.lowercased()) else { return false }
        guard port == self.port || (port == nil && self.port == 80) else { return false }
        return hosts.contains(host) || (anyAddress && Self.isAddress(host))
    }

    /// "host:port", "[v6]:port", or either without the port; nil when malformed.
    static func split(_ authority: String) -> (host: String, port: Int?)? {
        var host = Substring(authority), portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = authority[...close]
            let rest = authority[authority.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                portText = rest.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        }
        guard !host.isEmpty else { return nil }
        guard let portText else { return (String(host), nil) }
        guard !portText.isEmpty, portText.count <= 5, portText.utf8.allSatisfy({ (48...57).contains($0) }) else { return nil }
        return (String(host), Int(portText))
    }

    /// An IPv6 address in brackets, as Host spells it; the rest as given, lowercased.
    static func bracketed(_ host: String) -> String {
        let lowered = host.lowercased()
        return lowered.contains(":") && !lowered.hasPrefix("[") ? "[\(lowered)]" : lowered
    }

    /// An IPv4 address, or an IPv6 one in brackets (a name could be rebound; an address not).
    static func isAddress(_ host: String) -> Bool {
        var buffer = [UInt8](repeating: 0, count: 16)
        if host.hasPrefix("["), host.hasSuffix("]") {
            return inet_pton(AF_INET6, String(host.dropFirst().dropLast()), &buffer) == 1
        }
        return inet_pton(AF_INET, host, &buffer) == 1
    }
}
