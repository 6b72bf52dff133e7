// The second pass: a parsed device profile (plus a home's overrides) becomes a node
// description. Clusters the device types require are added, features are completed or
// checked against conformance, and every value is checked by the model's `validate`
// with the other attributes of its cluster in view (so "MinLevel to MaxLevel" works).
import Foundation
import MatterModel
import MatterTLV

struct DeviceResolver {
    let model: MatterModel
    let sink: DiagnosticSink

    /// Identity defaults for keys a profile leaves out (documented in DeviceProfiles/README.md).
    static let defaultVendorName = "Matter Sim"
    static let defaultVendorID = UInt64(IDSpace.Prefix.test.lowerBound)
    static let defaultProductID = UInt64(IDSpace.testProductIDs.lowerBound)

    private var descriptor: ClusterDefinition? { model.cluster(named: "Descriptor") }
    private var basicInformation: ClusterDefinition? { model.cluster(named: "BasicInformation") }
    private var rootNode: DeviceTypeDefinition? { model.deviceType(named: "RootNode") }

    /// Resolves a device document. Returns nil when anything was reported (the reasons
    /// are in the sink); a partially resolved device is never handed out.
    func resolve(_ doc: DeviceDocument, overrides: DeviceOverrides = DeviceOverrides()) -> ResolvedDeviceProfile? {
        let before = sink.count

        // Identity: the profile's values with the home's on top, then the defaults.
        var identity = doc.identity
        for (k, v) in overrides.identity { identity[k] = v }
        if identity["serialNumber"] == nil, let origin = doc.identityOrigin, !doc.identityKeysWritten.contains("serialNumber") {
            sink.error(origin, "missing required key 'serialNumber'")
        }

        var endpoints = resolveEndpoints(doc)
        applyIdentity(identity, doc: doc, endpoints: &endpoints)
        applyOverrides(overrides.values, to: &endpoints)
        validateValues(&endpoints)
        // The home's cloud block, under the profile's, under the home entry's.
        let cloud = CloudDocument.combine(CloudDocument.combine(overrides.homeCloud, doc.cloud), overrides.cloud)
        applyCloudOnly(cloud?.cloudOnly ?? [], to: &endpoints)
        let behaviourDocument = doc.behaviour.overlaid(with: overrides.behaviour)
        let readings = resolveReadings(behaviourDocument, endpoints: endpoints)

        guard sink.count == before else { return nil }

        let resolvedIdentity = extractIdentity(endpoints)
        var behaviour = resolveBehaviour(behaviourDocument)
        behaviour.readings = readings
        let commissioning = Self.commissioning(
            doc, overrides: overrides, serialNumber: resolvedIdentity.serialNumber, vendorID: resolvedIdentity.vendorID,
            productID: resolvedIdentity.productID)
        let name = overrides.name?.value ?? doc.name?.value ?? resolvedIdentity.productName
        return ResolvedDeviceProfile(
            name: name, source: doc.file, identity: resolvedIdentity, commissioning: commissioning,
            behaviour: behaviour, endpoints: endpoints.map(\.resolved), cloud: cloud?.settings ?? CloudSettings())
    }

    /// The setup codes: the ones written (the home's over the profile's), else the ones
    /// generated from the identity.
    private static func commissioning(
        _ doc: DeviceDocument, overrides: DeviceOverrides, serialNumber: String, vendorID: UInt16, productID: UInt16
    ) -> CommissioningParameters {
        let generated = CommissioningCodes.generated(serialNumber: serialNumber, vendorID: vendorID, productID: productID)
        let passcode = overrides.passcode ?? doc.passcode
        let discriminator = overrides.discriminator ?? doc.discriminator
        return CommissioningParameters(
            passcode: passcode?.value ?? generated.passcode,
            discriminator: discriminator?.value ?? generated.discriminator,
            passcodeGenerated: passcode == nil,
            discriminatorGenerated: discriminator == nil)
    }

    /// The setup codes `resolve` gives, read from the identity keys alone, without building a
    /// cluster: for the devices of a home outside the part a process runs, whose codes the
    /// home's discriminator spread still needs. Nil when a value override could reach Basic
    /// Information's identity attributes, where only `resolve` knows the outcome.
    func commissioningOnly(_ doc: DeviceDocument, overrides: DeviceOverrides) -> CommissioningParameters? {
        guard overrides.values.isEmpty else { return nil }
        var identity = doc.identity
        for (k, v) in overrides.identity { identity[k] = v }
        return Self.commissioning(
            doc, overrides: overrides, serialNumber: Self.text(identity["serialNumber"]?.value) ?? "",
            vendorID: UInt16(truncatingIfNeeded: Self.unsigned(identity["vendorID"]?.value) ?? Self.defaultVendorID),
            productID: UInt16(truncatingIfNeeded: Self.unsigned(identity["productID"]?.value) ?? Self.defaultProductID))
    }

    /// `cloud.cloudOnly`: each cluster becomes cloud-only on every application endpoint that
    /// has it; one that no application endpoint has, or that the node needs locally, is an error.
    private func applyCloudOnly(_ clusters: [Located<ClusterDefinition>], to endpoints: inout [EndpointState]) {
        let rootClusters = Set(rootNode?.requiredServerClusters.map(\.cluster) ?? [])
        for c in clusters {
            let def = c.value
            if def.id == descriptor?.id || rootClusters.contains(def.id) {
                sink.error(c.origin, "\(def.name) must stay reachable on the local network; it cannot be cloud-only")
                continue
            }
            let holders = endpoints.indices.filter {
                endpoints[$0].number != 0 && endpoints[$0].clusters.contains { $0.definition.id == def.id }
            }
            guard !holders.isEmpty else {
                let present = Set(endpoints.filter { $0.number != 0 }.flatMap { $0.clusters.map(\.definition.name) }).sorted()
                sink.error(
                    c.origin,
                    "\(def.name) is not a server cluster on any application endpoint of this device (they have: \(present.joined(separator: ", ")))"
                )
                continue
            }
            for i in holders where !endpoints[i].cloudOnly.contains(def.id) {
                endpoints[i].cloudOnly.append(def.id)
            }
        }
    }

    // MARK: Endpoints and clusters

    /// Working state for one endpoint while it is assembled.
    struct EndpointState {
        var number: EndpointNumber
        var deviceTypes: [ResolvedDeviceType]
        var clusters: [ClusterState]
        var cloudOnly: [ClusterID]
        var clientClusters: [ClusterID]? = nil
        var parent: EndpointNumber? = nil

        var resolved: ResolvedEndpoint {
            ResolvedEndpoint(
                number: number, deviceTypes: deviceTypes,
                clusters: clusters.sorted { $0.definition.id < $1.definition.id }.map(\.resolved),
                cloudOnlyClusters: cloudOnly, parent: parent, clientClusters: clientClusters)
        }
    }

    struct ClusterState {
        var definition: ClusterDefinition
        var features: Set<String>
        var supported: Set<AttributeID>
        var values: [AttributeID: TLVValue]
        /// Values written in a file, with where; checked against the model at the end.
        var explicit: [AttributeID: AttributeValueDocument]
        var addedByDeviceType: Bool
        var served = ServedGlobals()
        var raw: [AttributeID: TLVValue] = [:]

        var resolved: ResolvedCluster {
            ResolvedCluster(
                id: definition.id, name: definition.name, revision: served.revision ?? definition.revision, features: features,
                featureMap: served.featureMap ?? definition.featureMap(codes: features), supportedAttributes: supported,
                initialValues: values, explicitAttributes: Set(explicit.keys), addedByDeviceType: addedByDeviceType,
                served: served, rawAttributes: raw)
        }
    }

    private func resolveEndpoints(_ doc: DeviceDocument) -> [EndpointState] {
        var documents = doc.endpoints
        if !documents.contains(where: { $0.number == 0 }) {
            // Endpoint 0 is the Root Node whether or not the profile mentions it.
            documents.insert(EndpointDocument(number: 0, origin: doc.rootOrigin, deviceTypes: nil, clusters: [], cloudOnly: []), at: 0)
        }
        documents.sort { $0.number < $1.number }
        // An 'endpoints' mapping that parsed but holds only the root is not a device.
        if !doc.endpoints.isEmpty, !doc.endpoints.contains(where: { $0.number != 0 }) {
            sink.error(
                Origin(file: doc.file, path: "endpoints", mark: doc.endpoints.first?.origin.mark),
                "expected at least one application endpoint (1...65534) besides the root node (0)")
        }
        var states = documents.map(resolveEndpoint)
        // `parent`: an endpoint of this device, and no endpoint its own ancestor.
        let numbers = Set(documents.map(\.number))
        let parents = Dictionary(documents.compactMap { d in d.parent.map { (d.number, $0) } }, uniquingKeysWith: { first, _ in first })
        for (i, d) in documents.enumerated() {
            guard let parent = d.parent else { continue }
            guard numbers.contains(parent.value) else {
                sink.error(parent.origin, "expected an endpoint of this device, got \(parent.value) (endpoints: \(numbers.sorted().map(String.init).joined(separator: ", ")))")
                continue
            }
            var seen: Set<EndpointNumber> = [d.number]
            var current = parent.value
            while true {
                guard seen.insert(current).inserted else {
                    sink.error(parent.origin, "endpoint \(d.number)'s parents form a cycle (\(seen.sorted().map(String.init).joined(separator: ", ")))")
                    break
                }
                guard let next = parents[current]?.value else {
                    states[i].parent = parent.value
                    break
                }
                current = next
            }
        }
        return states
    }

    private func resolveEndpoint(_ doc: EndpointDocument) -> EndpointState {
        var types = doc.deviceTypes ?? []
        if doc.number == 0 {
            if let root = rootNode, !types.contains(where: { $0.value.id == root.id }) {
                types.insert(Located(value: root, origin: doc.origin), at: 0)
            }
            // Endpoint 0 is the node's own; applications live on endpoints 1 and up.
            for t in types where t.value.deviceClass == .simple && !Self.rootUtilityDeviceTypes.contains(t.value.id.rawValue) {
                sink.error(
                    t.origin,
                    "\(t.value.name) is an application device type; put it on an endpoint in 1...65534, not on the root endpoint 0")
            }
        } else {
            if doc.deviceTypes == nil {
                sink.error(doc.origin, "missing required key 'deviceTypes' (every endpoint but 0 needs at least one device type)")
            } else if types.isEmpty, !doc.deviceTypesHadErrors {
                sink.error(
                    Origin(file: doc.origin.file, path: doc.origin.path.key("deviceTypes"), mark: doc.origin.mark),
                    "expected at least one device type")
            }
            for t in types where t.value.deviceClass == .node {
                sink.error(t.origin, "\(t.value.name) is a node device type; it belongs on endpoint 0 only")
            }
        }

        // Explicit clusters first, then those the device types require.
        var clusters: [ClusterState] = []
        var explicitFeatures: [ClusterID: Located<[FeatureChoice]>] = [:]
        let unknownFeatures = Set(doc.clusters.filter(\.featuresInvalid).map(\.definition.id))
        // A FeatureMap as a real device serves it: its features are taken, not completed or checked.
        var servedFeatureMaps: Set<ClusterID> = []
        for c in doc.clusters {
            var state = ClusterState(
                definition: c.definition, features: [], supported: [], values: [:], explicit: [:], addedByDeviceType: false,
                served: c.served)
            if let f = c.features {
                state.features = Set(f.value.map(\.definition.code))
                explicitFeatures[c.definition.id] = f
                if let origin = c.featureMapOrigin {
                    sink.error(origin, "give either features or featureMap, not both")
                }
            } else if let map = c.served.featureMap {
                state.features = c.definition.featureCodes(map: map)
                servedFeatureMaps.insert(c.definition.id)
            }
            for v in c.values { state.explicit[v.attribute.id] = v }
            for r in c.raw {
                if let v = state.explicit[r.id] {
                    sink.error(r.origin, "attribute \(r.id) is given both as a value (\(v.attribute.lowerCamelName)) and in rawAttributes")
                    continue
                }
                state.raw[r.id] = r.value
            }
            clusters.append(state)
        }
        var requiredAttributes: [ClusterID: Set<AttributeID>] = [:]
        var requirers: [ClusterID: [(DeviceTypeDefinition, Set<String>)]] = [:]
        var required = types.flatMap { t in t.value.requiredServerClusters.map { (t.value, $0) } }
        if let descriptor, !required.contains(where: { $0.1.cluster == descriptor.id }), !types.isEmpty {
            // The Base Device Type puts Descriptor on every endpoint.
            required.append((types[0].value, ClusterRequirement(cluster: descriptor.id)))
        }
        for (type, requirement) in required {
            requiredAttributes[requirement.cluster, default: []].formUnion(requirement.requiredAttributes)
            requirers[requirement.cluster, default: []].append((type, requirement.requiredFeatures))
            if let i = clusters.firstIndex(where: { $0.definition.id == requirement.cluster }) {
                if explicitFeatures[requirement.cluster] == nil, !servedFeatureMaps.contains(requirement.cluster) {
                    clusters[i].features.formUnion(requirement.requiredFeatures)
                }
            } else if let def = model.cluster(requirement.cluster) {
                clusters.append(
                    ClusterState(
                        definition: def, features: requirement.requiredFeatures, supported: [], values: [:],
                        explicit: [:], addedByDeviceType: true))
            }
        }

        for i in clusters.indices {
            let def = clusters[i].definition
            if let given = explicitFeatures[def.id] {
                checkFeatures(given, of: def, requiredBy: requirers[def.id] ?? [])
            } else if !servedFeatureMaps.contains(def.id) {
                clusters[i].features = completeFeatures(clusters[i].features, of: def)
            }
            let features = clusters[i].features
            var supported = Set(def.mandatoryAttributes(features: features).map(\.id))
            supported.formUnion(requiredAttributes[def.id] ?? [])
            for (id, v) in clusters[i].explicit {
                if unknownFeatures.contains(def.id) || v.attribute.conformance.isAllowed(features: features) {
                    supported.insert(id)
                } else {
                    sink.error(
                        v.origin,
                        "\(v.attribute.lowerCamelName) is not part of \(def.name) with \(Self.describe(features, of: def)) (its conformance is \(v.attribute.conformance))"
                    )
                }
            }
            clusters[i].supported = supported
            for id in supported {
                if let d = def.attribute(id)?.defaultValue { clusters[i].values[id] = d }
            }
            for (id, v) in clusters[i].explicit { clusters[i].values[id] = v.value }
            // Raw attributes are served as written, beside the model's.
            for id in clusters[i].raw.keys {
                clusters[i].supported.remove(id)
                clusters[i].values[id] = nil
            }
        }

        // Cloud-only clusters must exist here, and the node's own plumbing stays local.
        var cloudOnly: [ClusterID] = []
        let rootClusters = Set(rootNode?.requiredServerClusters.map(\.cluster) ?? [])
        for c in doc.cloudOnly {
            let def = c.value
            if def.id == descriptor?.id || rootClusters.contains(def.id) {
                sink.error(c.origin, "\(def.name) must stay reachable on the local network; it cannot be cloud-only")
            } else if !clusters.contains(where: { $0.definition.id == def.id }) {
                sink.error(
                    c.origin, "\(def.name) is not a server cluster on endpoint \(doc.number); add it under clusters to make it cloud-only")
            } else {
                cloudOnly.append(def.id)
            }
        }

        var resolvedTypes = types.map { ResolvedDeviceType(id: $0.value.id, name: $0.value.name, revision: $0.value.revision) }
        for (type, revision) in doc.deviceTypeRevisions {
            guard let i = resolvedTypes.firstIndex(where: { $0.id == type.value.id }) else {
                sink.error(type.origin, "\(type.value.name) is not a device type of endpoint \(doc.number) (it has: \(resolvedTypes.map(\.name).joined(separator: ", ")))")
                continue
            }
            resolvedTypes[i].revision = revision
        }
        return EndpointState(
            number: doc.number, deviceTypes: resolvedTypes, clusters: clusters, cloudOnly: cloudOnly, clientClusters: doc.clientClusters)
    }

    /// Utility device types (Matter 1.4 device library, class "Utility") that real devices put
    /// on the root endpoint beside Root Node: OTA Requestor, OTA Provider, Power Source,
    /// Electrical Sensor, Device Energy Management.
    static let rootUtilityDeviceTypes: Set<UInt32> = Set(
        [DeviceTypes.otaRequestor, DeviceTypes.otaProvider, DeviceTypes.powerSource, DeviceTypes.electricalSensor,
         DeviceTypes.deviceEnergyManagement].map(\.rawValue))

    /// Without explicit features, a cluster gets its device types' required features, any
    /// feature those make mandatory, and the first member of each choice group left empty
    /// (Window Covering needs Lift or Tilt: it gets Lift).
    private func completeFeatures(_ start: Set<String>, of def: ClusterDefinition) -> Set<String> {
        var features = start
        for _ in 0..<8 {  // conformance chains are short; bounded anyway
            let before = features
            for f in def.features where f.conformance.isMandatory(features: features) {
                features.insert(f.code)
            }
            for (_, members) in Self.choiceGroups(of: def) where !members.contains(where: { features.contains($0.code) }) {
                let allowed = members.filter { $0.conformance.isAllowed(features: features) }
                let preferred = allowed.first { Self.preferredChoices[def.name] == $0.code }
                if let pick = preferred ?? allowed.first {
                    features.insert(pick.code)
                }
            }
            if features == before { break }
        }
        return features
    }

    /// A simulated node talks IP over the host's network, so when a profile leaves Network
    /// Commissioning's interface choice open, it is Ethernet (no Wi-Fi scan or Thread join).
    static let preferredChoices: [String: String] = ["NetworkCommissioning": "ET"]

    private func checkFeatures(
        _ given: Located<[FeatureChoice]>, of def: ClusterDefinition,
        requiredBy requirers: [(DeviceTypeDefinition, Set<String>)]
    ) {
        let features = Set(given.value.map(\.definition.code))
        for (type, needed) in requirers {
            let missing = needed.subtracting(features)
            guard !missing.isEmpty else { continue }
            let neededNames = def.features.filter { needed.contains($0.code) }.map { "\($0.name) (\($0.code))" }
            let missingNames = def.features.filter { missing.contains($0.code) }.map { "\($0.name) (\($0.code))" }
            sink.error(
                given.origin,
                "\(type.name) requires \(def.name) with features \(neededNames.joined(separator: ", ")); missing \(missingNames.joined(separator: ", "))"
            )
        }
        for f in def.features {
            switch f.conformance.result(features: features) {
            case .mandatory where !features.contains(f.code):
                sink.error(
                    given.origin,
                    "\(def.name) with \(Self.describe(features, of: def)) must also have feature \(f.name) (\(f.code)) (its conformance is \(f.conformance))"
                )
            case .disallowed where features.contains(f.code):
                let origin = given.value.first { $0.definition.code == f.code }?.origin ?? given.origin
                sink.error(
                    origin,
                    "feature \(f.name) (\(f.code)) is not allowed in \(def.name) with \(Self.describe(features, of: def)) (its conformance is \(f.conformance))"
                )
            default:
                break
            }
        }
        for (group, members) in Self.choiceGroups(of: def) {
            let chosen = members.filter { features.contains($0.code) }
            let names = members.map { "\($0.name) (\($0.code))" }.joined(separator: ", ")
            if chosen.isEmpty, members.contains(where: { $0.conformance.isAllowed(features: features) }) {
                sink.error(given.origin, "\(def.name) needs at least one of the features \(names)")
            } else if chosen.count > 1, !group.more {
                sink.error(given.origin, "\(def.name) allows only one of the features \(names)")
            }
        }
    }

    /// Features grouped by their choice marker ("O.a+"), in bit order.
    private static func choiceGroups(of def: ClusterDefinition) -> [(ConformanceChoice, [FeatureDefinition])] {
        var groups: [(ConformanceChoice, [FeatureDefinition])] = []
        for f in def.features.sorted(by: { $0.bit < $1.bit }) {
            guard case .choice(_, let choice) = f.conformance else { continue }
            if let i = groups.firstIndex(where: { $0.0.group == choice.group }) {
                groups[i].1.append(f)
            } else {
                groups.append((choice, [f]))
            }
        }
        return groups
    }

    static func describe(_ features: Set<String>, of def: ClusterDefinition) -> String {
        let named = def.features.filter { features.contains($0.code) }.map { "\($0.name) (\($0.code))" }
        return named.isEmpty ? "no features" : "features " + named.joined(separator: ", ")
    }

    // MARK: Identity

    /// Writes the identity into endpoint 0's BasicInformation as explicit values, defaults
    /// filled in, so the model checks lengths and ranges like any other attribute.
    private func applyIdentity(_ given: [String: AttributeValueDocument], doc: DeviceDocument, endpoints: inout [EndpointState]) {
        guard let basic = basicInformation,
            let e = endpoints.firstIndex(where: { $0.number == 0 }),
            let c = endpoints[e].clusters.firstIndex(where: { $0.definition.id == basic.id })
        else { return }
        let firstType = endpoints.first { $0.number != 0 }?.deviceTypes.first?.name
        let defaults: [String: TLVValue] = [
            "vendorName": .utf8(Self.defaultVendorName),
            "vendorID": .unsigned(Self.defaultVendorID),
            "productName": .utf8(String((doc.name?.value ?? firstType.map { "Simulated \($0)" } ?? "Simulated Device").prefix(32))),
            "productID": .unsigned(Self.defaultProductID),
            "hardwareVersion": .unsigned(1),
            "hardwareVersionString": .utf8("1.0"),
            "softwareVersion": .unsigned(1),
            "softwareVersionString": .utf8("1.0.0"),
        ]
        var cluster = endpoints[e].clusters[c]
        for key in DeviceKeys.identity {
            guard let attribute = basic.attribute(named: key) else { continue }
            if let v = given[key] {
                cluster.explicit[attribute.id] = v
                cluster.values[attribute.id] = v.value
                cluster.supported.insert(attribute.id)
            } else if let d = defaults[key] {
                cluster.values[attribute.id] = d
                cluster.supported.insert(attribute.id)
            }
        }
        // UniqueID: stable per vendor, product and serial number, so it survives restarts.
        if let unique = basic.attribute(named: "uniqueID"), given["uniqueID"] == nil {
            let serial = Self.text(given["serialNumber"]?.value) ?? ""
            let vendor = Self.unsigned(given["vendorID"]?.value) ?? Self.defaultVendorID
            let product = Self.unsigned(given["productID"]?.value) ?? Self.defaultProductID
            let hash = fnv1a64("uniqueID:\(vendor):\(product):\(serial)")
            cluster.values[unique.id] = .utf8(String(format: "%016llX", hash))
            cluster.supported.insert(unique.id)
        }
        endpoints[e].clusters[c] = cluster
    }

    private func extractIdentity(_ endpoints: [EndpointState]) -> DeviceIdentity {
        let basic = basicInformation
        let values = endpoints.first { $0.number == 0 }?.clusters.first { $0.definition.id == basic?.id }?.values ?? [:]
        func value(_ key: String) -> TLVValue? {
            basic?.attribute(named: key).flatMap { values[$0.id] }
        }
        func string(_ key: String, _ fallback: String) -> String { Self.text(value(key)) ?? fallback }
        func number(_ key: String, _ fallback: UInt64) -> UInt64 { Self.unsigned(value(key)) ?? fallback }
        return DeviceIdentity(
            vendorName: string("vendorName", Self.defaultVendorName),
            vendorID: UInt16(truncatingIfNeeded: number("vendorID", Self.defaultVendorID)),
            productName: string("productName", ""),
            productID: UInt16(truncatingIfNeeded: number("productID", Self.defaultProductID)),
            serialNumber: string("serialNumber", ""),
            hardwareVersion: UInt16(truncatingIfNeeded: number("hardwareVersion", 1)),
            hardwareVersionString: string("hardwareVersionString", "1.0"),
            softwareVersion: UInt32(truncatingIfNeeded: number("softwareVersion", 1)),
            softwareVersionString: string("softwareVersionString", "1.0.0"),
            uniqueID: string("uniqueID", ""))
    }

    static func text(_ v: TLVValue?) -> String? {
        if case .utf8(let s)? = v { return s }
        return nil
    }

    static func unsigned(_ v: TLVValue?) -> UInt64? {
        if case .unsigned(let u)? = v { return u }
        return nil
    }

    // MARK: Overrides and validation

    private func applyOverrides(_ overrides: [ValueOverride], to endpoints: inout [EndpointState]) {
        for o in overrides {
            guard let e = endpoints.firstIndex(where: { $0.number == o.endpoint.value }) else {
                let known = endpoints.map { String($0.number) }.joined(separator: ", ")
                sink.error(o.endpoint.origin, "the device has no endpoint \(o.endpoint.value) (its endpoints are \(known))")
                continue
            }
            guard let c = endpoints[e].clusters.firstIndex(where: { $0.definition.id == o.cluster.value.id }) else {
                let known = endpoints[e].clusters.map(\.definition.name).sorted().joined(separator: ", ")
                sink.error(o.cluster.origin, "endpoint \(o.endpoint.value) has no \(o.cluster.value.name) cluster (it has \(known))")
                continue
            }
            var cluster = endpoints[e].clusters[c]
            for v in o.values {
                guard v.attribute.conformance.isAllowed(features: cluster.features) else {
                    sink.error(
                        v.origin,
                        "\(v.attribute.lowerCamelName) is not part of \(cluster.definition.name) with \(Self.describe(cluster.features, of: cluster.definition)) (its conformance is \(v.attribute.conformance))"
                    )
                    continue
                }
                cluster.explicit[v.attribute.id] = v
                cluster.values[v.attribute.id] = v.value
                cluster.supported.insert(v.attribute.id)
            }
            endpoints[e].clusters[c] = cluster
        }
    }

    /// Every explicitly written value, checked by the model with its cluster's other
    /// values in view.
    private func validateValues(_ endpoints: inout [EndpointState]) {
        for e in endpoints.indices {
            for c in endpoints[e].clusters.indices {
                let cluster = endpoints[e].clusters[c]
                for (_, v) in cluster.explicit.sorted(by: { $0.key < $1.key }) {
                    let values = cluster.values
                    if let violation = cluster.definition.validate(v.value, for: v.attribute, current: { values[$0] }) {
                        var origin = v.origin
                        if !violation.path.isEmpty {
                            origin.path = origin.path.appending(ProfilePath(stringLiteral: violation.path))
                        }
                        sink.error(origin, Self.message(for: violation, value: v.value))
                    }
                }
            }
        }
    }

    /// The model's wording, with "got" shown as the value was written where that is clearer.
    static func message(for violation: ConstraintViolation, value: TLVValue) -> String {
        switch violation.kind {
        case .nullNotAllowed:
            return "expected \(violation.expected), got null"
        case .typeMismatch, .constraint:
            return "expected \(violation.expected)" + (violation.actual.map { ", got \($0)" } ?? "")
        }
    }

    // MARK: Behaviour

    /// `reading` drives the device's one measurement cluster; `readings` names each of several.
    private func resolveReadings(_ doc: BehaviourDocument, endpoints: [EndpointState]) -> [ClusterID: DeviceBehaviour.Reading] {
        let present = Set(endpoints.flatMap { $0.resolved.clusters.map(\.id) }).filter { DeviceBehaviour.readingClusters.contains($0) }
        let names = present.compactMap { model.cluster($0)?.name }.sorted()
        if let reading = doc.reading {
            if present.isEmpty {
                sink.error(
                    reading.origin,
                    "expected a device with a measurement cluster (e.g. TemperatureMeasurement) for a reading; this one has none")
            } else if present.count > 1 {
                sink.error(
                    reading.origin,
                    "expected one measurement cluster for a reading, this device has \(names.joined(separator: ", ")); use readings")
            }
        }
        var result: [ClusterID: DeviceBehaviour.Reading] = [:]
        for (name, reading) in doc.readings.sorted(by: { $0.key < $1.key }) {
            guard let cluster = model.cluster(named: name), present.contains(cluster.id) else {
                let known = names.isEmpty ? "none" : names.joined(separator: ", ")
                sink.error(reading.origin, "expected a measurement cluster of this device for a reading (\(known)), got '\(name)'")
                continue
            }
            result[cluster.id] = reading.value
        }
        return result
    }

    private func resolveBehaviour(_ doc: BehaviourDocument) -> DeviceBehaviour {
        let defaults = DeviceBehaviour()
        return DeviceBehaviour(
            windowCovering: .init(
                liftSpeed: doc.liftSpeed?.value ?? defaults.windowCovering.liftSpeed,
                tiltSpeed: doc.tiltSpeed?.value ?? defaults.windowCovering.tiltSpeed),
            fan: .init(acceleration: doc.fanAcceleration?.value),
            level: .init(
                defaultTransitionTime: doc.defaultTransitionTime?.value ?? defaults.level.defaultTransitionTime,
                defaultMoveRate: doc.defaultMoveRate?.value ?? defaults.level.defaultMoveRate),
            reading: doc.reading?.value,
            room: .init(
                every: doc.room["every"]?.value ?? defaults.room.every,
                heatingRate: doc.room["heatingRate"]?.value ?? defaults.room.heatingRate,
                coolingRate: doc.room["coolingRate"]?.value ?? defaults.room.coolingRate,
                leakPercent: doc.room["leakPercent"]?.value ?? defaults.room.leakPercent))
    }
}
