import DeviceProfile
import Foundation
import MatterController
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import matter_sim
import TestWaiting

/// Tests/Fixtures/real-devices: dumps of real devices (PROVENANCE.md says where from).
private let realDevices = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/real-devices")

private func realDumps() -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: realDevices.path)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
}

/// Issue #41: `matter-sim clone` turns a node dump into a profile that serves the same node.
@Suite("matter-sim clone: a node dump becomes a profile serving the same node")
struct CloneTests {
    private func clone(_ json: String, anonymize: Bool = false) throws -> NodeCloner.Result {
        try NodeCloner().clone(try NodeDump.read(json, file: "dump.json"), options: .init(anonymize: anonymize, source: "dump.json"))
    }

    /// A minimal light as Home Assistant's Matter server dumps it.
    private static let light = """
        {"node_id": 5, "attributes": {
          "0/29/0": [{"0": 22, "1": 1}], "0/40/1": "Acme", "0/40/2": 4660, "0/40/3": "Lamp", "0/40/4": 22136,
          "0/40/15": "SN-1", "0/40/6": "DE", "0/40/5": "Kitchen",
          "1/29/0": [{"0": 256, "1": 3}], "1/6/0": true, "1/6/65533": 6, "1/6/65532": 1,
          "1/6/65531": [0, 16384, 16385, 16386, 16387, 65528, 65529, 65531, 65532, 65533], "1/6/65529": [0, 1, 2, 64, 65, 66],
          "1/6/65528": [], "1/6/16384": true, "1/6/16385": 0, "1/6/16386": 0, "1/6/16387": null,
          "1/3/0": 0, "1/3/1": 2,
          "1/4660/0": 7
        }}
        """

    @Test func notADumpMissingAttributesAndContradictingValuesAreClearErrors() throws {
        func message(_ json: String) -> String {
            do {
                _ = try clone(json)
                return "no error"
            } catch {
                return "\(error)"
            }
        }
        #expect(message("{not json").contains("not JSON"))
        #expect(message(#"{"node_id": 1}"#).contains("not a node dump: expected an object with \"attributes\""))
        #expect(message(#"{"attributes": {"1/6/0": true}}"#).contains("missing attributes: expected endpoint 0's Basic Information"))
        #expect(message(#"{"attributes": {"1/x/0": true}}"#).contains("expected a key ENDPOINT/CLUSTER/ATTRIBUTE"))
        // OnOff is a bool: a string there contradicts the model, named by its path.
        let wrong = Self.light.replacingOccurrences(of: #""1/6/0": true"#, with: #""1/6/0": "on""#)
        #expect(message(wrong) == #"dump.json: attributes["1/6/0"]: OnOff.OnOff: expected true or false (bool), got the string "on""#)
        // Inside a struct, the field's path and type.
        let badField = Self.light.replacingOccurrences(of: #""1/29/0": [{"0": 256, "1": 3}]"#, with: #""1/29/0": [{"0": 256, "1": 3}], "1/1030/4": {"0": "x"}"#)
        #expect(message(badField).contains(#"attributes["1/1030/4"].0"#))
        // A diagnostics file holds the node under data.node.
        let diagnostics = #"{"home_assistant": {}, "data": {"node": \#(Self.light)}}"#
        #expect(try NodeDump.read(diagnostics, file: "d.json").format == .diagnostics)
    }

    @Test func aCloneKeepsGlobalsValuesAndAManufacturerClusterAndSaysWhatItRegenerated() async throws {
        let result = try clone(Self.light, anonymize: true)
        #expect(result.yaml.contains("# Regenerated, not cloned:"))
        #expect(result.yaml.contains("0/40/15 SerialNumber"))
        #expect(result.yaml.contains("0x00001234:  # manufacturer-specific") == false)  // 0x1234 is not a vendor cluster ID
        #expect(result.profile.identity.vendorID == 4660 && result.profile.identity.productID == 22136)
        #expect(result.profile.identity.serialNumber != "SN-1")
        let onOff = try #require(result.profile.endpoint(1)?.cluster(ClusterID(6)))
        #expect(onOff.revision == 6 && onOff.featureMap == 1)
        #expect(onOff.served.acceptedCommandList == [0, 1, 2, 64, 65, 66])
        let node = try MatterNode(description: result.profile.nodeDescription(model: .standard), logger: quietLogger)
        func read(_ e: UInt16, _ c: UInt32, _ a: UInt32) async -> TLVValue? {
            try? await node.read(AttributePath(endpoint: e, cluster: ClusterID(c), attribute: AttributeID(a))).get().value
        }
        #expect(await read(1, 6, 0xFFFD) == .unsigned(6))
        #expect(await read(1, 6, 0x4003) == .null)
        // Anonymized: location and node label are not the dump's.
        #expect(await read(0, 0x28, 6) == .utf8("XX"))
        #expect(await read(0, 0x28, 5) == .utf8(""))
        await node.stop()
    }

    @Test func aProfileServesRevisionFeatureMapListsAndRawAttributesAsWritten() async throws {
        let yaml = """
            identity: {serialNumber: RAW-1}
            endpoints:
              1:
                deviceTypes: [ContactSensor]
                clusters:
                  BooleanState:
                    revision: 7
                    attributeList: [0, 65528, 65529, 65531, 65532, 65533]
                    acceptedCommandList: []
                    generatedCommandList: []
                  PowerSource:
                    featureMap: 10
                    rawAttributes:
                      0x000C: {type: uint8, value: 250}    # BatPercentRemaining above the model's 200
                  0x130AFC01:
                    revision: 2
                    rawAttributes:
                      0x130A0011: {type: single, value: 21.5}
                      0x130A0012: {type: list, value: [{type: uint16, value: 300}, {type: null}]}
                      0x130A0013: {type: struct, value: {0: {type: octstr, value: "0aff"}, 1: {type: string, value: "x"}}}
                      0x130A0014: {type: "list[int8]", value: [-1, 2]}
            """
        let profile = try ProfileLoader().loadDevice(yaml: yaml, file: "raw.yaml")
        let node = try MatterNode(description: profile.nodeDescription(model: .standard), logger: quietLogger)
        func read(_ c: UInt32, _ a: UInt32) async -> TLVValue? {
            try? await node.read(AttributePath(endpoint: 1, cluster: ClusterID(c), attribute: AttributeID(a))).get().value
        }
        #expect(await read(0x45, 0xFFFD) == .unsigned(7))
        #expect(await read(0x2F, 0xFFFC) == .unsigned(10))
        #expect(await read(0x2F, 0x000C) == .unsigned(250))
        #expect(await read(0x130A_FC01, 0x130A_0011) == .float(21.5))
        #expect(await read(0x130A_FC01, 0x130A_0012) == .array([TLVElement(.unsigned(300)), TLVElement(.null)]))
        #expect(
            await read(0x130A_FC01, 0x130A_0013)
                == .structure([TLVElement(tag: .context(0), .bytes([0x0A, 0xFF])), TLVElement(tag: .context(1), .utf8("x"))]))
        #expect(await read(0x130A_FC01, 0x130A_0014) == .array([TLVElement(.signed(-1)), TLVElement(.signed(2))]))
        #expect(await read(0x130A_FC01, 0xFFFD) == .unsigned(2))
        // The Descriptor lists the vendor cluster; the attribute list is exactly as written.
        let servers = await read(0x1D, 1).flatMap { v -> [UInt64]? in
            if case .array(let items) = v { return items.compactMap { if case .unsigned(let u) = $0.value { u } else { nil } } }
            return nil
        }
        #expect(servers?.contains(0x130A_FC01) == true)
        #expect(await read(0x45, 0xFFFB) == .array([0, 65528, 65529, 65531, 65532, 65533].map { TLVElement(.unsigned($0)) }))
        await node.stop()
    }

    @Test func rawAttributesAndServedGlobalsAreCheckedWithPathAndExpectation() {
        let yaml = """
            identity: {serialNumber: RAW-2}
            endpoints:
              1:
                deviceTypes: [ContactSensor]
                clusters:
                  BooleanState:
                    features: []
                    featureMap: 0
                    revision: 0
                    rawAttributes:
                      0x0001: {type: uint8, value: 300}
                      0x0002: {type: float16, value: 1}
                      0xFFFC: {type: uint8, value: 1}
                  0x00001234:
                    revision: 1
            """
        let messages = ProfileLoader().load(yaml: yaml, file: "bad.yaml").diagnostics.map(\.description)
        #expect(messages.contains("bad.yaml: endpoints[1].clusters.BooleanState.revision: expected an integer in 1...65535, got 0"))
        #expect(messages.contains("bad.yaml: endpoints[1].clusters.BooleanState.rawAttributes[\"0x0001\"].value: expected an integer that fits uint8, got 300"))
        #expect(messages.contains { $0.hasPrefix("bad.yaml: endpoints[1].clusters.BooleanState.rawAttributes[\"0x0002\"].type: unknown TLV type 'float16'") })
        #expect(messages.contains { $0.contains("rawAttributes[\"0xFFFC\"]: global attributes are served from revision") })
        #expect(messages.contains("bad.yaml: endpoints[1].clusters.BooleanState.featureMap: give either features or featureMap, not both"))
        #expect(messages.contains { $0.hasPrefix("bad.yaml: endpoints[1].clusters[\"0x00001234\"]: unknown cluster ID") })
    }

    /// A composed device's tree (`parent`): each endpoint's PartsList lists its descendants, and a
    /// parent that is not an endpoint of the device, the endpoint itself, or a cycle is an error.
    @Test func aProfilesParentsMakeTheDescriptorsPartsListTree() async throws {
        let yaml = """
            identity: {serialNumber: TREE-1}
            endpoints:
              1: {deviceTypes: [OnOffPlugInUnit], deviceTypeRevisions: {OnOffPlugInUnit: 1}, clientClusters: [0x0029, OnOff]}
              2: {deviceTypes: [OnOffPlugInUnit], parent: 1}
              3: {deviceTypes: [TemperatureSensor], parent: 2}
            """
        let profile = try ProfileLoader().loadDevice(yaml: yaml, file: "tree.yaml")
        let node = try MatterNode(description: profile.nodeDescription(model: .standard), logger: quietLogger)
        func parts(_ e: UInt16) async -> [UInt64]? {
            let path = AttributePath(endpoint: e, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.partsList)
            return try? await node.read(path).get().value.members?.compactMap { $0.value.uintValue }
        }
        #expect(await parts(0) == [1, 2, 3])
        #expect(await parts(1) == [2, 3])
        #expect(await parts(2) == [3])
        #expect(await parts(3) == [])
        // The DeviceTypeList and ClientList as written.
        func read(_ e: UInt16, _ a: AttributeID) async -> TLVValue? {
            try? await node.read(AttributePath(endpoint: e, cluster: Clusters.Descriptor.id, attribute: a)).get().value
        }
        #expect(await read(1, Clusters.Descriptor.Attribute.deviceTypeList)?.members?.first?.value[context: 1]?.uintValue == 1)
        #expect(await read(2, Clusters.Descriptor.Attribute.deviceTypeList)?.members?.first?.value[context: 1]?.uintValue != 1)
        #expect(await read(1, Clusters.Descriptor.Attribute.clientList)?.members?.compactMap { $0.value.uintValue } == [6, 41])  // served in ascending order
        await node.stop()
        let bad = """
            identity: {serialNumber: TREE-2}
            endpoints:
              1: {deviceTypes: [OnOffPlugInUnit], parent: 9}
              2: {deviceTypes: [OnOffPlugInUnit], parent: 2}
              3: {deviceTypes: [OnOffPlugInUnit], parent: 4}
              4: {deviceTypes: [OnOffPlugInUnit], parent: 3, deviceTypeRevisions: {OnOffLight: 2}}
            """
        let messages = ProfileLoader().load(yaml: bad, file: "bad.yaml").diagnostics.map(\.description)
        #expect(messages.contains { $0.hasPrefix("bad.yaml: endpoints[1].parent: expected an endpoint of this device, got 9") }, "\(messages)")
        #expect(messages.contains("bad.yaml: endpoints[2].parent: an endpoint cannot be a part of itself"), "\(messages)")
        #expect(messages.contains { $0.hasPrefix("bad.yaml: endpoints[3].parent: endpoint 3's parents form a cycle") }, "\(messages)")
        #expect(messages.contains { $0.hasPrefix("bad.yaml: endpoints[4].deviceTypeRevisions.OnOffLight: OnOffLight is not a device type of endpoint 4") }, "\(messages)")
    }

    /// Real commercial devices (Tests/Fixtures/real-devices): each clones, validates, commissions
    /// over loopback UDP, and its wildcard read written as Home Assistant's node JSON (what
    /// `homectl dump --format ha` writes) equals the server's own dump on every attribute the
    /// clone does not regenerate: values, each cluster's globals, and the Descriptor's device
    /// types, PartsList tree (the FRITZ! bridge's composed endpoint 42 holds 40 and 41) and
    /// TagLists. The fraction served identically is printed per dump, with the differences by kind.
    @Test func realDevicesCloneCommissionAndDumpAsHomeAssistantsServerDid() async throws {
        let dumps = realDumps()
        #expect(dumps.count >= 20, "only \(dumps.count) real device dumps")
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        defer { PendingCleanups.run { await commissioner.stop() } }
        var total = (identical: 0, compared: 0)
        var composed = 0
        for (index, name) in dumps.enumerated() {
            let text = try String(contentsOf: realDevices.appendingPathComponent(name), encoding: .utf8)
            let dump = try NodeDump.read(text, file: name)
            let result = try NodeCloner().clone(dump, options: .init(source: name))
            let state = directory.appendingPathComponent("\(index)")
            let running = try await RunningNode.start(stateDirectory: state, description: result.profile.nodeDescription(model: .standard))
            #expect(await running.commissionable(), "\(name): not commissionable")
            let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession
            let served = try await homeAssistantDump(commissioner, session)
            await running.stop()
            var identical = 0, compared = 0
            var differences: [String: [String]] = [:]
            for (path, json) in dump.attributes.sorted(by: { $0.key.sortKey < $1.key.sortKey }) {
                if NodeCloner.isRegenerated(path, value: json) { continue }
                if path.cluster == Clusters.Descriptor.id, path.attribute == Clusters.Descriptor.Attribute.serverList { continue }
                // A composed endpoint: parts of its own, and not an Aggregator (a bridge's endpoint 1).
                if path.cluster == Clusters.Descriptor.id, path.attribute == Clusters.Descriptor.Attribute.partsList, path.endpoint != 0,
                    json != .array([]), !isAggregator(dump, path.endpoint)
                {
                    composed += 1
                }
                compared += 1
                guard let mine = served.attributes[path] else {
                    differences["absent", default: []].append("\(path)")
                    continue
                }
                if mine.isSameValue(as: json) { identical += 1 } else {
                    differences["value", default: []].append("\(path): dumped \(short(json)), served \(short(mine))")
                }
            }
            // Descriptor ServerLists are the node's own (what its device types require): reported, not counted.
            for endpoint in dump.endpoints {
                let path = AttributePath(endpoint: endpoint, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.serverList)
                guard let dumped = dump.attributes[path], let mine = served.attributes[path], !mine.isSameValue(as: dumped) else { continue }
                differences["serverList (not counted)", default: []].append("\(endpoint): dumped \(dumped.text(indented: false)), served \(mine.text(indented: false))")
            }
            let fraction = compared == 0 ? 1 : Double(identical) / Double(compared)
            print("clone \(name): \(identical)/\(compared) identical (\(String(format: "%.1f", fraction * 100)) %)"
                + differences.sorted { $0.key < $1.key }.map { " \($0.key): \($0.value.count) [\($0.value.prefix(3).joined(separator: "; "))]" }.joined())
            #expect(differences["absent"] == nil, "\(name): attributes the clone does not serve: \(differences["absent"] ?? [])")
            #expect(differences["value"] == nil, "\(name): values served otherwise: \(differences["value"] ?? [])")
            total.identical += identical
            total.compared += compared
        }
        #expect(composed >= 1, "no dump has a composed endpoint (a PartsList below the root)")
        print("clone: all dumps \(total.identical)/\(total.compared) identical")
    }

    /// Issue #41's round trip with our own dump: a running profile's dump (`homectl dump --format
    /// ha`'s wildcard read and encoding) clones into a profile whose running node dumps the same,
    /// apart from the stated fields (`varies`).
    @Test(arguments: ["bridge", "door-lock", "thermostat", "extended-color-light"])
    func aNodesDumpClonesIntoANodeWithTheSameDump(_ name: String) async throws {
        let file = realDevices.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DeviceProfiles/devices/\(name).yaml").path
        let profile = try ProfileLoader().loadDevice(file: file)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        defer { PendingCleanups.run { await commissioner.stop() } }
        func dump(_ description: NodeDescription, _ state: String) async throws -> NodeDump {
            let running = try await RunningNode.start(stateDirectory: directory.appendingPathComponent(state), description: description)
            #expect(await running.commissionable())
            let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession
            let dumped = try await homeAssistantDump(commissioner, session)
            await running.stop()
            return dumped
        }
        let first = try await dump(profile.nodeDescription(model: .standard), "original")
        guard case .string(let serial)? = first.value(0, Clusters.BasicInformation.id.rawValue, Clusters.BasicInformation.Attribute.serialNumber.rawValue) else {
            Issue.record("\(name): no serial number in the dump")
            return
        }
        let clone = try NodeCloner().clone(first, options: .init(serial: serial, source: "\(name).json"))
        let second = try await dump(clone.profile.nodeDescription(model: .standard), "clone")
        let paths = Set(first.attributes.keys).union(second.attributes.keys).filter { !varies($0) }
        let different = paths.filter { p in !(first.attributes[p].map { a in second.attributes[p].map { a.isSameValue(as: $0) } ?? false } ?? false) }
            .sorted { $0.sortKey < $1.sortKey }
            .map { "\($0): first \(short(first.attributes[$0])), clone \(short(second.attributes[$0]))" }
        print("clone round trip \(name): \(paths.count - different.count)/\(paths.count) attributes equal")
        #expect(paths.count > 100)
        #expect(different.isEmpty, "\(name): \(different)")
    }

    /// `homectl dump --format ha` of a node equals Home Assistant's Matter server's dump of the
    /// same node (Tests/Fixtures/ha-server-dumps: the server's interview of these profiles),
    /// apart from the stated fields (`varies`): every value, float and octet string written as
    /// the server writes it.
    @Test(arguments: ["air-quality-sensor", "bridge"])
    func ourDumpOfAProfileIsTheServersDumpOfIt(_ name: String) async throws {
        let root = realDevices.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let server = try NodeDump.read(
            try String(contentsOf: realDevices.deletingLastPathComponent().appendingPathComponent("ha-server-dumps/\(name).json"), encoding: .utf8),
            file: "\(name).json")
        let profile = try ProfileLoader().loadDevice(file: root.appendingPathComponent("DeviceProfiles/devices/\(name).yaml").path)
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        defer { PendingCleanups.run { await commissioner.stop() } }
        let running = try await RunningNode.start(stateDirectory: directory, description: profile.nodeDescription(model: .standard))
        #expect(await running.commissionable())
        let ours = try await homeAssistantDump(commissioner, try await commissioner.commission(try running.address, passcode: testPasscode).caseSession)
        await running.stop()
        let paths = Set(server.attributes.keys).union(ours.attributes.keys).filter { !varies($0) }
        let different = paths.filter { p in !(server.attributes[p].map { a in ours.attributes[p].map { a.isSameValue(as: $0) } ?? false } ?? false) }
            .sorted { $0.sortKey < $1.sortKey }
            .map { "\($0): server \(short(server.attributes[$0])), ours \(short(ours.attributes[$0]))" }
        print("homectl dump \(name): \(paths.count - different.count)/\(paths.count) attributes as the server dumped them")
        #expect(paths.count > 100)
        #expect(different.isEmpty, "\(name): \(different) (a changed profile: write the fixture again, see its README)")
    }

    /// `homectl dump --format ha` writes a node whose values are what the server would keep.
    @Test func valuesAreWrittenAsHomeAssistantsServerWritesThem() throws {
        let value = HomeAssistantNodeJSON.value(
            .structure([
                TLVElement(tag: .context(0), .float(0.1)), TLVElement(tag: .context(1), .bytes([0x0A, 0xFF])),
                TLVElement(tag: .context(2), .null), TLVElement(tag: .context(254), .signed(-3)),
                TLVElement(tag: .context(3), .array([TLVElement(.utf8("a\"b\n")), TLVElement(.double(21))])),
                TLVElement(tag: .context(4), .double(.nan)),
            ]))
        // float32 widened to double (chip's TLV reader), base64 octets, keys by field ID, NaN as orjson's null.
        #expect(value.text(indented: false) == #"{"0":0.10000000149011612,"1":"Cv8=","2":null,"254":-3,"3":["a\"b\n",21.0],"4":null}"#)
        #expect(DumpJSON.number("21.0").isSameValue(as: .number("21")))
        #expect(!DumpJSON.number("21.5").isSameValue(as: .number("21")))
        let attributes: [AttributePath: TLVValue] = [
            AttributePath(endpoint: 0, cluster: Clusters.BasicInformation.id, attribute: AttributeID(15)): .utf8("SN-7"),
            AttributePath(endpoint: 0, cluster: Clusters.BasicInformation.id, attribute: AttributeID(6)): .utf8("DE"),
            AttributePath(endpoint: 1, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.deviceTypeList):
                .array([TLVElement(.structure([TLVElement(tag: .context(0), .unsigned(14)), TLVElement(tag: .context(1), .unsigned(1))]))]),
            AttributePath(endpoint: 0, cluster: Clusters.ThreadNetworkDiagnostics.id, attribute: AttributeID(2)): .utf8("MyHome"),
        ]
        let node = HomeAssistantNodeJSON.node(nodeID: 9, attributes: HomeAssistantNodeJSON.anonymized(attributes))
        let read = try NodeDump.read(node.text(), file: "dump.json")
        #expect(read.nodeID == 9 && node["is_bridge"] == .bool(true) && node["interview_version"] == .number("6"))
        #expect(read.value(0, 40, 15) == .string("ANON-SERIAL") && read.value(0, 40, 6) == .string("XX") && read.value(0, 53, 2) == .null)
        #expect(node["attributes"].map { if case .object(let e) = $0 { e.map(\.key) } else { [] } } == ["0/40/6", "0/40/15", "0/53/2", "1/29/0"])
    }
}

/// What differs between two commissionings of one node, by design (scripts/clone-roundtrip.sh
/// states the same list): fabric-scoped state (Operational Credentials' NOCs, Fabrics,
/// TrustedRootCertificates and CurrentFabricIndex; the ACL), network state (Network
/// Commissioning; General Diagnostics' interfaces; Thread, Wi-Fi, Ethernet diagnostics),
/// counters and time (RebootCount, UpTime, TotalOperationalHours; Time Synchronization), and a
/// thermostat's LocalTemperature, which the simulated room moves.
private func varies(_ p: AttributePath) -> Bool {
    let (e, c, a) = (p.endpoint, p.cluster.rawValue, p.attribute.rawValue)
    if e == 0, c == 62, [0, 1, 4, 5].contains(a) { return true }
    if e == 0, c == 31, a == 0 { return true }
    if e == 0, c == 51, (0...3).contains(a) { return true }
    if e == 0, [49, 53, 54, 55, 56].contains(c) { return true }
    return c == 513 && a == 0
}

/// A node's every attribute as `homectl dump --format ha` writes it: a wildcard read, not
/// filtered by fabric, encoded as Home Assistant's node JSON and read back as a dump.
private func homeAssistantDump(_ commissioner: LoopbackCommissioner, _ session: SessionInfo) async throws -> NodeDump {
    let reports = try await InteractionClient(manager: commissioner.manager, session: session.handle).read([AttributePathIB()], fabricFiltered: false)
    var values: [AttributePath: TLVValue] = [:]
    for report in reports { if let value = report.value { values[report.path] = value } }
    return try NodeDump.read(HomeAssistantNodeJSON.node(nodeID: 1, attributes: values).text(), file: "homectl-dump.json")
}

/// A value as one line of JSON, cut at 80 characters.
private func short(_ json: DumpJSON?) -> String {
    json.map { String($0.text(indented: false).prefix(80)) } ?? "absent"
}

extension AttributePath {
    fileprivate var sortKey: (UInt32, UInt32, UInt32) { (UInt32(endpoint), cluster.rawValue, attribute.rawValue) }
}

private func isAggregator(_ dump: NodeDump, _ endpoint: EndpointNumber) -> Bool {
    guard case .array(let types)? = dump.attributes[AttributePath(endpoint: endpoint, cluster: Clusters.Descriptor.id, attribute: Clusters.Descriptor.Attribute.deviceTypeList)] else { return false }
    return types.contains { $0["0"]?.integer?.magnitude == UInt64(DeviceTypes.aggregator.rawValue) }
}
