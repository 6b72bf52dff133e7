// One cluster as the spec defines it: identity, features, elements and data types.

public struct ClusterDefinition: Sendable, Hashable {
    public var id: ClusterID
    /// UpperCamel spec name, "OnOff".
    public var name: String
    /// ClusterRevision this model describes.
    public var revision: UInt16
    public var features: [FeatureDefinition]
    /// Cluster-specific attributes (global attributes are in `globalAttributes`).
    public var attributes: [AttributeDefinition]
    /// The global attributes every cluster has (ClusterRevision, FeatureMap, ...).
    public var globalAttributes: [AttributeDefinition]
    /// Requests (client → server) and responses (server → client).
    public var commands: [CommandDefinition]
    public var events: [EventDefinition]
    public var enums: [EnumDefinition]
    public var bitmaps: [BitmapDefinition]
    public var structs: [StructDefinition]

    public init(
        id: ClusterID, name: String, revision: UInt16, features: [FeatureDefinition] = [],
        attributes: [AttributeDefinition] = [], globalAttributes: [AttributeDefinition] = [],
        commands: [CommandDefinition] = [], events: [EventDefinition] = [],
        enums: [EnumDefinition] = [], bitmaps: [BitmapDefinition] = [], structs: [StructDefinition] = []
    ) {
        self.id = id
        self.name = name
        self.revision = revision
        self.features = features
        self.attributes = attributes
        self.globalAttributes = globalAttributes
        self.commands = commands
        self.events = events
        self.enums = enums
        self.bitmaps = bitmaps
        self.structs = structs
    }

    public var lowerCamelName: String { Naming.lowerCamel(name) }

    /// Cluster-specific attributes followed by the global ones.
    public var allAttributes: [AttributeDefinition] { attributes + globalAttributes }

    // MARK: Lookup

    /// A cluster-specific or global attribute.
    public func attribute(_ id: AttributeID) -> AttributeDefinition? {
        attributes.first { $0.id == id } ?? globalAttributes.first { $0.id == id }
    }

    /// "CurrentLevel" or "currentLevel".
    public func attribute(named name: String) -> AttributeDefinition? {
        attributes.first { Naming.matches($0.name, name) } ?? globalAttributes.first { Naming.matches($0.name, name) }
    }

    /// The request command (client → server) with this ID.
    public func command(_ id: CommandID) -> CommandDefinition? {
        commands.first { $0.id == id && $0.direction == .request }
    }

    /// The response command (server → client) with this ID.
    public func response(_ id: CommandID) -> CommandDefinition? {
        commands.first { $0.id == id && $0.direction == .response }
    }

    /// A request or response command by name.
    public func command(named name: String) -> CommandDefinition? {
        commands.first { Naming.matches($0.name, name) }
    }

    public var requests: [CommandDefinition] { commands.filter { $0.direction == .request } }
    public var responses: [CommandDefinition] { commands.filter { $0.direction == .response } }

    public func event(_ id: EventID) -> EventDefinition? { events.first { $0.id == id } }
    public func event(named name: String) -> EventDefinition? { events.first { Naming.matches($0.name, name) } }

    public func enumDefinition(named name: String) -> EnumDefinition? { enums.first { $0.name == name } }
    public func bitmapDefinition(named name: String) -> BitmapDefinition? { bitmaps.first { $0.name == name } }
    public func structDefinition(named name: String) -> StructDefinition? { structs.first { $0.name == name } }

    public func feature(code: String) -> FeatureDefinition? { features.first { $0.code == code } }
    public func feature(named name: String) -> FeatureDefinition? {
        features.first { $0.code == name || Naming.matches($0.name, name) }
    }

    // MARK: Features

    /// FeatureMap value for a set of feature codes (unknown codes are ignored).
    public func featureMap(codes: Set<String>) -> UInt32 {
        features.reduce(0) { codes.contains($1.code) ? $0 | $1.mask : $0 }
    }

    /// Feature codes set in a FeatureMap value (unknown bits are ignored).
    public func featureCodes(map: UInt32) -> Set<String> {
        Set(features.filter { map & $0.mask != 0 }.map(\.code))
    }

    // MARK: Conformance

    /// Attributes that must be present with these features (cluster-specific only).
    public func mandatoryAttributes(features: Set<String>) -> [AttributeDefinition] {
        attributes.filter { $0.conformance.isMandatory(features: features) }
    }

    /// Attributes that may be present with these features (mandatory + optional).
    public func allowedAttributes(features: Set<String>) -> [AttributeDefinition] {
        attributes.filter { $0.conformance.isAllowed(features: features) }
    }

    /// Same as `allowedAttributes(features:)`.
    public func attributes(forFeatures features: Set<String>) -> [AttributeDefinition] {
        allowedAttributes(features: features)
    }

    /// Commands (both directions) that must be present with these features.
    public func mandatoryCommands(features: Set<String>) -> [CommandDefinition] {
        commands.filter { $0.conformance.isMandatory(features: features) }
    }

    public func allowedCommands(features: Set<String>) -> [CommandDefinition] {
        commands.filter { $0.conformance.isAllowed(features: features) }
    }

    public func mandatoryEvents(features: Set<String>) -> [EventDefinition] {
        events.filter { $0.conformance.isMandatory(features: features) }
    }

    public func allowedEvents(features: Set<String>) -> [EventDefinition] {
        events.filter { $0.conformance.isAllowed(features: features) }
    }

    /// Feature sets the spec requires together are not checked here; this only tells
    /// whether each code is a defined, non-disallowed feature.
    public func unknownFeatureCodes(_ codes: Set<String>) -> Set<String> {
        codes.subtracting(features.map(\.code))
    }
}
