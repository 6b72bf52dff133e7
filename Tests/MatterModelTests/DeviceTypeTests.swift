import Testing
import MatterTLV
@testable import MatterModel

@Suite struct DeviceTypeTests {
    let model = MatterModel.standard

    @Test func idsNamesAndRevisions() throws {
        let expected: [(UInt32, String, UInt16, DeviceTypeClass)] = [
            (0x0016, "RootNode", 3, .node), (0x0100, "OnOffLight", 3, .simple), (0x0101, "DimmableLight", 3, .simple),
            (0x010A, "OnOffPlugInUnit", 3, .simple), (0x0202, "WindowCovering", 3, .simple),
        ]
        for (id, name, revision, cls) in expected {
            let dt = try #require(model.deviceType(DeviceTypeID(id)), "\(name)")
            #expect(dt.name == name && dt.revision == revision && dt.deviceClass == cls && dt.class == cls)
            #expect(model.deviceType(named: name) == dt)
            #expect(model.deviceType(named: dt.lowerCamelName) == dt)
            // The Base Device Type puts Descriptor on every endpoint.
            #expect(dt.isRequiredServer(ClusterID(0x001D)))
        }
        #expect(model.deviceType(named: "dimmableLight")?.id == DeviceTypeID(0x0101))
        #expect(model.deviceType(named: "Toaster") == nil)
    }

    @Test func dimmableLightNeedsLevelControlWithOnOffAndLighting() throws {
        let dt = try #require(model.deviceType(named: "DimmableLight"))
        let lc = try #require(dt.requirement(for: ClusterID(0x0008)))
        #expect(lc.requiredFeatures == ["OO", "LT"])
        #expect(dt.isRequiredServer(ClusterID(0x0008)))
        #expect(lc.attributeConstraints[AttributeID(0x0000)] == .range(min: 1, max: 254))
        #expect(lc.attributeConstraints[AttributeID(0x0002)] == .range(min: 1, max: 1))
        #expect(dt.requirement(for: ClusterID(0x0006))?.requiredFeatures == ["LT"])
        #expect(dt.requirement(for: ClusterID(0x0003))?.requiredCommands == [CommandID(0x40)])
        #expect(dt.requiredServerClusters.map(\.cluster.rawValue) == [0x001D, 0x0003, 0x0004, 0x0006, 0x0008])
        #expect(dt.optionalServerClusters == [ClusterID(0x0062)])
        #expect(dt.optionalClientClusters == [ClusterID(0x0406)])
    }

    @Test func onOffLightAndPlug() throws {
        for name in ["OnOffLight", "OnOffPlugInUnit"] {
            let dt = try #require(model.deviceType(named: name))
            #expect(dt.requirement(for: ClusterID(0x0006))?.requiredFeatures == ["LT"])
            #expect(!dt.isRequiredServer(ClusterID(0x0008)))
            #expect(dt.optionalServerClusters.contains(ClusterID(0x0008)))
            // Optional Level Control, when present, needs OO and LT.
            #expect(dt.requirement(for: ClusterID(0x0008))?.requiredFeatures == ["OO", "LT"])
        }
    }

    @Test func rootNodeClusters() throws {
        let root = try #require(model.deviceType(named: "RootNode"))
        let required = Set(root.requiredServerClusters.map(\.cluster.rawValue))
        #expect(required == [0x001D, 0x001F, 0x0028, 0x0030, 0x0031, 0x0033, 0x003C, 0x003E, 0x003F])
        for id in required { #expect(model.cluster(ClusterID(id)) != nil) }
        #expect(root.optionalServerClusters.contains(ClusterID(0x0037)))
        #expect(!root.optionalServerClusters.contains(ClusterID(0x0006)))
    }

    @Test func windowCovering() throws {
        let dt = try #require(model.deviceType(DeviceTypeID(0x0202)))
        #expect(dt.requiredServerClusters.map(\.cluster.rawValue) == [0x001D, 0x0003, 0x0102])
        #expect(dt.optionalServerClusters == [ClusterID(0x0004)])
    }

    @Test func deviceTypeConstraintsValidate() throws {
        let dt = try #require(model.deviceType(named: "DimmableLight"))
        let lc = try #require(model.cluster(ClusterID(0x0008)))
        let req = try #require(dt.requirement(for: lc.id))
        let minLevel = try #require(lc.attribute(named: "MinLevel"))
        let tightened = req.attributeConstraints[minLevel.id]
        #expect(lc.validate(.unsigned(0), type: minLevel.type, constraint: tightened)?.expected == "an integer in 1...1")
        #expect(lc.validate(.unsigned(1), type: minLevel.type, constraint: tightened) == nil)
    }
}
