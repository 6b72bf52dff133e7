import DeviceProfile
import Foundation
import MatterModel
import MatterTLV
import Testing

@Suite("Shipped profiles")
struct ShippedProfileTests {
    static let deviceFiles = [
        "on-off-light.yaml", "dimmable-light.yaml", "on-off-plug.yaml", "window-covering.yaml", "light-and-covering.yaml",
    ]

    @Test("every shipped device profile validates", arguments: deviceFiles)
    func deviceValidates(_ name: String) throws {
        let result = ProfileLoader().load(file: shippedProfile("devices/" + name))
        #expect(result.diagnostics.isEmpty, "\(result.diagnostics.map(\.description))")
        #expect(result.kind == .device)
        guard case .device(let d)? = result.profile else {
            Issue.record("no device for \(name)")
            return
        }
        #expect(d.endpoints.first?.number == 0)
        #expect(d.endpoints.first?.deviceTypes.map(\.name) == ["RootNode"])
        #expect(d.endpoints.count >= 2)
        #expect(CommissioningCodes.isValidPasscode(d.commissioning.passcode))
    }

    @Test("every shipped file in DeviceProfiles validates")
    func allFilesValidate() throws {
        let fm = FileManager.default
        var files: [String] = []
        for dir in ["devices", "homes"] {
            let names = try fm.contentsOfDirectory(atPath: shippedProfile(dir)).filter { $0.hasSuffix(".yaml") }
            files += names.map { shippedProfile(dir + "/" + $0) }
        }
        #expect(files.count >= 6)
        for file in files {
            let diags = ProfileLoader().validate(file: file)
            #expect(diags.isEmpty, "\(file): \(diags.map(\.description))")
        }
    }

    @Test("the demo home has two structures and at least eight devices")
    func demoHome() throws {
        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        #expect(home.name == "Demo Home")
        #expect(home.structures.map(\.name) == ["Main House", "Guest Cottage"])
        // Issue #8: a structure's address (scheduled automations need one) is optional.
        #expect(home.structures.map(\.address) == ["1 Main Street, Springfield", nil])
        #expect(home.allDevices.count >= 8)
        #expect(home.structures.allSatisfy { !$0.rooms.isEmpty })
        // Every device is distinct on the network.
        let serials = home.allDevices.map(\.profile.identity.serialNumber)
        #expect(Set(serials).count == serials.count)
        let uniqueIDs = home.allDevices.map(\.profile.identity.uniqueID)
        #expect(Set(uniqueIDs).count == uniqueIDs.count)
        // A device outside any room.
        let porch = try #require(home.structures[1].devices.first)
        #expect(porch.name == "Porch Light")
        #expect(porch.room == nil)
        // Issue #21: the device groups a controller makes when it commissions the home.
        #expect(
            home.structures[0].groups == [
                ResolvedDeviceGroup(
                    name: "Downstairs Lights",
                    devices: ["Ceiling Light", "Kitchen Pendant", "Counter Lights"])
            ])
        #expect(home.structures[1].groups.isEmpty)
        // Issue #40: a wall switch bound to a light, written when the home is commissioned.
        #expect(home.structures[0].bindings == [ResolvedSwitchBinding(switchDevice: "Living Room Switch", lights: ["Ceiling Light"])])
        #expect(home.structures[1].bindings.isEmpty)
        // Issue #40: the newer device types, each in the home.
        let sources = Set(home.allDevices.map { ($0.profileReference as NSString).lastPathComponent })
        for profile in [
            "fan.yaml", "air-purifier.yaml", "air-quality-sensor.yaml", "smoke-co-alarm.yaml", "water-leak-detector.yaml",
            "on-off-light-switch.yaml", "bridge.yaml",
        ] {
            #expect(sources.contains(profile), "the demo home has no \(profile)")
        }
    }

    @Test("home overrides apply: name, identity, setup code, behaviour, attribute values")
    func demoHomeOverrides() throws {
        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        func device(_ name: String) throws -> ResolvedHomeDevice {
            try #require(home.allDevices.first { $0.name == name }, "no device \(name)")
        }
        let level = ClusterID(0x0008), currentLevel = AttributeID(0x0000)
        let ceiling = try device("Ceiling Light")
        #expect(ceiling.profile.name == "Ceiling Light")
        #expect(ceiling.room == "Living Room")
        #expect(ceiling.profile.endpoint(1)?.cluster(level)?.initialValues[currentLevel] == .unsigned(180))

        // The profile's own value stays where the home does not override it.
        let cottage = try device("Cottage Lamp")
        #expect(cottage.profile.endpoint(1)?.cluster(level)?.initialValues[currentLevel] == .unsigned(128))

        let counter = try device("Counter Lights")
        #expect(counter.profile.identity.productName == "Under-Cabinet Strip")
        #expect(counter.profile.identity.vendorName == "Matter Sim")
        #expect(counter.profile.endpoint(1)?.cluster(level)?.initialValues[AttributeID(0x0011)] == .unsigned(200))

        let pendant = try device("Kitchen Pendant")
        #expect(pendant.profile.identity.serialNumber == "MH-KIT-PENDANT")
        #expect(pendant.profile.commissioning.passcode == 34567890)
        #expect(pendant.profile.commissioning.discriminator == 1201)
        #expect(!pendant.profile.commissioning.passcodeGenerated)

        let patio = try device("Patio Blind")
        #expect(patio.profile.behaviour.windowCovering.liftSpeed == 4)
        #expect(patio.profile.behaviour.windowCovering.tiltSpeed == 25)
        let bedside = try device("Bedside Lamp")
        #expect(bedside.profile.behaviour.level.defaultTransitionTime == 20)
        #expect(bedside.profile.behaviour.level.defaultMoveRate == 50)  // from the profile

        // Derived serial numbers: the profile's serial plus a stable suffix.
        #expect(ceiling.profile.identity.serialNumber.hasPrefix("SIM-DL-0001-"))
        let again = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        #expect(again.allDevices.map(\.profile.identity) == home.allDevices.map(\.profile.identity))
        #expect(again.allDevices.map(\.profile.commissioning) == home.allDevices.map(\.profile.commissioning))
    }

    @Test("endpoint 0 is the root node; device type clusters are added with defaults")
    func implicitClusters() throws {
        let d = try ProfileLoader().loadDevice(file: shippedProfile("devices/dimmable-light.yaml"))
        let root = try #require(d.endpoint(0))
        let basic = try #require(root.cluster(ClusterID(0x0028)))
        #expect(basic.addedByDeviceType)
        #expect(basic.initialValues[AttributeID(0x0001)] == .utf8("Matter Sim"))
        #expect(basic.initialValues[AttributeID(0x0002)] == .unsigned(0xFFF1))
        #expect(basic.initialValues[AttributeID(0x000F)] == .utf8("SIM-DL-0001"))
        #expect(basic.initialValues[AttributeID(0x0006)] == .utf8("XX"))  // Location's spec default
        #expect(d.identity.softwareVersionString == "1.2.0")
        #expect(!d.identity.uniqueID.isEmpty)
        for endpoint in d.endpoints {
            #expect(endpoint.cluster(ClusterID(0x001D)) != nil, "no Descriptor on endpoint \(endpoint.number)")
        }
        let one = try #require(d.endpoint(1))
        #expect(one.cluster(ClusterID(0x0003))?.addedByDeviceType == true)  // Identify
        #expect(one.cluster(ClusterID(0x0004)) != nil)  // Groups
        let levelControl = try #require(one.cluster(ClusterID(0x0008)))
        #expect(levelControl.features == ["OO", "LT"])
        #expect(levelControl.featureMap == 0b11)
        #expect(levelControl.explicitAttributes.contains(AttributeID(0x0000)))
        #expect(levelControl.initialValues[AttributeID(0x0001)] == .unsigned(0))  // RemainingTime default
        // OnOff gets Lighting from the device type though the profile lists no features.
        #expect(one.cluster(ClusterID(0x0006))?.features == ["LT"])
    }

    @Test("a multi-endpoint node keeps both device types, everything on the LAN")
    func lightAndCovering() throws {
        let d = try ProfileLoader().loadDevice(file: shippedProfile("devices/light-and-covering.yaml"))
        #expect(d.endpoints.map(\.number) == [0, 1, 2])
        #expect(d.endpoint(1)?.deviceTypes.map(\.name) == ["DimmableLight"])
        #expect(d.endpoint(2)?.deviceTypes.map(\.name) == ["WindowCovering"])
        // The interop run drives the shade over Matter: nothing is cloud-only.
        #expect(d.cloudOnlyClusters.isEmpty)
        #expect(d.endpoint(2)?.cluster(ClusterID(0x0102))?.features == ["LF", "PA_LF"])
        #expect(d.behaviour.windowCovering.liftSpeed == 5)
        #expect(d.behaviour.windowCovering.tiltSpeed == 50)  // default
    }

    @Test("the air purifier's Air Quality Sensor has an endpoint of its own (one application device type per endpoint)")
    func airPurifier() throws {
        let d = try ProfileLoader().loadDevice(file: shippedProfile("devices/air-purifier.yaml"))
        #expect(d.endpoint(1)?.deviceTypes.map(\.name) == ["AirPurifier"])
        #expect(d.endpoint(2)?.deviceTypes.map(\.name) == ["AirQualitySensor"])
        #expect(d.endpoint(2)?.cluster(Clusters.AirQuality.id) != nil)
    }

    @Test("the thermostat serves its hardware's Abs setpoint limits, which TC-TSTAT-2.1 reads under AutoMode")
    func thermostatAbsLimits() throws {
        let d = try ProfileLoader().loadDevice(file: shippedProfile("devices/thermostat.yaml"))
        let thermostat = try #require(d.endpoint(1)?.cluster(Clusters.Thermostat.id))
        // AbsMinHeat, AbsMaxHeat, AbsMinCool, AbsMaxCool: the spec's defaults (4.3.9.5-4.3.9.8).
        for (id, value) in [(0x0003, 700), (0x0004, 3000), (0x0005, 1600), (0x0006, 3200)] as [(UInt32, Int64)] {
            #expect(thermostat.explicitAttributes.contains(AttributeID(id)), "attribute \(id) not served")
            #expect(thermostat.initialValues[AttributeID(id)] == .unsigned(UInt64(value)))
        }
    }

    @Test("the cloud dimmer and the demo home's bedside lamp dim only through the cloud relay")
    func cloudOnlyDimming() throws {
        let dimmer = try ProfileLoader().loadDevice(file: shippedProfile("devices/cloud-dimmer.yaml"))
        #expect(dimmer.cloudOnlyClusters == [ClusterPath(endpoint: 1, cluster: ClusterID(0x0008))])
        #expect(dimmer.cloud == CloudSettings(relay: "ws://127.0.0.1:8080"))

        let home = try ProfileLoader().loadHome(file: shippedProfile("homes/demo-home.yaml"))
        let lamp = try #require(home.allDevices.first { $0.name == "Bedside Lamp" })
        #expect(lamp.profile.cloudOnlyClusters == [ClusterPath(endpoint: 1, cluster: ClusterID(0x0008))])
        // The home's relay reaches every device; only the lamp has a cloud-only trait.
        #expect(home.allDevices.allSatisfy { $0.profile.cloud.relay == "ws://127.0.0.1:8080" })
        #expect(home.allDevices.filter { !$0.profile.cloudOnlyClusters.isEmpty }.map(\.name) == ["Bedside Lamp"])
    }

    @Test("describe shows endpoints, device types, features and values")
    func describeDevice() throws {
        let loader = ProfileLoader()
        let d = try loader.loadDevice(file: shippedProfile("devices/dimmable-light.yaml"))
        let text = ProfileDescription(model: loader.model).render(d)
        #expect(text.contains("endpoint 1: DimmableLight (0x0101"))
        #expect(text.contains("LevelControl (rev"))
        #expect(text.contains("features: OnOff (OO), Lighting (LT)"))
        #expect(text.contains("currentLevel = 128"))
        #expect(text.contains("vendorName = \"Matter Sim\""))
        let home = try loader.loadHome(file: shippedProfile("homes/demo-home.yaml"))
        let homeText = ProfileDescription(model: loader.model, showAttributes: false).render(home)
        #expect(homeText.contains("structure \"Guest Cottage\""))
        #expect(homeText.contains("room \"Kitchen\""))
        #expect(homeText.contains("device \"Porch Light\""))
    }
}
