import MatterModel
import OpenCombine

/// A device type: what a device is (a dimmable light, a window covering), with the
/// traits that make it up.
public protocol DeviceType: Hashable, Sendable {
    static var identifier: String { get }
    var metadata: DeviceTypeMetadata { get }
    var traits: TraitCollection { get }
}

/// The Matter traits a device type may carry; each is nil when the device lacks it.
public struct MatterTraits: Sendable, Hashable {
    let collection: TraitCollection
}

/// What a device type instance is built from: its endpoint's trait contexts.
struct DeviceTypeContext: Sendable, Hashable {
    let isPrimary: Bool
    let traits: TraitCollection

    var metadata: DeviceTypeMetadata {
        DeviceTypeMetadata(
            isPrimaryType: isPrimary,
            sourceConnectivity: .combining(traits.contexts.keys.sorted().compactMap { traits.contexts[$0]?.connectivity }))
    }
}

/// Device types the engine can build from a Matter device type ID.
protocol MatterDeviceType: DeviceType {
    static var matterDeviceTypeID: UInt32 { get }
    init(context: DeviceTypeContext)
}

let deviceTypeTypes: [any MatterDeviceType.Type] =
    [
        OnOffLightDeviceType.self, DimmableLightDeviceType.self, OnOffPluginUnitDeviceType.self, WindowCoveringDeviceType.self,
    ] + generatedDeviceTypeTypes

/// An On/Off Light (Matter device type 0x0100).
public struct OnOffLightDeviceType: DeviceType, MatterDeviceType {
    public static let identifier = "home.matter.0000.types.0100"
    static let matterDeviceTypeID = DeviceTypes.onOffLight.rawValue
    let context: DeviceTypeContext
    init(context: DeviceTypeContext) { self.context = context }
    public var metadata: DeviceTypeMetadata { context.metadata }
    public var traits: TraitCollection { context.traits }
    public var matterTraits: MatterTraits { MatterTraits(collection: context.traits) }
}

/// A Dimmable Light (0x0101).
public struct DimmableLightDeviceType: DeviceType, MatterDeviceType {
    public static let identifier = "home.matter.0000.types.0101"
    static let matterDeviceTypeID = DeviceTypes.dimmableLight.rawValue
    let context: DeviceTypeContext
    init(context: DeviceTypeContext) { self.context = context }
    public var metadata: DeviceTypeMetadata { context.metadata }
    public var traits: TraitCollection { context.traits }
    public var matterTraits: MatterTraits { MatterTraits(collection: context.traits) }
}

/// An On/Off Plug-in Unit (0x010A).
public struct OnOffPluginUnitDeviceType: DeviceType, MatterDeviceType {
    public static let identifier = "home.matter.0000.types.010a"
    static let matterDeviceTypeID = DeviceTypes.onOffPlugInUnit.rawValue
    let context: DeviceTypeContext
    init(context: DeviceTypeContext) { self.context = context }
    public var metadata: DeviceTypeMetadata { context.metadata }
    public var traits: TraitCollection { context.traits }
    public var matterTraits: MatterTraits { MatterTraits(collection: context.traits) }
}

/// A Window Covering (0x0202).
public struct WindowCoveringDeviceType: DeviceType, MatterDeviceType {
    public static let identifier = "home.matter.0000.types.0202"
    static let matterDeviceTypeID = DeviceTypes.windowCovering.rawValue
    let context: DeviceTypeContext
    init(context: DeviceTypeContext) { self.context = context }
    public var metadata: DeviceTypeMetadata { context.metadata }
    public var traits: TraitCollection { context.traits }
    public var matterTraits: MatterTraits { MatterTraits(collection: context.traits) }
}

/// Superset relations of Matter's device library (Device Library spec, "superset of"):
/// Dimmable Light ⊇ On/Off Light, Color Temperature Light ⊇ Dimmable Light, Extended Color
/// Light ⊇ Color Temperature Light.
private let matterSupersetOf: [UInt32: UInt32] = [
    DeviceTypes.dimmableLight.rawValue: DeviceTypes.onOffLight.rawValue,
    DeviceTypes.colorTemperatureLight.rawValue: DeviceTypes.dimmableLight.rawValue,
    DeviceTypes.extendedColorLight.rawValue: DeviceTypes.colorTemperatureLight.rawValue,
]

/// Whether a device of type `have` can be used where `wanted` is named: the same type or
/// one of its Matter supersets.
func serves(_ have: any DeviceType.Type, as wanted: any DeviceType.Type) -> Bool {
    guard have.identifier != wanted.identifier else { return true }
    guard let matter = have as? any MatterDeviceType.Type, let wantedMatter = wanted as? any MatterDeviceType.Type else { return false }
    var id = matter.matterDeviceTypeID
    while let parent = matterSupersetOf[id] {
        if parent == wantedMatter.matterDeviceTypeID { return true }
        id = parent
    }
    return false
}

/// A Google doorbell (`GoogleHomeTypes.GoogleDoorbellDeviceType`, a cloud device type).
/// Google devices reach an app only through Google's cloud, which this home does not have:
/// `types.get(GoogleDoorbellDeviceType.self)` is always nil here.
public struct GoogleDoorbellDeviceType: DeviceType {
    public static let identifier = "home.matter.6006.types.0113"
    let context: DeviceTypeContext
    public var metadata: DeviceTypeMetadata { context.metadata }
    public var traits: TraitCollection { context.traits }
    public var googleTraits: GoogleDoorbellGoogleTraits { GoogleDoorbellGoogleTraits(collection: context.traits) }

    /// The doorbell's Google traits; each is nil when the device lacks it.
    public struct GoogleDoorbellGoogleTraits: Sendable, Hashable {
        let collection: TraitCollection
        public var pushAvStreamTransportTrait: Google.PushAvStreamTransportTrait? { collection[Google.PushAvStreamTransportTrait.self] }
        public var webRtcLiveViewTrait: Google.WebRtcLiveViewTrait? { collection[Google.WebRtcLiveViewTrait.self] }
        /// Not on the SDK's container (the reference lists the two above); the Device guide reads it.
        public var doorbellPressTrait: Google.DoorbellPressTrait? { collection[Google.DoorbellPressTrait.self] }
    }
}

/// All device types of a device, by type: `types[DimmableLightDeviceType.self]`.
public struct DeviceTypeCollection: Sendable, Hashable {
    let contexts: [UInt32: DeviceTypeContext]

    public subscript<T: DeviceType>(_ type: T.Type) -> T? {
        guard let buildable = type as? any MatterDeviceType.Type, let context = contexts[buildable.matterDeviceTypeID] else { return nil }
        return buildable.init(context: context) as? T
    }

    public func contains<T: DeviceType>(_ type: T.Type) -> Bool {
        guard let buildable = type as? any MatterDeviceType.Type else { return false }
        return contexts[buildable.matterDeviceTypeID] != nil
    }

    /// Whether the device has `type` or a Matter superset of it (a Dimmable Light serves
    /// where an On/Off Light is named, as the Discovery guide's starter does).
    func serves(_ type: any DeviceType.Type) -> Bool {
        contexts.keys.contains { id in deviceTypeTypes.first { $0.matterDeviceTypeID == id }.map { HomeAPI.serves($0, as: type) } ?? false }
    }

    /// Every known device type of the device.
    public var all: [any DeviceType] {
        contexts.keys.sorted().compactMap { id -> (any DeviceType)? in
            guard let context = contexts[id] else { return nil }
            return deviceTypeTypes.first { $0.matterDeviceTypeID == id }.map { $0.init(context: context) }
        }
    }
}
