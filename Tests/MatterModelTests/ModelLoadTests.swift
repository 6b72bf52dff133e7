import Foundation
import Testing
import MatterTLV
@testable import MatterModel

@Suite struct ModelLoadTests {
    @Test func standardModelLoads() throws {
        let model = try MatterModel.loadStandard()
        #expect(model.specVersion == "1.4")
        #expect(model.globalAttributes.map(\.id.rawValue) == [0xFFFD, 0xFFFC, 0xFFFB, 0xFFF9, 0xFFF8])
        // Every Matter 1.4 cluster and device type (scripts/model-import.py).
        #expect(model.clusters.count == 114)
        #expect(model.deviceTypes.count == 72)
        let path = AttributePath(endpoint: 1, cluster: ClusterID(0x0008), attribute: AttributeID(0x0000))
        #expect(model.attribute(path)?.name == "CurrentLevel")
        #expect(model.attribute(cluster: ClusterID(0x0006), attribute: AttributeID(0xFFFC))?.name == "FeatureMap")
        #expect(model.attribute(cluster: ClusterID(0x9999), attribute: AttributeID(0)) == nil)
        #expect(model.cluster(named: "NoSuchCluster") == nil)
        #expect(MatterModel.standard.clusters.count == model.clusters.count)
    }

    @Test func standardModelIsConsistent() throws {
        let model = try MatterModel.loadStandard()
        let problems = model.consistencyProblems()
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }
}

/// Models built from small JSON snippets, to show the loader and the consistency check
/// reject what they should.
@Suite struct ModelLoaderErrorTests {
    static func model(cluster: String, deviceTypes: String = "[]") throws -> MatterModel {
        let json = """
            {"globalAttributes": [{"id": "0xFFFD", "name": "ClusterRevision", "type": "uint16", "constraint": "min 1"}],
             "clusters": [\(cluster)], "deviceTypes": \(deviceTypes)}
            """
        return try MatterModel(json: Data(json.utf8))
    }

    func loadError(_ cluster: String, deviceTypes: String = "[]") -> ModelLoadError? {
        do {
            _ = try Self.model(cluster: cluster, deviceTypes: deviceTypes)
            return nil
        } catch let e as ModelLoadError {
            return e
        } catch {
            return ModelLoadError(path: "?", message: "\(error)")
        }
    }

    @Test func minimalClusterLoadsAndClusterRevisionDefaultsToRevision() throws {
        let m = try Self.model(cluster: #"{"id": "0x0006", "name": "OnOff", "revision": 6}"#)
        let c = try #require(m.cluster(ClusterID(6)))
        #expect(c.attribute(AttributeID(0xFFFD))?.defaultValue == .unsigned(6))
    }

    @Test func unknownTypeIsReportedWithItsPath() {
        let e = loadError(
            #"{"id": "0x0006", "name": "OnOff", "revision": 6, "attributes": [{"id": "0x0000", "name": "OnOff", "type": "NoSuchEnum"}]}"#)
        #expect(e?.path == "clusters[0].attributes[0].type")
        #expect(e?.message.contains("NoSuchEnum") == true)
    }

    @Test func badNotationIsRejected() {
        #expect(loadError(#"{"id": "6", "name": "X", "revision": 1}"#)?.path == "clusters[0].id")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "uint8", "access": "RW VQ"}]}"#
            )?.path == "clusters[0].attributes[0].access")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "uint8", "quality": "Z"}]}"#
            )?.path == "clusters[0].attributes[0].quality")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "uint8", "conformance": "LT &"}]}"#
            )?.path == "clusters[0].attributes[0].conformance")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "uint8", "constraint": "5 to 1"}]}"#
            )?.path == "clusters[0].attributes[0].constraint")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "uint8", "default": null}]}"#
            )?.path == "clusters[0].attributes[0].default")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "attributes": [{"id": "0x0000", "name": "A", "type": "bool", "default": 3}]}"#
            )?.path == "clusters[0].attributes[0].default")
        #expect(
            loadError(
                #"{"id": "0x0006", "name": "X", "revision": 1, "enums": [{"name": "E", "type": "enum8", "values": [[256, "Big"]]}]}"#)?.path
                == "clusters[0].enums[0].values[0]")
    }

    @Test func truncatedJSONIsAnErrorNotACrash() {
        #expect(throws: ModelLoadError.self) { try MatterModel(json: Data(#"{"clusters": [{"id": "0x0006""#.utf8)) }
        #expect(throws: ModelLoadError.self) { try MatterModel(json: Data()) }
    }

    @Test func deviceTypeMustReferToKnownClustersAndFeatures() {
        let cluster = #"{"id": "0x0006", "name": "OnOff", "revision": 6, "features": [{"bit": 0, "code": "LT", "name": "Lighting"}]}"#
        let unknownCluster = #"[{"id": "0x0100", "name": "L", "revision": 1, "class": "simple", "server": [{"cluster": "Nope"}]}]"#
        #expect(loadError(cluster, deviceTypes: unknownCluster)?.path == "deviceTypes[0].server[0].cluster")
        let unknownFeature =
            #"[{"id": "0x0100", "name": "L", "revision": 1, "class": "simple", "server": [{"cluster": "OnOff", "features": ["XX"]}]}]"#
        #expect(loadError(cluster, deviceTypes: unknownFeature)?.path == "deviceTypes[0].server[0].features")
    }

    @Test func consistencyCheckFindsDanglingReferences() throws {
        let m = try Self.model(
            cluster: """
                {"id": "0x0006", "name": "X", "revision": 1,
                 "features": [{"bit": 0, "code": "LT", "name": "Lighting"}],
                 "structs": [{"name": "S", "access": "F", "fields": [{"id": 1, "name": "A", "type": "uint8"}]}],
                 "attributes": [
                   {"id": "0x0000", "name": "A", "type": "uint8", "constraint": "MinThing to 10", "conformance": "LT | ZZ"},
                   {"id": "0x0000", "name": "B", "type": "uint8", "default": 300}
                 ],
                 "commands": [{"id": "0x00", "name": "Go", "response": "GoResponse"}]}
                """)
        let problems = m.consistencyProblems()
        #expect(problems.contains { $0.contains("duplicate attribute id") })
        #expect(problems.contains { $0.contains("unknown 'ZZ'") })
        #expect(problems.contains { $0.contains("unknown attribute MinThing") })
        #expect(problems.contains { $0.contains("response GoResponse") })
        #expect(problems.contains { $0.contains("X.B: default") })
        #expect(problems.contains { $0.contains("X.S: fabric-scoped") })
    }
}

/// The bundled model builds each cluster and device type on first use (issue #43: building
/// all 114 clusters was a third of a node process's start-up, 28 of them at once after a
/// power cut), and what it builds is what the checked load builds.
@Suite struct ModelOnFirstUseTests {
    static func onFirstUse() throws -> MatterModel {
        try MatterModel(json: MatterModel.standardJSON(), buildingOnFirstUse: true)
    }

    @Test func aModelBuiltOnFirstUseBuildsOnlyWhatIsAskedFor() throws {
        let model = try Self.onFirstUse()
        #expect(model.builtCounts.clusters == 0)
        #expect(model.builtCounts.deviceTypes == 0)
        #expect(model.cluster(named: "onOff")?.id == ClusterID(0x0006))
        #expect(model.builtCounts.clusters == 1)
        // A device type builds the clusters its requirements name, and only those.
        let light = try #require(model.deviceType(named: "OnOffLight"))
        #expect(model.builtCounts.deviceTypes == 1)
        let named = Set(light.requiredServerClusters.map(\.cluster) + light.optionalServerRequirements.map(\.cluster))
        #expect(model.builtCounts.clusters <= named.union([ClusterID(0x0006)]).count)
        // Names for "did you mean" need no definitions.
        #expect(model.clusterNames.count == 114)
        #expect(model.deviceTypeNames.count == 72)
        #expect(model.builtCounts.deviceTypes == 1)
    }

    @Test func everyDefinitionBuiltOnFirstUseIsTheCheckedLoadsOne() throws {
        let checked = try MatterModel.loadStandard()
        let model = try Self.onFirstUse()
        #expect(model.specVersion == checked.specVersion)
        #expect(model.globalAttributes == checked.globalAttributes)
        // Device types first (they build the clusters they name), then by both name forms.
        for type in checked.deviceTypes.reversed() {
            #expect(model.deviceType(type.id) == type)
            for name in [type.name, Naming.lowerCamel(type.name)] {
                #expect(model.deviceType(named: name) == checked.deviceType(named: name), "\(name)")
            }
        }
        for cluster in checked.clusters.reversed() {
            #expect(model.cluster(cluster.id) == cluster)
            for name in [cluster.name, Naming.lowerCamel(cluster.name)] {
                #expect(model.cluster(named: name) == checked.cluster(named: name), "\(name)")
            }
        }
        #expect(model.clusters == checked.clusters)
        #expect(model.deviceTypes == checked.deviceTypes)
        #expect(model.cluster(ClusterID(0x9999)) == nil)
        #expect(model.deviceType(named: "NoSuchDeviceType") == nil)
        #expect(model.consistencyProblems().isEmpty)
    }

    @Test func eachRowIsDecodedFromItsOwnSliceOfTheFile() throws {
        let json = try MatterModel.standardJSON()
        let slices = try #require(ModelFileSlices.elements(of: ["clusters", "deviceTypes"], in: json))
        #expect(slices["clusters"]?.count == 114)
        #expect(slices["deviceTypes"]?.count == 72)
        // Brackets and escaped quotes inside strings do not count.
        let tricky = Data(#"{"note": "a [ and a { \" ]", "clusters": [{"id": "0x0006", "name": "On\"Off {"}, {"id": "0x0008"}], "deviceTypes": []}"#.utf8)
        let found = try #require(ModelFileSlices.elements(of: ["clusters", "deviceTypes"], in: tricky))
        #expect(
            found["clusters"]?.map { String(decoding: tricky[$0], as: UTF8.self) }
                == [#"{"id": "0x0006", "name": "On\"Off {"}"#, #"{"id": "0x0008"}"#])
        #expect(found["deviceTypes"] == [])
        // Unbalanced bytes have no layout (the model then decodes every row at load).
        #expect(ModelFileSlices.elements(of: ["clusters"], in: Data(#"{"clusters": [{"id": "#.utf8)) == nil)
        #expect(ModelFileSlices.elements(of: ["clusters"], in: Data("}}".utf8)) == nil)
        // A small file built on first use, from its slices, is the file built whole.
        let small = """
            {"globalAttributes": [{"id": "0xFFFD", "name": "ClusterRevision", "type": "uint16", "constraint": "min 1"}],
             "clusters": [{"id": "0x0006", "name": "OnOff", "revision": 6,
                           "attributes": [{"id": "0x0000", "name": "OnOff", "type": "bool", "quality": "N S"}]},
                          {"id": "0x0003", "name": "Identify", "revision": 5}],
             "deviceTypes": [{"id": "0x0100", "name": "OnOffLight", "revision": 3, "class": "simple",
                              "server": [{"cluster": "OnOff", "attributes": ["OnOff"]}, {"cluster": "0x0003"}]}]}
            """
        let whole = try MatterModel(json: Data(small.utf8))
        let onFirstUse = try MatterModel(json: Data(small.utf8), buildingOnFirstUse: true)
        #expect(onFirstUse.deviceTypes == whole.deviceTypes)
        #expect(onFirstUse.clusters == whole.clusters)
        #expect(onFirstUse.clusters.count == 2)
    }

    @Test func theSharedModelIsBuiltOnFirstUse() throws {
        #expect(MatterModel.standard.buildsOnFirstUse)
        #expect(!(try MatterModel.loadStandard()).buildsOnFirstUse)
    }
}
