// The `cloud:` block: which cloud relay a device keeps its outbound connection to, with
// what credential, and which of its clusters exist only through that relay. A device
// profile, a home (for all its devices) and a home's device entry may each give one; the
// most specific wins key by key, and cloud-only lists add up.
import Foundation
import MatterModel

/// How a device reaches the cloud relay, after the profile, the home and the home's
/// device entry were combined. Every field is optional: the command line may give what
/// the profiles leave out (`--relay`, `--relay-credential`, `--relay-home-token`).
public struct CloudSettings: Sendable, Hashable {
    /// Base URL of `matter-relay`, e.g. `ws://127.0.0.1:8080`.
    public var relay: String?
    /// The device credential `matter-relay device add` issued.
    public var credential: String?
    /// The home's token: the device registers itself under its serial number with it
    /// and keeps the credential it is issued (used when `credential` is absent).
    public var homeToken: String?

    public init(relay: String? = nil, credential: String? = nil, homeToken: String? = nil) {
        self.relay = relay
        self.credential = credential
        self.homeToken = homeToken
    }

    public var isEmpty: Bool { relay == nil && credential == nil && homeToken == nil }
}

enum CloudKeys {
    /// In a device profile and in a home's device entry.
    static let device = ["relay", "credential", "homeToken", "cloudOnly"]
    /// At a home's top level (credentials are per device, cloud-only clusters per device).
    static let home = ["relay", "homeToken"]

    /// Prefixes `matter-relay` gives its secrets (see CloudRelay's RelayCredentials).
    static let homeTokenPrefix = "mrh_"
    static let deviceCredentialPrefix = "mrd_"
}

struct CloudDocument {
    var origin: Origin
    var relay: Located<String>?
    var credential: Located<String>?
    var homeToken: Located<String>?
    /// Clusters (by name) served only through the relay, on every application endpoint that has them.
    var cloudOnly: [Located<ClusterDefinition>] = []

    /// `specific`'s settings win where given; cloud-only lists add up.
    static func combine(_ general: CloudDocument?, _ specific: CloudDocument?) -> CloudDocument? {
        guard let general else { return specific }
        guard let specific else { return general }
        var out = specific
        out.relay = specific.relay ?? general.relay
        out.credential = specific.credential ?? general.credential
        out.homeToken = specific.homeToken ?? general.homeToken
        out.cloudOnly = general.cloudOnly + specific.cloudOnly.filter { c in !general.cloudOnly.contains { $0.value.id == c.value.id } }
        return out
    }

    var settings: CloudSettings {
        CloudSettings(relay: relay?.value, credential: credential?.value, homeToken: homeToken?.value)
    }
}

extension DocumentParser {
    /// A `cloud:` mapping; `known` says which keys the place allows.
    func parseCloud(_ node: YAMLNode, at path: ProfilePath, known: [String]) -> CloudDocument? {
        guard let fields = reader.fields(node, at: path, known: known, what: "a cloud mapping (relay, credential or homeToken, cloudOnly)")
        else {
            return nil
        }
        var doc = CloudDocument(origin: reader.origin(path, node))
        if let n = fields["relay"] {
            let p = path.key("relay")
            if let text = reader.string(n, at: p) {
                if let problem = Self.relayURLProblem(text) {
                    reader.error(p, n, problem)
                } else {
                    doc.relay = Located(value: text, origin: reader.origin(p, n))
                }
            }
        }
        for key in ["credential", "homeToken"] {
            guard let n = fields[key] else { continue }
            let p = path.key(key)
            guard let text = reader.string(n, at: p) else { continue }
            if let problem = Self.secretProblem(text, key: key) {
                reader.error(p, n, problem)
                continue
            }
            let located = Located(value: text, origin: reader.origin(p, n))
            if key == "credential" { doc.credential = located } else { doc.homeToken = located }
        }
        if let n = fields["cloudOnly"] {
            let p = path.key("cloudOnly")
            if let items = reader.list(n, at: p, what: "a list of cluster names") {
                for (i, item) in items.enumerated() {
                    guard let def = clusterReference(item, at: p.index(i)) else { continue }
                    guard !doc.cloudOnly.contains(where: { $0.value.id == def.id }) else {
                        reader.error(p.index(i), item, "cluster \(def.name) is listed twice")
                        continue
                    }
                    doc.cloudOnly.append(Located(value: def, origin: reader.origin(p.index(i), item)))
                }
            }
        }
        return doc
    }

    /// Why `text` cannot be a relay's base URL, or nil. The device speaks WebSocket to
    /// the relay and plain HTTP to register, so only `ws://` with a host will do.
    static func relayURLProblem(_ text: String) -> String? {
        let expected = "expected the relay's base URL, like ws://127.0.0.1:8080"
        guard let components = URLComponents(string: text), let scheme = components.scheme else {
            return "\(expected), got \"\(text)\""
        }
        guard scheme == "ws" else {
            return "\(expected) (ws://, the relay's WebSocket scheme), got the scheme '\(scheme)'"
        }
        guard let host = components.host, !host.isEmpty else { return "\(expected), got no host in \"\(text)\"" }
        if let port = components.port, !(1...65535).contains(port) { return "\(expected), got the port \(port)" }
        if components.query != nil || components.fragment != nil { return "\(expected), without a query or fragment" }
        return nil
    }

    /// Why `text` cannot be the secret `key` names, or nil: the relay accepts bearer
    /// tokens of at most 256 printable ASCII characters without spaces.
    static func secretProblem(_ text: String, key: String) -> String? {
        let what = key == "credential" ? "a device credential from `matter-relay device add`" : "a home token from `matter-relay home add`"
        guard !text.isEmpty, text.utf8.count <= 256, text.utf8.allSatisfy({ (UInt8(ascii: "!")...UInt8(ascii: "~")).contains($0) }) else {
            return "expected \(what) (printable characters, no spaces, at most 256)"
        }
        if key == "credential", text.hasPrefix(CloudKeys.homeTokenPrefix) {
            return "this is a home token (\(CloudKeys.homeTokenPrefix)…); give it as homeToken, the device then registers itself"
        }
        if key == "homeToken", text.hasPrefix(CloudKeys.deviceCredentialPrefix) {
            return "this is a device credential (\(CloudKeys.deviceCredentialPrefix)…); give it as credential"
        }
        return nil
    }
}
