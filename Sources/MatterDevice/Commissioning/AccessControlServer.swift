import MatterCrypto
import MatterModel
import MatterTLV

/// Access Control cluster (Core spec 9.10). The ACL attribute shows the coordinator's
/// entries, which are the ones every access check uses; a write replaces the writer's
/// fabric's entries there.
final class AccessControlServer: StandardClusterServer {
    static let clusterID = Clusters.AccessControl.id

    typealias Attribute = Clusters.AccessControl.Attribute

    /// The spec's minimums (9.10.6.3-5), which are also what we support.
    static let subjectsPerEntry = 4
    static let targetsPerEntry = 3
    static let entriesPerFabric = 4

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.acl: .array([])
        case Attribute.subjectsPerAccessControlEntry: .uint(Self.subjectsPerEntry)
        case Attribute.targetsPerAccessControlEntry: .uint(Self.targetsPerEntry)
        case Attribute.accessControlEntriesPerFabric: .uint(Self.entriesPerFabric)
        default: nil
        }
    }

    func validateWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> InteractionStatus? {
        guard attribute == Attribute.acl else { return nil }
        switch writtenEntries(value, context: context) {
        case .success: return nil
        case .failure(let status): return status
        }
    }

    func commitWrite(_ attribute: AttributeID, value: TLVValue, context: ClusterContext) -> Bool {
        guard attribute == Attribute.acl, case .success(let (fabric, entries)) = writtenEntries(value, context: context) else {
            return false
        }
        let before = context.commissioning.accessControlEntries.filter { $0.fabricIndex == fabric }
        context.commissioning.replaceAccessControlEntries(of: fabric, with: entries)
        recordChanges(from: before, to: entries, fabric: fabric, context: context)
        return true
    }

    typealias Event = Clusters.AccessControl.Event

    /// ChangeTypeEnum (9.10.4.1).
    enum ChangeType: UInt64 { case changed = 0, added = 1, removed = 2 }

    /// AccessControlEntryChanged (9.10.7.1), fabric-sensitive, one per entry the write updated,
    /// added or removed, position by position. A position the write fills again is updated
    /// (Changed) even with the same value: TC-ACL-2.6 step 5 expects two events for a write of
    /// the existing entry and a new one, as connectedhomeip's UpdateEntry records.
    private func recordChanges(
        from before: [AccessControlEntry], to after: [AccessControlEntry], fabric: FabricIndex, context: ClusterContext
    ) {
        for index in 0..<max(before.count, after.count) {
            let old = index < before.count ? before[index] : nil
            let new = index < after.count ? after[index] : nil
            let change: ChangeType
            switch (old, new) {
            case (_?, _?): change = .changed
            case (nil, _?): change = .added
            default: change = .removed
            }
            guard let latest = new ?? old else { continue }
            Self.recordChange(change, of: latest, by: context.session, context: context)
        }
    }

    /// One AccessControlEntryChanged on the root endpoint's Access Control cluster: AdminNodeID
    /// [1] for a CASE writer or AdminPasscodeID [2] (0, the commissioning passcode) for a PASE
    /// one, ChangeType [3], LatestValue [4] (the removed entry's last value on removal),
    /// FabricIndex [254] (the entry's fabric).
    static func recordChange(_ change: ChangeType, of entry: AccessControlEntry, by writer: SessionContext?, context: ClusterContext) {
        let subject = writer?.subject
        let admin: [TLVElement] =
            subject?.authMode == .case
            ? [.context(1, .unsigned(subject?.subject ?? 0)), .context(2, .null)] : [.context(1, .null), .context(2, .unsigned(0))]
        context.runtime.recordEvent(
            ClusterPath(endpoint: 0, cluster: clusterID), Event.accessControlEntryChanged, priority: .info,
            data: .structure(
                admin + [
                    .context(3, .unsigned(change.rawValue)), .context(4, entry.tlv),
                    .context(FieldDefinition.fabricIndexTag, .unsigned(UInt64(entry.fabricIndex))),
                ]))
    }

    /// The writer's entries from the merged list, each checked (9.10.5.5, 9.10.6).
    private func writtenEntries(
        _ value: TLVValue, context: ClusterContext
    ) -> Result<(FabricIndex, [AccessControlEntry]), InteractionStatus> {
        // Internal writes have no fabric to scope to; the ACL is only written by administrators.
        guard let fabric = context.session?.fabricIndex, fabric != 0, let items = value.listItems else {
            return .failure(InteractionStatus(.unsupportedAccess))
        }
        var entries: [AccessControlEntry] = []
        for item in items where FabricScopedList.fabricIndex(of: item) == fabric {
            guard let entry = AccessControlEntry(tlv: item, fabricIndex: fabric), Self.hasValidSubjects(entry),
                Self.hasValidTargets(entry)
            else {
                return .failure(InteractionStatus(.constraintError))
            }
            if (entry.subjects?.count ?? 0) > Self.subjectsPerEntry || (entry.targets?.count ?? 0) > Self.targetsPerEntry {
                return .failure(InteractionStatus(.resourceExhausted))
            }
            entries.append(entry)
        }
        guard entries.count <= Self.entriesPerFabric else { return .failure(InteractionStatus(.resourceExhausted)) }
        return .success((fabric, entries))
    }

    /// CASE subjects are operational node IDs or CATs; group subjects are group IDs (9.10.5.5).
    static func hasValidSubjects(_ entry: AccessControlEntry) -> Bool {
        for subject in entry.subjects ?? [] {
            switch entry.authMode {
            case .case:
                guard CommissioningCoordinator.isValidAdminSubject(subject) else { return false }
            case .group:
                guard subject >= 1, subject <= 0xFFFF else { return false }
            case .pase:
                return false
            }
        }
        return true
    }

    /// A target names an endpoint or a device type, not both (9.10.5.4).
    static func hasValidTargets(_ entry: AccessControlEntry) -> Bool {
        (entry.targets ?? []).allSatisfy { !($0.endpoint != nil && $0.deviceType != nil) }
    }
}
