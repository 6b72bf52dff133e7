import MatterTLV

// Access Control's data (Matter Core spec 6.6, cluster 0x001F): who asks, and the ACL entries
// a fabric's administrators write, with their TLV form. The device checks access with them
// (MatterDevice's AccessControl), and controllers read and write ACLs with the same codec.

/// How a subject authenticated (spec 6.6.2.3, AccessControlEntryAuthModeEnum).
public enum AuthMode: UInt8, Sendable, Hashable, Codable {
    case pase = 1
    case `case` = 2
    case group = 3
}

public struct AccessControlTarget: Sendable, Hashable, Codable {
    public var cluster: UInt32?
    public var endpoint: UInt16?
    public var deviceType: UInt32?

    public init(cluster: UInt32? = nil, endpoint: UInt16? = nil, deviceType: UInt32? = nil) {
        self.cluster = cluster
        self.endpoint = endpoint
        self.deviceType = deviceType
    }
}

/// One AccessControlEntryStruct (spec 9.10.5.5).
public struct AccessControlEntry: Sendable, Hashable, Codable {
    public var fabricIndex: FabricIndex
    public var privilege: Privilege
    public var authMode: AuthMode
    /// nil or empty: any subject of the auth mode on the fabric.
    public var subjects: [UInt64]?
    /// nil or empty: every target.
    public var targets: [AccessControlTarget]?

    public init(
        fabricIndex: FabricIndex, privilege: Privilege, authMode: AuthMode,
        subjects: [UInt64]? = nil, targets: [AccessControlTarget]? = nil
    ) {
        self.fabricIndex = fabricIndex
        self.privilege = privilege
        self.authMode = authMode
        self.subjects = subjects
        self.targets = targets
    }

    /// The entry AddNOC writes for the CaseAdminSubject (spec 11.18.6.8).
    public static func administrator(fabricIndex: FabricIndex, subject: UInt64) -> AccessControlEntry {
        AccessControlEntry(fabricIndex: fabricIndex, privilege: .administer, authMode: .case, subjects: [subject])
    }
}

extension Privilege: Codable {}

extension Privilege {
    /// Spec 6.6.2.1: Administer grants every privilege; Manage grants Operate and View; Operate
    /// grants View; ProxyView grants View. Manage does not grant ProxyView.
    public func grants(_ requested: Privilege) -> Bool {
        switch self {
        case .administer: true
        case .manage: [.manage, .operate, .view].contains(requested)
        case .operate: [.operate, .view].contains(requested)
        case .proxyView: [.proxyView, .view].contains(requested)
        case .view: requested == .view
        }
    }
}

/// Who is asking: the Incoming Subject Descriptor (spec 6.6.2.1), as the secure session or
/// group message an interaction arrived on established it.
public struct SubjectDescriptor: Hashable, Sendable, CustomStringConvertible {
    public var authMode: AuthMode
    /// The accessing fabric; 0 when the session has none (a PASE session before AddNOC).
    public var fabricIndex: FabricIndex
    /// The peer's operational node ID (CASE), the group ID (group messages), 0 for PASE.
    public var subject: UInt64
    /// CASE Authenticated Tags from the peer's NOC (spec 6.6.2.1.2).
    public var caseAuthenticatedTags: [UInt32]

    public init(authMode: AuthMode, fabricIndex: FabricIndex, subject: UInt64, caseAuthenticatedTags: [UInt32] = []) {
        self.authMode = authMode
        self.fabricIndex = fabricIndex
        self.subject = subject
        self.caseAuthenticatedTags = caseAuthenticatedTags
    }

    /// A PASE commissioning session: no fabric yet, or the one being commissioned.
    public static func pase(fabricIndex: FabricIndex = 0) -> SubjectDescriptor {
        SubjectDescriptor(authMode: .pase, fabricIndex: fabricIndex, subject: 0)
    }

    public var description: String { "\(authMode) fabric \(fabricIndex) subject 0x\(String(subject, radix: 16))" }
}

// MARK: TLV form (AccessControlEntryStruct, spec 9.10.5.5)

extension AccessControlEntry {
    public var tlv: TLVValue {
        var members: [TLVElement] = [
            TLVElement(tag: .context(1), .unsigned(UInt64(privilege.rawValue))),
            TLVElement(tag: .context(2), .unsigned(UInt64(authMode.rawValue))),
            TLVElement(tag: .context(3), subjects.map { .array($0.map { TLVElement(.unsigned($0)) }) } ?? .null),
        ]
        let targetValue: TLVValue =
            targets.map { list in
                .array(
                    list.map { t in
                        TLVElement(
                            .structure([
                                TLVElement(tag: .context(0), t.cluster.map { .unsigned(UInt64($0)) } ?? .null),
                                TLVElement(tag: .context(1), t.endpoint.map { .unsigned(UInt64($0)) } ?? .null),
                                TLVElement(tag: .context(2), t.deviceType.map { .unsigned(UInt64($0)) } ?? .null),
                            ]))
                    })
            } ?? .null
        members.append(TLVElement(tag: .context(4), targetValue))
        members.append(TLVElement(tag: .context(FieldDefinition.fabricIndexTag), .unsigned(UInt64(fabricIndex))))
        return .structure(members)
    }

    /// The entry as a controller writes it: without FabricIndex (0xFE), which the node fills
    /// in from the writer's session.
    public var writtenTLV: TLVValue {
        .structure((tlv.members ?? []).filter { $0.tag != .context(FieldDefinition.fabricIndexTag) })
    }

    /// Decodes a written entry; the fabric index always comes from the writer's session.
    public init?(tlv: TLVValue, fabricIndex: FabricIndex) {
        guard case .structure(let members) = tlv else { return nil }
        func member(_ tag: UInt8) -> TLVValue? { members.first { $0.tag == .context(tag) }?.value }
        guard case .unsigned(let p)? = member(1), let privilege = Privilege(rawValue: UInt8(clamping: p)),
            case .unsigned(let a)? = member(2), let authMode = AuthMode(rawValue: UInt8(clamping: a))
        else { return nil }
        var subjects: [UInt64]?
        switch member(3) {
        case .array(let items)?, .list(let items)?:
            var values: [UInt64] = []
            for item in items {
                guard case .unsigned(let v) = item.value else { return nil }
                values.append(v)
            }
            subjects = values
        case .null?, nil: subjects = nil
        default: return nil
        }
        var targets: [AccessControlTarget]?
        switch member(4) {
        case .array(let items)?, .list(let items)?:
            var values: [AccessControlTarget] = []
            for item in items {
                guard case .structure(let fields) = item.value else { return nil }
                func field(_ tag: UInt8) -> UInt64? {
                    if case .unsigned(let v)? = fields.first(where: { $0.tag == .context(tag) })?.value { return v }
                    return nil
                }
                let target = AccessControlTarget(
                    cluster: field(0).flatMap { UInt32(exactly: $0) },
                    endpoint: field(1).flatMap { UInt16(exactly: $0) },
                    deviceType: field(2).flatMap { UInt32(exactly: $0) })
                // Spec 9.10.5.5: a target with all fields null is invalid.
                if target.cluster == nil && target.endpoint == nil && target.deviceType == nil { return nil }
                values.append(target)
            }
            targets = values
        case .null?, nil: targets = nil
        default: return nil
        }
        // Spec 9.10.5.5: PASE is never written; group subjects are group IDs.
        if authMode == .pase { return nil }
        if privilege == .administer && authMode == .group { return nil }
        self.init(fabricIndex: fabricIndex, privilege: privilege, authMode: authMode, subjects: subjects, targets: targets)
    }
}
