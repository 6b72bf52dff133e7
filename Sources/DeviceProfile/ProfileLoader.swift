// Entry points: read a profile file (device or home, told apart by its keys), check
// everything, and hand back either the resolved value or every problem found.
import Foundation
import MatterModel
import MatterTLV

public enum ProfileKind: String, Sendable, Hashable {
    case device, home
}

public enum LoadedProfile: Sendable, Hashable {
    case device(ResolvedDeviceProfile)
    case home(ResolvedHome)
}

/// Why a file could not be read.
public enum ProfileFileError: Error, Sendable, Hashable {
    case notFound
    case unreadable(String)
}

/// Where profile files come from: the disk, or (for tests) a dictionary.
public struct ProfileFileSystem: Sendable {
    public var read: @Sendable (String) throws(ProfileFileError) -> Data

    public init(read: @escaping @Sendable (String) throws(ProfileFileError) -> Data) {
        self.read = read
    }

    public static let disk = ProfileFileSystem { (path: String) throws(ProfileFileError) -> Data in
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .notFound }
        if isDirectory.boolValue { throw .unreadable("it is a directory") }
        do {
            return try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadable(error.localizedDescription)
        }
    }

    /// Files held in memory, keyed by normalized path.
    public static func memory(_ files: [String: String]) -> ProfileFileSystem {
        let normalized = Dictionary(files.map { (ProfilePaths.normalize($0.key), Data($0.value.utf8)) }, uniquingKeysWith: { a, _ in a })
        return ProfileFileSystem { (path: String) throws(ProfileFileError) -> Data in
            guard let data = normalized[ProfilePaths.normalize(path)] else { throw .notFound }
            return data
        }
    }
}

/// The outcome of loading one file: the profile when it is valid, and every diagnostic
/// (for a home, including those in the device profiles it references).
public struct ProfileLoadResult: Sendable {
    public var file: String
    /// nil when the file could not be read or parsed far enough to tell.
    public var kind: ProfileKind?
    public var profile: LoadedProfile?
    public var diagnostics: [ProfileDiagnostic]
    /// Device profile files a home referenced (normalized paths), in first-use order.
    public var referencedFiles: [String]
}

public struct ProfileLoader: Sendable {
    public let model: MatterModel
    public let fileSystem: ProfileFileSystem

    public init(model: MatterModel = .standard, fileSystem: ProfileFileSystem = .disk) {
        self.model = model
        self.fileSystem = fileSystem
    }

    // MARK: Public entry points

    /// Loads a device profile or a home, whichever the file is.
    public func load(file: String) -> ProfileLoadResult {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil), let root = parse(text, file: file, sink: sink) else {
            return ProfileLoadResult(file: file, kind: nil, profile: nil, diagnostics: sink.all, referencedFiles: [])
        }
        return load(root: root, file: file, sink: sink, forced: nil)
    }

    /// Loads YAML text as if it were the file `file` (a home's references resolve next to it).
    public func load(yaml: String, file: String) -> ProfileLoadResult {
        let sink = DiagnosticSink()
        guard let root = parse(yaml, file: file, sink: sink) else {
            return ProfileLoadResult(file: file, kind: nil, profile: nil, diagnostics: sink.all, referencedFiles: [])
        }
        return load(root: root, file: file, sink: sink, forced: nil)
    }

    public func loadDevice(file: String) throws(ProfileErrors) -> ResolvedDeviceProfile {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil) else { throw ProfileErrors(sink.all) }
        return try loadDevice(yaml: text, file: file)
    }

    public func loadDevice(yaml: String, file: String) throws(ProfileErrors) -> ResolvedDeviceProfile {
        let sink = DiagnosticSink()
        guard let root = parse(yaml, file: file, sink: sink) else { throw ProfileErrors(sink.all) }
        let result = load(root: root, file: file, sink: sink, forced: .device)
        guard case .device(let d)? = result.profile else { throw ProfileErrors(result.diagnostics) }
        return d
    }

    public func loadHome(file: String) throws(ProfileErrors) -> ResolvedHome {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil) else { throw ProfileErrors(sink.all) }
        return try loadHome(yaml: text, file: file)
    }

    public func loadHome(yaml: String, file: String) throws(ProfileErrors) -> ResolvedHome {
        let sink = DiagnosticSink()
        guard let root = parse(yaml, file: file, sink: sink) else { throw ProfileErrors(sink.all) }
        let result = load(root: root, file: file, sink: sink, forced: .home)
        guard case .home(let h)? = result.profile else { throw ProfileErrors(result.diagnostics) }
        return h
    }

    /// Device `index` of a home (from 0, in `ResolvedHome.allDevices` order), resolving only
    /// that device's profile: what a node of `home --process-per-device` needs at start-up,
    /// where the home itself has already checked the rest (issue #43: each of 28 processes
    /// resolving the whole home was most of its start-up). Its discriminator is its own: the
    /// home spreads short discriminators over all its devices (`HomeLaunchPlan` has the
    /// spread one), so a caller without that value loads the whole home instead.
    public func loadHomeDevice(file: String, index: Int) throws(ProfileErrors) -> ResolvedHomeDevice {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil), let root = parse(text, file: file, sink: sink) else {
            throw ProfileErrors(sink.all)
        }
        let doc = DocumentParser(model: model, reader: DocumentReader(file: file, sink: sink)).parseHome(root)
        guard !sink.hasErrors else { throw ProfileErrors(sink.all) }
        var homeResolver = HomeResolver(loader: self, homeFile: file, sink: sink)
        let device = homeResolver.resolveDevice(at: index, of: doc)
        guard let device, !sink.hasErrors else { throw ProfileErrors(sink.all) }
        return device
    }

    /// Part `part` of `parts` of a home (`HomeLaunchPlan.part`: contiguous blocks in file
    /// order), what `matter-sim home --part` runs: only its own devices are resolved, the
    /// others read as far as their setup codes, which the discriminator spread needs. At
    /// 10,000 devices every part resolving the whole home was most of its start-up (issue #43).
    public func loadHomePart(file: String, part: Int, of parts: Int) throws(ProfileErrors) -> ResolvedHomePart {
        let sink = DiagnosticSink()
        guard let text = readText(file, sink: sink, reference: nil), let root = parse(text, file: file, sink: sink) else {
            throw ProfileErrors(sink.all)
        }
        let doc = DocumentParser(model: model, reader: DocumentReader(file: file, sink: sink)).parseHome(root)
        guard !sink.hasErrors else { throw ProfileErrors(sink.all) }
        let count = doc.structures.reduce(0) { $0 + $1.rooms.reduce($1.devices.count) { $0 + $1.devices.count } }
        guard (1...max(1, count)).contains(parts), (1...parts).contains(part) else {
            sink.error(file: file, path: .root, "part \(part) of \(parts): the home has \(count) devices, so 1 ≤ K ≤ N ≤ \(count)")
            throw ProfileErrors(sink.all)
        }
        let indices = (0..<count).filter { HomeLaunchPlan.part(ofNode: $0, nodes: count, parts: parts) == part }
        let range = (indices.first ?? 0)..<((indices.last ?? -1) + 1)
        var homeResolver = HomeResolver(loader: self, homeFile: file, sink: sink)
        guard let home = homeResolver.resolve(doc, part: range), !sink.hasErrors else { throw ProfileErrors(sink.all) }
        return ResolvedHomePart(home: home, first: range.lowerBound, deviceCount: count)
    }

    /// Every problem in a file (and, for a home, in the profiles it references).
    public func validate(file: String) -> [ProfileDiagnostic] {
        load(file: file).diagnostics
    }

    /// Which kind of profile a parsed document is: `kind:` when given, else a home when it
    /// has `structures` (or a near miss of it), else a device.
    static func detectKind(_ root: YAMLNode) -> ProfileKind {
        guard case .mapping(let entries, _) = root else { return .device }
        let keys = entries.compactMap(\.keyText)
        if let kindEntry = entries.first(where: { $0.keyText == "kind" }), case .scalar(let s) = kindEntry.value,
            let kind = ProfileKind(rawValue: s.text)
        {
            return kind
        }
        if keys.contains("structures") { return .home }
        if keys.contains("endpoints") || keys.contains("identity") { return .device }
        if keys.contains(where: { closestMatch(to: $0, in: ["structures"]) != nil }) { return .home }
        return .device
    }

    // MARK: Internals

    private func load(root: YAMLNode, file: String, sink: DiagnosticSink, forced: ProfileKind?) -> ProfileLoadResult {
        let kind = forced ?? Self.detectKind(root)
        let parser = DocumentParser(model: model, reader: DocumentReader(file: file, sink: sink))
        switch kind {
        case .device:
            let doc = parser.parseDevice(root)
            // Resolve even after parse errors (the rejected pieces were left out), so range
            // and conformance problems are reported in the same run.
            let resolved = DeviceResolver(model: model, sink: sink).resolve(doc)
            return ProfileLoadResult(
                file: file, kind: .device, profile: sink.hasErrors ? nil : resolved.map { .device($0) },
                diagnostics: sink.all, referencedFiles: [])
        case .home:
            let doc = parser.parseHome(root)
            var homeResolver = HomeResolver(loader: self, homeFile: file, sink: sink)
            let resolved = homeResolver.resolve(doc)
            return ProfileLoadResult(
                file: file, kind: .home, profile: sink.hasErrors ? nil : resolved.map { .home($0) },
                diagnostics: sink.all, referencedFiles: homeResolver.referencedFiles)
        }
    }

    /// Reads a file as UTF-8. `reference` is where a home named it, so "not found" lands there.
    func readText(_ file: String, sink: DiagnosticSink, reference: Located<String>?) -> String? {
        let data: Data
        do {
            data = try fileSystem.read(file)
        } catch {
            let message: String
            switch error {
            case .notFound:
                message = reference.map { "device profile '\($0.value)' not found (looked for \(file))" } ?? "file not found"
            case .unreadable(let why):
                message = reference.map { "cannot read device profile '\($0.value)' (\(file)): \(why)" } ?? "cannot read file: \(why)"
            }
            if let reference {
                sink.error(reference.origin, message)
            } else {
                sink.error(file: file, path: .root, message)
            }
            return nil
        }
        guard let text = String(data: data, encoding: .utf8) else {
            sink.error(
                reference?.origin ?? Origin(file: file, path: .root, mark: nil),
                reference.map { "device profile '\($0.value)' (\(file)) is not UTF-8 text" } ?? "file is not UTF-8 text")
            return nil
        }
        return text
    }

    func parse(_ text: String, file: String, sink: DiagnosticSink) -> YAMLNode? {
        switch YAMLDocument.parse(text) {
        case .success(let root):
            return root
        case .failure(let error):
            sink.error(file: file, path: .root, error.message, at: error.mark ?? SourceMark(line: 1, column: 1))
            return nil
        }
    }
}

/// Resolves a home: each device's profile is read once, overrides applied per device,
/// names and identities checked for clashes across the home.
struct HomeResolver {
    let loader: ProfileLoader
    let homeFile: String
    let sink: DiagnosticSink
    private(set) var referencedFiles: [String] = []
    private enum CachedDocument {
        case parsed(DeviceDocument)
        /// Read, but with errors (reported in that file).
        case broken
        case unreadable
    }
    private var documents: [String: CachedDocument] = [:]
    /// The home's own `cloud:` block, under every device's.
    private var homeCloud: CloudDocument?
    /// Set when only a part of the home runs here (`resolve(_:part:)`): the devices outside it
    /// are read only as far as their setup codes.
    private var part: Range<Int>?
    /// Each device's setup codes in file order, the part's and the others', for the spread.
    private var codes: [CommissioningParameters] = []

    init(loader: ProfileLoader, homeFile: String, sink: DiagnosticSink) {
        self.loader = loader
        self.homeFile = homeFile
        self.sink = sink
    }

    /// The home, or with `part` (device indices in `ResolvedHome.allDevices` order) only those
    /// devices, in their places, without groups and bindings (a controller makes those): their
    /// discriminators are spread over the whole home as when it all runs.
    mutating func resolve(_ doc: HomeDocument, part: Range<Int>? = nil) -> ResolvedHome? {
        homeCloud = doc.cloud
        self.part = part
        codes = []
        var structures: [ResolvedStructure] = []
        var serials: [String: Origin] = [:]
        var uniqueIDs: [String: Origin] = [:]
        for s in doc.structures {
            var rooms: [ResolvedRoom] = []
            for r in s.rooms {
                rooms.append(
                    ResolvedRoom(
                        name: r.name.value,
                        devices: resolveDevices(
                            r.devices, structure: s.name.value, room: r.name.value,
                            serials: &serials, uniqueIDs: &uniqueIDs)))
            }
            let loose = resolveDevices(s.devices, structure: s.name.value, room: nil, serials: &serials, uniqueIDs: &uniqueIDs)
            let all = rooms.flatMap(\.devices) + loose
            let groups = part == nil ? resolveGroups(s.groups, structure: s.name.value, devices: all) : []
            let bindings = part == nil ? resolveBindings(s.bindings, structure: s.name.value, devices: all) : []
            structures.append(
                ResolvedStructure(name: s.name.value, rooms: rooms, devices: loose, address: s.address, groups: groups, bindings: bindings))
        }
        let stem = (homeFile as NSString).lastPathComponent.split(separator: ".").first.map(String.init) ?? homeFile
        var home = ResolvedHome(name: doc.name ?? stem, source: homeFile, structures: structures)
        if let part, !sink.hasErrors, part.upperBound > codes.count {
            sink.error(file: homeFile, path: .root, "no devices \(part.lowerBound)..<\(part.upperBound): the home has \(codes.count)")
        }
        guard !sink.hasErrors else { return home }
        Self.spreadShortDiscriminators(in: &home, codes: codes, from: part?.lowerBound ?? 0)
        return home
    }

    /// Device `index` alone, in `resolve`'s order (each structure's rooms, then its loose
    /// devices), with its serial number derived as there; nil (and an error) past the last.
    mutating func resolveDevice(at index: Int, of doc: HomeDocument) -> ResolvedHomeDevice? {
        homeCloud = doc.cloud
        var first = 0
        for s in doc.structures {
            let places = s.rooms.map { (room: $0.name.value as String?, devices: $0.devices) } + [(room: nil, devices: s.devices)]
            for place in places {
                if index >= first, index < first + place.devices.count {
                    var serials: [String: Origin] = [:]
                    var uniqueIDs: [String: Origin] = [:]
                    return resolveDevices(
                        [place.devices[index - first]], structure: s.name.value, room: place.room,
                        serials: &serials, uniqueIDs: &uniqueIDs
                    ).first
                }
                first += place.devices.count
            }
        }
        sink.error(file: homeFile, path: .root, "no device \(index): the home has \(first) (0...\(max(0, first - 1)))")
        return nil
    }

    /// `CommissioningCodes.spreadShortDiscriminators` over the whole home's codes in file order
    /// (`allDevices`: rooms first, then each structure's loose devices), applied to the devices
    /// `home` holds, the first of which is the home's device `first`.
    static func spreadShortDiscriminators(in home: inout ResolvedHome, codes: [CommissioningParameters], from first: Int) {
        var spread = CommissioningCodes.spreadShortDiscriminators(
            codes.map { (discriminator: $0.discriminator, generated: $0.discriminatorGenerated) })[first...]
        func apply(_ devices: inout [ResolvedHomeDevice]) {
            for i in devices.indices { devices[i].profile.commissioning.discriminator = spread.removeFirst() }
        }
        for s in home.structures.indices {
            for r in home.structures[s].rooms.indices { apply(&home.structures[s].rooms[r].devices) }
            apply(&home.structures[s].devices)
        }
    }

    private mutating func resolveDevices(
        _ devices: [HomeDeviceDocument], structure: String, room: String?,
        serials: inout [String: Origin], uniqueIDs: inout [String: Origin]
    ) -> [ResolvedHomeDevice] {
        var out: [ResolvedHomeDevice] = []
        var names: [String: Origin] = [:]
        let place = room.map { "room \"\($0)\"" } ?? "structure \"\(structure)\" (outside any room)"
        for d in devices {
            let target = ProfilePaths.join(ProfilePaths.directory(of: homeFile), d.profile.value)
            guard let document = document(at: target, reference: d.profile) else { continue }
            var overrides = d.overrides
            overrides.homeCloud = homeCloud

            // The device's name in the home, needed before resolving to derive its serial number.
            let productName = DeviceResolver.text((overrides.identity["productName"] ?? document.identity["productName"])?.value)
            let fallbackName = (target as NSString).lastPathComponent.split(separator: ".").first.map(String.init) ?? target
            let name = overrides.name?.value ?? document.name?.value ?? productName ?? fallbackName
            let nameOrigin = overrides.name?.origin ?? d.origin
            if let first = names[name] {
                sink.error(
                    nameOrigin, "another device in \(place) is already named \"\(name)\" (\(first.path)); give each a distinct 'name'")
                continue
            }
            names[name] = nameOrigin
            if overrides.name == nil { overrides.name = Located(value: name, origin: d.origin) }

            // Each device in a home gets its own serial number unless the home gives one.
            if overrides.identity["serialNumber"] == nil,
                let base = DeviceResolver.text(document.identity["serialNumber"]?.value),
                let attribute = document.identity["serialNumber"]?.attribute
            {
                let suffix = String(fnv1a64("\(structure)/\(room ?? "")/\(name)") & 0xFF_FFFF, radix: 16, uppercase: true)
                let padded = String(repeating: "0", count: max(0, 6 - suffix.count)) + suffix
                overrides.identity["serialNumber"] = AttributeValueDocument(
                    attribute: attribute, value: .utf8(String(base.prefix(24)) + "-" + padded), origin: d.origin)
            }

            // Outside the part run here, the setup codes are all that is needed.
            let index = codes.count
            if let part, !part.contains(index),
                let commissioning = DeviceResolver(model: loader.model, sink: sink).commissioningOnly(document, overrides: overrides)
            {
                codes.append(commissioning)
                continue
            }
            guard let profile = DeviceResolver(model: loader.model, sink: sink).resolve(document, overrides: overrides) else { continue }
            codes.append(profile.commissioning)
            if let part, !part.contains(index) { continue }
            let serialOrigin = overrides.identity["serialNumber"]?.origin ?? d.origin
            if let first = serials[profile.identity.serialNumber] {
                sink.error(
                    serialOrigin,
                    "serial number \"\(profile.identity.serialNumber)\" is also used by \(first.path); each device needs its own")
                continue
            }
            serials[profile.identity.serialNumber] = d.origin
            if let first = uniqueIDs[profile.identity.uniqueID] {
                // Only possible when the profile fixes a uniqueID and the home uses it twice.
                sink.error(
                    overrides.identity["uniqueID"]?.origin ?? d.origin,
                    "uniqueID \"\(profile.identity.uniqueID)\" is also used by \(first.path); give this device its own identity.uniqueID")
                continue
            }
            uniqueIDs[profile.identity.uniqueID] = d.origin
            out.append(
                ResolvedHomeDevice(
                    name: name, structure: structure, room: room,
                    profileReference: d.profile.value, profile: profile))
        }
        return out
    }

    /// The device named `name` in the structure, or an error at `origin` listing its devices.
    private func device(_ name: Located<String>, structure: String, in devices: [ResolvedHomeDevice]) -> ResolvedHomeDevice? {
        if let device = devices.first(where: { $0.name == name.value }) { return device }
        let known = devices.isEmpty ? "it has none" : "its devices: " + devices.map { "\"\($0.name)\"" }.joined(separator: ", ")
        sink.error(name.origin, "no device named \"\(name.value)\" in structure \"\(structure)\" (\(known))")
        return nil
    }

    /// A structure's switch bindings: the switch a device with a Binding cluster (a light
    /// switch), each light a device of the same structure with a light or plug endpoint.
    private func resolveBindings(_ bindings: [BindingDocument], structure: String, devices: [ResolvedHomeDevice]) -> [ResolvedSwitchBinding] {
        func has(_ device: ResolvedHomeDevice, _ cluster: ClusterID) -> Bool {
            device.profile.endpoints.contains { $0.clusters.contains { $0.id == cluster } }
        }
        var out: [ResolvedSwitchBinding] = []
        for b in bindings {
            guard let switchDevice = device(b.switchDevice, structure: structure, in: devices) else { continue }
            guard has(switchDevice, Clusters.Binding.id) else {
                sink.error(
                    b.switchDevice.origin,
                    "device \"\(switchDevice.name)\" cannot be bound: its profile (\(switchDevice.profileReference)) has no Binding "
                        + "cluster (an On/Off Light Switch or Dimmer Switch has one)")
                continue
            }
            var lights: [String] = []
            for light in b.lights {
                guard let target = device(light, structure: structure, in: devices) else { continue }
                // A light or plug endpoint: its device type requires Groups beside On/Off (the
                // endpoint a controller binds to); a speaker's or a fan's On/Off is not a light's.
                guard target.profile.endpoints.contains(where: { e in
                    [Clusters.OnOff.id, Clusters.Groups.id].allSatisfy { id in e.clusters.contains { $0.id == id } }
                }) else {
                    sink.error(
                        light.origin,
                        "device \"\(target.name)\" cannot be switched: its profile (\(target.profileReference)) has no light or plug "
                            + "endpoint (OnOff and Groups clusters)")
                    continue
                }
                lights.append(target.name)
            }
            out.append(ResolvedSwitchBinding(switchDevice: switchDevice.name, lights: lights))
        }
        return out
    }

    /// A structure's groups, each member a device of that structure with a Groups cluster
    /// (0x0004) on some endpoint: its light or plug endpoints join the group.
    private func resolveGroups(_ groups: [GroupDocument], structure: String, devices: [ResolvedHomeDevice]) -> [ResolvedDeviceGroup] {
        var out: [ResolvedDeviceGroup] = []
        for g in groups {
            var members: [String] = []
            for member in g.devices {
                guard let device = device(member, structure: structure, in: devices) else { continue }
                guard device.profile.endpoints.contains(where: { $0.clusters.contains { $0.id == Clusters.Groups.id } }) else {
                    sink.error(
                        member.origin,
                        "device \"\(member.value)\" cannot join a group: its profile (\(device.profileReference)) "
                            + "has no Groups cluster (lights and plugs have one)")
                    continue
                }
                members.append(member.value)
            }
            out.append(ResolvedDeviceGroup(name: g.name.value, devices: members))
        }
        return out
    }

    /// The parsed device document at `path`, read once per home.
    private mutating func document(at path: String, reference: Located<String>) -> DeviceDocument? {
        switch documents[path] {
        case .parsed(let doc)?: return doc
        case .broken?: return nil  // its errors were reported once, in its own file
        case .unreadable?:
            // Each reference to a missing file gets its own error, at its own path.
            _ = loader.readText(path, sink: sink, reference: reference)
            return nil
        case nil: break
        }
        referencedFiles.append(path)
        guard let text = loader.readText(path, sink: sink, reference: reference) else {
            documents[path] = .unreadable
            return nil
        }
        let local = DiagnosticSink()
        guard let root = loader.parse(text, file: path, sink: local) else {
            sink.append(local.all)
            documents[path] = .broken
            return nil
        }
        if ProfileLoader.detectKind(root) == .home {
            sink.error(reference.origin, "'\(reference.value)' is a home, not a device profile")
            documents[path] = .broken
            return nil
        }
        let doc = DocumentParser(model: loader.model, reader: DocumentReader(file: path, sink: local)).parseDevice(root)
        if local.hasErrors {
            // Not used for the home's devices, but resolved once so all its own errors show.
            _ = DeviceResolver(model: loader.model, sink: local).resolve(doc)
            sink.append(local.all)
            documents[path] = .broken
            return nil
        }
        documents[path] = .parsed(doc)
        return doc
    }
}

/// Lexical path handling for profile references (no symlink resolution, no disk access).
public enum ProfilePaths {
    /// "DeviceProfiles/homes/demo.yaml" → "DeviceProfiles/homes"; "demo.yaml" → "".
    public static func directory(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "" }
        if slash == file.startIndex { return "/" }
        return String(file[..<slash])
    }

    /// `reference` relative to `directory` (an absolute reference stands alone), normalized.
    public static func join(_ directory: String, _ reference: String) -> String {
        if reference.hasPrefix("/") || directory.isEmpty { return normalize(reference) }
        return normalize(directory + "/" + reference)
    }

    /// Removes "." and "x/.." segments and doubled slashes; keeps leading ".." of relative paths.
    public static func normalize(_ path: String) -> String {
        let absolute = path.hasPrefix("/")
        var parts: [Substring] = []
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            switch part {
            case ".": continue
            case "..":
                if let last = parts.last, last != ".." { parts.removeLast() } else if !absolute { parts.append(part) }
            default: parts.append(part)
            }
        }
        let joined = parts.joined(separator: "/")
        if absolute { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }
}
