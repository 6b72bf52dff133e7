import DeviceProfile
import Foundation
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

    /// Real commercial devices (Tests/Fixtures/real-devices): each clones, validates, commissions
    /// over loopback UDP and serves every dumped attribute it does not regenerate; the fraction
    /// served identically is printed per dump, with the differences by kind.
    @Test func realDevicesCloneCommissionAndServeTheirDumpedAttributes() async throws {
        let dumps = realDumps()
        #expect(dumps.count >= 20, "only \(dumps.count) real device dumps")
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let commissioner = try await LoopbackCommissioner.start()
        defer { PendingCleanups.run { await commissioner.stop() } }
        var total = (identical: 0, compared: 0)
        for (index, name) in dumps.enumerated() {
            let text = try String(contentsOf: realDevices.appendingPathComponent(name), encoding: .utf8)
            let dump = try NodeDump.read(text, file: name)
            let result = try NodeCloner().clone(dump, options: .init(source: name))
            let state = directory.appendingPathComponent("\(index)")
            let running = try await RunningNode.start(stateDirectory: state, description: result.profile.nodeDescription(model: .standard))
            #expect(await running.commissionable(), "\(name): not commissionable")
            let session = try await commissioner.commission(try running.address, passcode: testPasscode).caseSession
            var identical = 0, compared = 0
            var differences: [String: [String]] = [:]
            for (path, json) in dump.attributes.sorted(by: { ($0.key.endpoint, $0.key.cluster, $0.key.attribute) < ($1.key.endpoint, $1.key.cluster, $1.key.attribute) }) {
                if NodeCloner.isRegenerated(path, value: json) || path.cluster.rawValue == 0x1D { continue }
                compared += 1
                let expected = dump.decodedValue(path)
                switch try await commissioner.read(session, path.endpoint, path.cluster, path.attribute.rawValue) {
                case .success(let served) where expected.map(canonical) == canonical(served): identical += 1
                case .success(let served):
                    differences["value", default: []].append("\(path): dumped \(expected.map(canonical) ?? "?"), served \(canonical(served))")
                case .failure(let status):
                    differences["absent", default: []].append("\(path): \(status)")
                }
            }
            // Descriptor lists are the node's own (derived from its endpoints): reported, not counted.
            for endpoint in dump.endpoints {
                guard let dumped = dump.decodedValue(AttributePath(endpoint: endpoint, cluster: ClusterID(0x1D), attribute: AttributeID(1))),
                    case .success(let served) = try await commissioner.read(session, endpoint, ClusterID(0x1D), 1)
                else { continue }
                let (a, b) = (Set(dumped.members?.compactMap { $0.value.uintValue } ?? []), Set(served.members?.compactMap { $0.value.uintValue } ?? []))
                if a != b { differences["serverList (not counted)", default: []].append("\(endpoint): +\(b.subtracting(a).sorted()) -\(a.subtracting(b).sorted())") }
            }
            await running.stop()
            let fraction = compared == 0 ? 1 : Double(identical) / Double(compared)
            print("clone \(name): \(identical)/\(compared) identical (\(String(format: "%.1f", fraction * 100)) %)"
                + differences.sorted { $0.key < $1.key }.map { " \($0.key): \($0.value.count) [\($0.value.prefix(3).joined(separator: "; "))]" }.joined())
            #expect(differences["absent"] == nil, "\(name): attributes the clone does not serve: \(differences["absent"] ?? [])")
            #expect(fraction >= 0.95, "\(name): \(identical)/\(compared) served identically")
            total.identical += identical
            total.compared += compared
        }
        print("clone: all dumps \(total.identical)/\(total.compared) identical")
    }
}

/// A value as comparable text: integers by value whatever their signedness or width, floats at
/// single precision, lists and structures member by member.
private func canonical(_ v: TLVValue) -> String {
    switch v {
    case .unsigned(let u): String(u)
    case .signed(let i): String(i)
    case .bool(let b): String(b)
    case .float(let f): String(f)
    case .double(let d): String(Float(d))
    case .utf8(let s): "\"\(s)\""
    case .bytes(let b): "0x" + b.map { String(format: "%02x", $0) }.joined()
    case .null: "null"
    case .array(let items), .list(let items): "[" + items.map { canonical($0.value) }.joined(separator: ",") + "]"
    case .structure(let members):
        "{" + members.map { m -> String in
            if case .context(let t) = m.tag { return "\(t):" + canonical(m.value) }
            return "?:" + canonical(m.value)
        }.sorted().joined(separator: ",") + "}"
    }
}
