import Foundation
import MatterModel
import MatterTLV
import NIOConcurrencyHelpers

/// Why a candidate is not supported (GoogleHomeSDK `UnsupportedCandidateReasonType`).
public enum UnsupportedCandidateReasonType: Sendable, Hashable, CustomStringConvertible {
    /// Scheduled starters need the structure's address (time zone, sun times).
    case missingStructureAddressSetup
    /// Presence starters need presence sensing set up (none in this home model yet).
    case missingPresenceSensingSetup(setupType: PresenceSensingSetupType)
    /// Attribute starters need live state: this Home does not subscribe to its devices.
    case missingSubscription
    case featureNotAvailable
    case unknown

    public var description: String {
        switch self {
        case .missingStructureAddressSetup: "missingStructureAddressSetup"
        case .missingPresenceSensingSetup(let setupType): "missingPresenceSensingSetup(\(setupType))"
        case .missingSubscription: "missingSubscription"
        case .featureNotAvailable: "featureNotAvailable"
        case .unknown: "unknown"
        }
    }
}

/// The presence sensing a `missingPresenceSensingSetup` candidate lacks.
public enum PresenceSensingSetupType: Sendable, Hashable {
    case unspecified
    case areaPresence
    case areaAttendance
}

/// Why a candidate cannot be used in an automation yet.
public struct UnsupportedCandidateReason: Sendable, Hashable, CustomStringConvertible {
    public let reasonType: UnsupportedCandidateReasonType
    /// What to do about it, for validation errors (not in the SDK's struct).
    public let message: String

    public init(reasonType: UnsupportedCandidateReasonType) {
        self.init(reasonType: reasonType, message: "")
    }

    init(reasonType: UnsupportedCandidateReasonType, message: String) {
        self.reasonType = reasonType
        self.message = message
    }

    public var description: String { message.isEmpty ? reasonType.description : "\(reasonType): \(message)" }
}

/// What every Discovery candidate has: the object it is on, the device types and trait it
/// comes from, the details of its fields, and why it cannot be used (empty when it can).
public protocol NodeCandidate: Hashable, Sendable {
    associatedtype FieldDetailsType: FieldDetails
    var homeObject: any HomeObject { get }
    var deviceTypes: [any DeviceType.Type] { get }
    var trait: any Trait.Type { get }
    var fieldDetails: [AnyField: FieldDetailsType] { get }
    var unsupportedReasons: [UnsupportedCandidateReason] { get }
}

/// A candidate of any kind, as `candidates().list()` returns them; `node` is the candidate
/// itself, to cast: `.compactMap({ $0.node as? CommandCandidate })`.
public struct AnyNodeCandidate: Hashable, Sendable {
    public let node: any NodeCandidate

    public init(_ node: any NodeCandidate) { self.node = node }

    public static func == (a: AnyNodeCandidate, b: AnyNodeCandidate) -> Bool { AnyHashable(a.node) == AnyHashable(b.node) }
    public func hash(into hasher: inout Hasher) { hasher.combine(AnyHashable(node)) }
}

/// Where a device candidate lives, for validation and for running automations.
struct CandidateLocation: Sendable, Hashable {
    var deviceID: String?
    var endpoint: UInt16
    var cluster: UInt32
}

/// A trait's attributes: usable in starters, conditions and (when modifiable) actions.
public struct TraitAttributesCandidate: NodeCandidate {
    public let homeObject: any HomeObject
    public let deviceTypes: [any DeviceType.Type]
    public let trait: any Trait.Type
    public let fieldDetails: [AnyField: AttributeFieldDetails]
    public let unsupportedReasons: [UnsupportedCandidateReason]
    let location: CandidateLocation

    public static func == (a: Self, b: Self) -> Bool {
        a.homeObject.id == b.homeObject.id && a.trait.identifier == b.trait.identifier && a.fieldDetails == b.fieldDetails
            && a.unsupportedReasons == b.unsupportedReasons && a.deviceTypes.map { $0.identifier } == b.deviceTypes.map { $0.identifier }
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(homeObject.id)
        hasher.combine(trait.identifier)
        hasher.combine(fieldDetails)
    }
}

/// A command: usable in actions.
public struct CommandCandidate: NodeCandidate {
    public let homeObject: any HomeObject
    public let deviceTypes: [any DeviceType.Type]
    public let trait: any Trait.Type
    public let command: any CommandDescriptor.Type
    public let fieldDetails: [AnyField: CommandFieldDetails]
    public let unsupportedReasons: [UnsupportedCandidateReason]
    let location: CandidateLocation

    public static func == (a: Self, b: Self) -> Bool {
        a.homeObject.id == b.homeObject.id && a.trait.identifier == b.trait.identifier && a.command.commandID == b.command.commandID
            && a.fieldDetails == b.fieldDetails && a.unsupportedReasons == b.unsupportedReasons
            && a.deviceTypes.map { $0.identifier } == b.deviceTypes.map { $0.identifier }
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(homeObject.id)
        hasher.combine(trait.identifier)
        hasher.combine(command.commandID)
    }
}

/// An event: usable in starters.
public struct EventCandidate: NodeCandidate {
    public let homeObject: any HomeObject
    public let deviceTypes: [any DeviceType.Type]
    public let trait: any Trait.Type
    public let event: any EventDescriptor.Type
    public let fieldDetails: [AnyField: EventFieldDetails]
    public let unsupportedReasons: [UnsupportedCandidateReason]
    /// Where a device's event comes from (nil for a structure's).
    var location: CandidateLocation? = nil

    public static func == (a: Self, b: Self) -> Bool {
        a.homeObject.id == b.homeObject.id && a.trait.identifier == b.trait.identifier && a.event.eventID == b.event.eventID
            && a.fieldDetails == b.fieldDetails && a.unsupportedReasons == b.unsupportedReasons
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(homeObject.id)
        hasher.combine(trait.identifier)
        hasher.combine(event.eventID)
    }
}

/// The candidates of a structure (or of one device) at one moment.
public struct CandidateSnapshot: Sendable {
    /// Distinct per snapshot taken: equal IDs mean the cached snapshot was returned.
    public let id: UUID
    public let createdAt: Date
    let candidates: [any NodeCandidate]

    /// The candidates, each wrapped as the SDK's `Query<AnyNodeCandidate>` yields them.
    public func list() -> Set<AnyNodeCandidate> { Set(candidates.map(AnyNodeCandidate.init)) }
}

/// `structure.candidates()`: fetches (or reuses, within the cache lifetime) a snapshot.
public struct CandidateQuery: Sendable {
    let engine: HomeEngine
    let key: DiscoveryCache.Key
    let ignoringCache: Bool

    /// The candidates of the snapshot, as the SDK's `any Query<AnyNodeCandidate>` lists them.
    public func list() async throws(HomeError) -> Set<AnyNodeCandidate> { try await homeCall { try await snapshot().list() } }

    /// The snapshot itself: the cached one when taken less than the cache lifetime ago.
    public func snapshot() async throws(HomeError) -> CandidateSnapshot {
        try await homeCall {
            let lifetime = engine.configuration.candidateCacheLifetime
            if !ignoringCache, let cached = engine.services.discovery.fresh(key, lifetime: lifetime, now: engine.configuration.clock.now) {
                return cached
            }
            try await engine.reloadIfNeeded()
            let snapshot = CandidateSnapshot(
                id: UUID(), createdAt: Date(),
                candidates: try buildCandidates(
                    engine.snapshot, key: key,
                    subscribes: engine.configuration.connectDevices))
            engine.services.discovery.store(snapshot, for: key, now: engine.configuration.clock.now)
            return snapshot
        }
    }
}

/// Snapshots by what was asked, with when they were taken.
final class DiscoveryCache: Sendable {
    struct Key: Sendable, Hashable {
        var structureID: String
        var deviceID: String?
        var includeDescendants: Bool
    }

    private let entries = NIOLockedValueBox<[Key: (CandidateSnapshot, Duration)]>([:])

    func fresh(_ key: Key, lifetime: Duration, now: Duration) -> CandidateSnapshot? {
        entries.withLockedValue { e in
            guard let (snapshot, at) = e[key], now - at < lifetime else { return nil }
            return snapshot
        }
    }

    func store(_ snapshot: CandidateSnapshot, for key: Key, now: Duration) {
        entries.withLockedValue { $0[key] = (snapshot, now) }
    }

    func invalidate() { entries.withLockedValue { $0 = [:] } }
}

extension Structure {
    /// What automations can use in this structure: the structure's own traits and, with
    /// `includeDescendants`, every device's. Cached for `candidateCacheLifetime`;
    /// `ignoringCache` takes a fresh snapshot (tests).
    public func candidates(includeDescendants: Bool = true, ignoringCache: Bool = false) -> CandidateQuery {
        CandidateQuery(
            engine: engine, key: .init(structureID: id, deviceID: nil, includeDescendants: includeDescendants),
            ignoringCache: ignoringCache)
    }

    /// What automations can use on one device of this structure.
    public func candidates(for device: HomeDevice, ignoringCache: Bool = false) -> CandidateQuery {
        CandidateQuery(
            engine: engine, key: .init(structureID: id, deviceID: device.id, includeDescendants: true),
            ignoringCache: ignoringCache)
    }
}

/// Traits automations can use, with the fields and commands they expose.
protocol AutomatableTrait: ClusterTrait {
    associatedtype Attribute: Field & CaseIterable & RawRepresentable where Attribute.RawValue == UInt32
    associatedtype Attributes
    static var commandTypes: [any CommandDescriptor.Type] { get }
    /// The events the trait raises (starters).
    static var eventTypes: [any MatterEvent.Type] { get }
    static func attributeID(_ keyPath: PartialKeyPath<Attributes>) -> UInt32?
}

extension AutomatableTrait {
    static var eventTypes: [any MatterEvent.Type] { [] }
}

let automatableTraits: [any AutomatableTrait.Type] = generatedTraitTypes

/// The fixed constraint of a clock time (a struct of hours, minutes, seconds).
let clockTimeConstraint = Constraint.structConstraint(fieldConstraints: [
    "hours": .uintRangeConstraint(lowerBound: 0, upperBound: 23, step: 1, unit: "h"),
    "minutes": .uintRangeConstraint(lowerBound: 0, upperBound: 59, step: 1, unit: "min"),
    "seconds": .uintRangeConstraint(lowerBound: 0, upperBound: 59, step: 1, unit: "s"),
])

func buildCandidates(_ snapshot: HomeSnapshot, key: DiscoveryCache.Key, subscribes: Bool) throws -> [any NodeCandidate] {
    guard let structure = snapshot.structures[key.structureID] else {
        throw HomeError.notFound("no structure with ID \(key.structureID)")
    }
    var out: [any NodeCandidate] = []
    if key.deviceID == nil {
        let reasons =
            structure.address == nil
            ? [
                UnsupportedCandidateReason(
                    reasonType: .missingStructureAddressSetup,
                    message: "structure \(structure.name) has no address; set one with setAddress(_:)")
            ]
            : []
        out.append(
            EventCandidate(
                homeObject: structure, deviceTypes: [], trait: Google.TimeTrait.self,
                event: Google.TimeTrait.ScheduledEvent.self,
                fieldDetails: [
                    AnyField(erasing: Google.TimeTrait.ScheduledEvent.EventFields.clockTime):
                        EventFieldDetails(isOptional: false, constraint: clockTimeConstraint)
                ],
                unsupportedReasons: reasons))
    }
    guard key.includeDescendants else { return out }
    if let deviceID = key.deviceID {
        guard let d = snapshot.devices[deviceID], d.structureID == key.structureID else {
            throw HomeError.notFound("no device with ID \(deviceID) in structure \(structure.name)")
        }
    }
    let devices = snapshot.devices.values.filter { $0.structureID == key.structureID && (key.deviceID == nil || $0.id == key.deviceID) }
    for device in devices.sorted(by: { $0.id < $1.id }) {
        out += deviceCandidates(device, subscribes: subscribes)
    }
    return out
}

/// The candidates of one device: per automatable trait, its attributes and accepted commands.
func deviceCandidates(_ device: HomeDevice, subscribes: Bool) -> [any NodeCandidate] {
    // Trait contexts by endpoint and cluster, with the device types that carry them.
    var traits: [CandidateLocation: (TraitContext, [any DeviceType.Type])] = [:]
    for (typeID, typeContext) in device.types.collection.contexts.sorted(by: { $0.key < $1.key }) {
        guard let type = deviceTypeTypes.first(where: { $0.matterDeviceTypeID == typeID }) else { continue }
        for context in typeContext.traits.contexts.values {
            guard automatableTraits.contains(where: { $0.clusterID == context.cluster }) else { continue }
            let loc = CandidateLocation(deviceID: device.id, endpoint: context.endpoint, cluster: context.cluster.rawValue)
            traits[loc, default: (context, [])].1.append(type)
        }
    }
    var out: [any NodeCandidate] = []
    for (loc, (context, types)) in traits.sorted(by: { ($0.key.endpoint, $0.key.cluster) < ($1.key.endpoint, $1.key.cluster) }) {
        guard let traitType = automatableTraits.first(where: { $0.clusterID == context.cluster }),
            let cluster = MatterModel.standard.cluster(context.cluster)
        else { continue }
        let builder = ConstraintBuilder(cluster: cluster, reported: context.attributes)
        let scope = FieldScope(traitIdentifier: traitType.identifier, kind: .attribute)
        let known = Set(traitType.attributeIDs)
        var attributes: [AnyField: AttributeFieldDetails] = [:]
        for a in cluster.attributes where known.contains(a.id.rawValue) && context.attributes[a.id] != nil {
            attributes[AnyField(scope: scope, id: a.id.rawValue, name: a.lowerCamelName)] = AttributeFieldDetails(
                isSubscribable: !a.quality.contains(.changesOmitted), isModifiable: a.isWritable, isNullable: a.nullable,
                constraint: builder.constraint(type: a.type, a.constraint))
        }
        let reasons =
            subscribes
            ? []
            : [
                UnsupportedCandidateReason(
                    reasonType: .missingSubscription,
                    message: "this Home does not subscribe to device \(device.name) (connectDevices is off)")
            ]
        out.append(
            TraitAttributesCandidate(
                homeObject: device, deviceTypes: types, trait: traitType, fieldDetails: attributes,
                unsupportedReasons: reasons, location: loc))
        let listsCommands = context.has(Clusters.Global.Attribute.acceptedCommandList.rawValue)
        for command in traitType.commandTypes {
            guard let definition = cluster.command(CommandID(command.commandID)) else { continue }
            // The device's AcceptedCommandList decides; before it is known, the mandatory commands.
            guard listsCommands ? context.accepts(command.commandID) : definition.conformance == .mandatory else { continue }
            var fields: [AnyField: CommandFieldDetails] = [:]
            let commandScope = FieldScope(traitIdentifier: traitType.identifier, kind: .command(command.commandID))
            for f in definition.fields {
                fields[AnyField(scope: commandScope, id: UInt32(f.id), name: f.lowerCamelName)] = CommandFieldDetails(
                    isOptional: f.optional, isNullable: f.nullable,
                    constraint: builder.constraint(type: f.type, f.constraint, fieldName: f.name))
            }
            out.append(
                CommandCandidate(
                    homeObject: device, deviceTypes: types, trait: traitType, command: command,
                    fieldDetails: fields, unsupportedReasons: [], location: loc))
        }
        // Events the cluster can raise with the features the device reports (a Switch without
        // MultiPress never sends MultiPressComplete); before the FeatureMap is known, all.
        let features = context.uint(Clusters.Global.Attribute.featureMap.rawValue, as: UInt32.self).map { cluster.featureCodes(map: $0) }
        for event in traitType.eventTypes {
            guard let definition = cluster.event(EventID(event.eventID)),
                features.map({ definition.conformance.isAllowed(features: $0) }) ?? true
            else { continue }
            var fields: [AnyField: EventFieldDetails] = [:]
            let eventScope = FieldScope(traitIdentifier: traitType.identifier, kind: .event(event.eventID))
            for f in definition.fields {
                fields[AnyField(scope: eventScope, id: UInt32(f.id), name: f.lowerCamelName)] = EventFieldDetails(
                    isOptional: f.optional, constraint: builder.constraint(type: f.type, f.constraint, fieldName: f.name))
            }
            out.append(
                EventCandidate(
                    homeObject: device, deviceTypes: types, trait: traitType, event: event, fieldDetails: fields,
                    unsupportedReasons: reasons, location: loc))
        }
    }
    return out
}

extension AutomatableTrait {
    static var attributeIDs: [UInt32] { Attribute.allCases.map(\.rawValue) }
}
