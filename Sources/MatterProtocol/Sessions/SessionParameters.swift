import MatterModel
import MatterTLV

/// A node's session parameters (Matter Core spec 4.12.8, 2.12.5): the MRP timing
/// its peers must use when sending to it, plus protocol revisions. Carried in
/// PASE/CASE handshakes as a TLV structure and advertised over DNS-SD.
public struct SessionParameters: Sendable, Hashable {
    /// SESSION_IDLE_INTERVAL: retry interval while the node is idle.
    public var idleInterval: Duration
    /// SESSION_ACTIVE_INTERVAL: retry interval while the node is active.
    public var activeInterval: Duration
    /// SESSION_ACTIVE_THRESHOLD: how long the node stays active after network activity.
    public var activeThreshold: Duration
    public var dataModelRevision: UInt16?
    public var interactionModelRevision: UInt16?
    public var specificationVersion: UInt32?
    public var maxPathsPerInvoke: UInt16?

    public init(
        idleInterval: Duration = .milliseconds(500), activeInterval: Duration = .milliseconds(300),
        activeThreshold: Duration = .milliseconds(4000), dataModelRevision: UInt16? = nil,
        interactionModelRevision: UInt16? = nil, specificationVersion: UInt32? = nil,
        maxPathsPerInvoke: UInt16? = nil
    ) {
        self.idleInterval = idleInterval
        self.activeInterval = activeInterval
        self.activeThreshold = activeThreshold
        self.dataModelRevision = dataModelRevision
        self.interactionModelRevision = interactionModelRevision
        self.specificationVersion = specificationVersion
        self.maxPathsPerInvoke = maxPathsPerInvoke
    }

    /// The spec defaults (SII 500 ms, SAI 300 ms, SAT 4 s), used when a peer sends none.
    public static let `default` = SessionParameters()

    /// What this implementation announces: the defaults plus Matter 1.4 revisions (data model 18,
    /// interaction model 12, spec 1.4.0.0, matching BasicInformation and the IM layer), one path per invoke.
    public static let local = SessionParameters(
        dataModelRevision: 18, interactionModelRevision: 12, specificationVersion: MatterSpecification.specificationVersion,
        maxPathsPerInvoke: 1)

    /// Spec 4.12.8: SESSION_IDLE_INTERVAL and SESSION_ACTIVE_INTERVAL are capped at one hour.
    static let maximumInterval: Duration = .seconds(3600)

    /// The session-parameter-struct with the given tag.
    public func tlv(tag: TLVTag) -> TLVElement {
        var fields: [TLVElement] = [
            TLVElement(tag: .context(1), .unsigned(UInt64(Self.milliseconds(idleInterval)))),
            TLVElement(tag: .context(2), .unsigned(UInt64(Self.milliseconds(activeInterval)))),
            TLVElement(tag: .context(3), .unsigned(UInt64(min(Self.milliseconds(activeThreshold), UInt64(UInt16.max))))),
        ]
        if let v = dataModelRevision { fields.append(TLVElement(tag: .context(4), .unsigned(UInt64(v)))) }
        if let v = interactionModelRevision { fields.append(TLVElement(tag: .context(5), .unsigned(UInt64(v)))) }
        if let v = specificationVersion { fields.append(TLVElement(tag: .context(6), .unsigned(UInt64(v)))) }
        if let v = maxPathsPerInvoke { fields.append(TLVElement(tag: .context(7), .unsigned(UInt64(v)))) }
        return TLVElement(tag: tag, .structure(fields))
    }

    /// Reads a session-parameter-struct. Absent fields take the defaults; fields of
    /// the wrong type or range are rejected; unknown tags are ignored.
    public init(tlv value: TLVValue) throws(SecureChannelError) {
        guard case .structure(let fields) = value else { throw .invalidMessage("session parameters are not a structure") }
        self = .default
        for field in fields {
            guard case .context(let tag) = field.tag else { continue }
            switch tag {
            case 1: idleInterval = .milliseconds(try Self.interval(field.value, max: UInt64(UInt32.max)))
            case 2: activeInterval = .milliseconds(try Self.interval(field.value, max: UInt64(UInt32.max)))
            case 3: activeThreshold = .milliseconds(try Self.interval(field.value, max: UInt64(UInt16.max)))
            case 4: dataModelRevision = UInt16(try Self.interval(field.value, max: UInt64(UInt16.max)))
            case 5: interactionModelRevision = UInt16(try Self.interval(field.value, max: UInt64(UInt16.max)))
            case 6: specificationVersion = UInt32(try Self.interval(field.value, max: UInt64(UInt32.max)))
            case 7: maxPathsPerInvoke = UInt16(try Self.interval(field.value, max: UInt64(UInt16.max)))
            default: continue
            }
        }
        idleInterval = min(idleInterval, Self.maximumInterval)
        activeInterval = min(activeInterval, Self.maximumInterval)
    }

    private static func interval(_ value: TLVValue, max: UInt64) throws(SecureChannelError) -> UInt64 {
        guard case .unsigned(let v) = value, v <= max else { throw .invalidMessage("session parameter out of range") }
        return v
    }

    static func milliseconds(_ d: Duration) -> UInt64 {
        let (seconds, attoseconds) = d.components
        guard seconds >= 0 else { return 0 }
        let ms = UInt64(seconds).multipliedReportingOverflow(by: 1000)
        guard !ms.overflow else { return UInt64(UInt32.max) }
        return Swift.min(ms.partialValue + UInt64(attoseconds / 1_000_000_000_000_000), UInt64(UInt32.max))
    }
}
