import Foundation
import MatterController
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol

/// What a local hub may do on the home's devices (the privilege of its ACL entry).
public enum HubAccess: Sendable, Hashable {
    /// Read, subscribe, control (Operate, spec 6.6.2.1).
    case operate
    /// Everything the home's controller may do (Administer): what controllers reach through
    /// the hub is then what they reach through the cloud relay.
    case administer
}

/// What `Home.issueHubCredentials` did.
public struct HubCredentialsIssue: Sendable {
    /// The credentials written to the file.
    public var credentials: HubCredentials
    /// Devices (by relay device ID, their serial number) whose ACL now lets the hub in.
    public var granted: [String]
    /// Devices whose ACL could not be written, with why (unreachable, refused); the hub
    /// cannot reach them until credentials are issued again while they answer.
    public var failed: [String: String]
    /// Home devices (by ID) without a usable serial number (none, not a relay device ID, or
    /// another device's): they have no relay device ID and are left out.
    public var skipped: [String]
}

extension Home {
    /// Makes this home's fabric CA issue a local hub its credentials (`matter-relay serve
    /// --mode hub --credentials FILE`): a NOC for `hubNodeID` with a fresh key, the fabric's
    /// root and IPK, the home ID and token controllers present to the hub, and the device
    /// table (serial number, node ID, address). Every device of the home gets an ACL entry
    /// for the hub's node (existing entries kept), so it accepts the hub's CASE sessions.
    ///
    /// Devices commissioned later do not have that entry: issue the credentials again (with
    /// the same `hubNodeID`) to add them, and restart the hub with the new file.
    ///
    /// - Parameters:
    ///   - hubNodeID: the hub's operational node ID; nil allocates a new one.
    ///   - homeID: how the hub names the home to its controllers.
    ///   - homeToken: the bearer token controllers present; nil generates one (read it from
    ///     the result).
    @discardableResult
    public func issueHubCredentials(
        hubNodeID: UInt64? = nil, homeID: String = "home", homeToken: String? = nil,
        access: HubAccess = .administer, to url: URL
    ) async throws(HomeError) -> HubCredentialsIssue {
        try await homeCall {
            try await engine.issueHubCredentials(hubNodeID: hubNodeID, homeID: homeID, homeToken: homeToken, access: access, to: url)
        }
    }
}

extension HomeEngine {
    func issueHubCredentials(
        hubNodeID: UInt64?, homeID: String, homeToken: String?, access: HubAccess,
        to url: URL
    ) async throws -> HubCredentialsIssue {
        guard Self.isRelayIdentifier(homeID) else {
            throw HomeError.invalidArgument("home ID '\(homeID)': use 1...64 of A-Z a-z 0-9 . _ -")
        }
        let token = homeToken ?? "mrh_" + SecureRandom.bytes(24).map { String(format: "%02x", $0) }.joined()
        guard !token.isEmpty, token.utf8.count <= 256, token.utf8.allSatisfy({ (UInt8(ascii: "!")...UInt8(ascii: "~")).contains($0) })
        else {
            throw HomeError.invalidArgument("home token: use 1...256 printable ASCII characters without spaces")
        }
        let controller = try await controller()
        guard let fabric = controller.fabric else { throw HomeError.failedPrecondition("this home's controller is not its fabric's CA") }
        let nodeID: UInt64
        if let hubNodeID { nodeID = hubNodeID } else { nodeID = try await store.allocateNodeID() }
        let identity: FabricIdentity
        do { identity = try fabric.issueIdentity(nodeID: nodeID) } catch {
            throw HomeError.from(error, "issuing the hub's operational certificate")
        }
        let graph = try await store.loadGraph()
        var table: [HubCredentials.Device] = []
        var issue = HubCredentialsIssue(
            credentials: HubCredentials(identity: identity, homeID: homeID, homeToken: token, devices: []),
            granted: [], failed: [:], skipped: [])
        for device in graph.devices.values.sorted(by: { $0.id < $1.id }) {
            // The serial number is the relay device ID: it must be one, and name one device only.
            guard let serial = device.serialNumber, Self.isRelayIdentifier(serial),
                !table.contains(where: { $0.deviceID == serial })
            else {
                issue.skipped.append(device.id)
                continue
            }
            table.append(HubCredentials.Device(deviceID: serial, nodeID: device.nodeID, host: device.host, port: device.port))
            do {
                try await grantHubAccess(nodeID: device.nodeID, hubNodeID: nodeID, access: access, controller: controller)
                issue.granted.append(serial)
            } catch {
                issue.failed[serial] = HomeError.from(error, "writing the ACL of \(device.name)").message
            }
        }
        issue.credentials.devices = table
        do { try issue.credentials.write(to: url) } catch {
            throw HomeError.unavailable("\(url.path): cannot write the hub credentials: \(error)")
        }
        return issue
    }

    /// Adds a CASE ACL entry for the hub's node to the node's Access Control list (cluster
    /// 0x001F, attribute ACL 0x0000, spec 9.10.5.3), keeping this fabric's other entries;
    /// nothing is written when an entry already names the hub with enough privilege.
    func grantHubAccess(nodeID: UInt64, hubNodeID: UInt64, access: HubAccess, controller: MatterController) async throws {
        let path = AttributePath(endpoint: 0, cluster: Clusters.AccessControl.id, attribute: Clusters.AccessControl.Attribute.acl)
        let privilege: Privilege = access == .administer ? .administer : .operate
        let limit = configuration.commandTimeout
        // Fabric-filtered: the entries of our fabric, which a write replaces as a whole.
        let current = try await withDeadline(limit, "reading the ACL", clock: configuration.clock) {
            try await controller.read(nodeID, path)
        }
        let entries = try (current.members ?? []).map { element in
            // The node fills in the fabric index; ours is whatever it says.
            guard let entry = AccessControlEntry(tlv: element.value, fabricIndex: 0) else {
                throw HomeError.unavailable("node 0x\(String(nodeID, radix: 16)) has an ACL entry that is not an AccessControlEntryStruct")
            }
            return entry
        }
        let present = entries.contains { entry in
            entry.authMode == .case && entry.privilege.grants(privilege) && (entry.subjects ?? []).contains(hubNodeID)
        }
        if present { return }
        let hubEntry = AccessControlEntry(fabricIndex: 0, privilege: privilege, authMode: .case, subjects: [hubNodeID])
        let updated = TLVValue.array((entries + [hubEntry]).map { TLVElement($0.writtenTLV) })
        try await withDeadline(limit, "writing the ACL", clock: configuration.clock) {
            try await controller.write(nodeID, path, value: updated)
        }
    }

    /// A home or device ID the relay accepts (the relay protocol's own rule).
    static func isRelayIdentifier(_ s: String) -> Bool { RelayFrame.isValidIdentifier(s) }
}
