import MatterModel
import MatterTLV

// Access Control (Matter Core spec 6.6): the ACL entries a fabric's administrators write, and
// the access-check algorithm every read, write and invoke goes through.

/// The request side of an access check: the path and the device types on its endpoint.
public struct AccessRequest: Sendable, Hashable {
    public var endpoint: EndpointNumber
    public var cluster: ClusterID
    public var deviceTypes: [DeviceTypeID]
    public var privilege: Privilege

    public init(endpoint: EndpointNumber, cluster: ClusterID, deviceTypes: [DeviceTypeID] = [], privilege: Privilege) {
        self.endpoint = endpoint
        self.cluster = cluster
        self.deviceTypes = deviceTypes
        self.privilege = privilege
    }
}

public enum AccessControl {
    /// CATs are carried in ACL subjects as 0xFFFF_FFFD_IIII_VVVV (spec 6.6.2.1.2).
    static let catSubjectPrefix: UInt64 = 0xFFFF_FFFD_0000_0000

    /// A subject in the CAT range (its high 32 bits the CAT prefix's).
    static func isCATSubject(_ subject: UInt64) -> Bool { subject & 0xFFFF_FFFF_0000_0000 == catSubjectPrefix }

    /// Spec 6.6.6 "Access Control Privilege Granting Algorithm".
    public static func check(_ subject: SubjectDescriptor, _ request: AccessRequest, entries: [AccessControlEntry]) -> Bool {
        // A PASE session is granted Administer implicitly while commissioning (spec 6.6.2.9).
        if subject.authMode == .pase { return true }
        return entries.contains { entry in
            entry.fabricIndex == subject.fabricIndex && entry.authMode == subject.authMode
                && entry.privilege.grants(request.privilege)
                && matchesSubject(entry, subject) && matchesTarget(entry, request)
        }
    }

    static func matchesSubject(_ entry: AccessControlEntry, _ subject: SubjectDescriptor) -> Bool {
        guard let subjects = entry.subjects, !subjects.isEmpty else { return true }
        return subjects.contains { candidate in
            if candidate == subject.subject { return true }
            guard subject.authMode == .case, isCATSubject(candidate) else { return false }
            let catID = UInt16(truncatingIfNeeded: candidate >> 16)
            let minVersion = UInt16(truncatingIfNeeded: candidate)
            return subject.caseAuthenticatedTags.contains { UInt16($0 >> 16) == catID && UInt16(truncatingIfNeeded: $0) >= minVersion }
        }
    }

    static func matchesTarget(_ entry: AccessControlEntry, _ request: AccessRequest) -> Bool {
        guard let targets = entry.targets, !targets.isEmpty else { return true }
        return targets.contains { t in
            (t.cluster.map { $0 == request.cluster.rawValue } ?? true)
                && (t.endpoint.map { $0 == request.endpoint } ?? true)
                && (t.deviceType.map { dt in request.deviceTypes.contains { $0.rawValue == dt } } ?? true)
        }
    }
}
