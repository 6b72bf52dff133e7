import MatterModel
import MatterTLV

// What the generated RVC mode traits leave untyped: SupportedModes (a list of structs), read
// here for the current mode's label and for the mode a tag names (an app starts a clean by
// the mode tagged Cleaning, whatever number the vacuum gives it).

extension Matter.RvcRunModeTrait {
    /// The device's label for CurrentMode ("Cleaning"), nil when SupportedModes does not list it.
    public var currentModeLabel: String? { rvcModes(context).first { $0.mode == attributes.currentMode }?.label }
    /// The first mode carrying the tag (a ModeTag, e.g. Cleaning), nil when none does.
    public func mode(tagged tag: Clusters.RvcRunMode.ModeTag) -> UInt8? {
        rvcModes(context).first { $0.modeTags.contains { $0.value == tag.rawValue } }?.mode
    }
}

extension Matter.RvcCleanModeTrait {
    /// The device's label for CurrentMode ("Deep clean").
    public var currentModeLabel: String? { rvcModes(context).first { $0.mode == attributes.currentMode }?.label }
    /// The mode with this label (case-insensitive), nil when none has it.
    public func mode(labelled label: String) -> UInt8? {
        rvcModes(context).first { $0.label.caseInsensitiveCompare(label) == .orderedSame }?.mode
    }
}

/// SupportedModes as ModeOptionStructs (both RVC mode clusters share its shape); malformed entries are left out.
private func rvcModes(_ context: TraitContext) -> [Clusters.RvcRunMode.ModeOptionStruct] {
    guard case .array(let items)? = context.attributes[Clusters.RvcRunMode.Attribute.supportedModes] else { return [] }
    return items.compactMap { try? Clusters.RvcRunMode.ModeOptionStruct(tlv: $0.value) }
}
