import DeviceProfile
import Foundation
import MatterModel
import MatterTLV
import Testing

@Suite("Profile validation errors")
struct ValidationErrorTests {
    @Test("the minimal test profile is valid")
    func minimalIsValid() {
        #expect(diagnostics(device("deviceTypes: [DimmableLight]")).isEmpty)
    }

    @Test("a level of 300 names the attribute and the model's range")
    func levelOutOfRange() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                clusters:
                  LevelControl:
                    currentLevel: 300
                """))
        let message = expectOne(diags, at: "endpoints[1].clusters.LevelControl.currentLevel")
        #expect(message == "expected an integer in 1...254, got 300")
        #expect(diags.first?.file == "test.yaml")
        #expect(diags.first?.line == 9)
        #expect(
            diags.first?.description
                == "test.yaml: endpoints[1].clusters.LevelControl.currentLevel: expected an integer in 1...254, got 300")
    }

    @Test("a range that depends on another attribute uses the profile's value")
    func levelBelowMinLevel() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                clusters:
                  LevelControl:
                    minLevel: 20
                    currentLevel: 10
                """))
        #expect(expectOne(diags, at: "endpoints[1].clusters.LevelControl.currentLevel") == "expected an integer in 20...254, got 10")
    }

    @Test("a lift of 10001 hundredths of a percent fails")
    func liftOutOfRange() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [WindowCovering]
                clusters:
                  WindowCovering:
                    features: [Lift, PositionAwareLift]
                    currentPositionLiftPercent100ths: 10001
                """))
        let message = expectOne(diags, at: "endpoints[1].clusters.WindowCovering.currentPositionLiftPercent100ths")
        #expect(message == "expected an integer in 0...10000, got 10001")
    }

    @Test("unknown keys are reported with the closest known key")
    func unknownKeys() {
        let diags = diagnostics(
            device(
                "deviceTypes: [OnOffLight]",
                extra: """
                    behavior:
                      level: {defaultTransitionTime: 3}
                    """) + "\n    colour: red\n")
        #expect(expectOne(diags, at: "behavior") == "unknown key 'behavior'; did you mean 'behaviour'?")
        #expect(expectOne(diags, at: "endpoints[1].colour")?.hasPrefix("unknown key 'colour'") == true)

        let identity = diagnostics(
            """
            identity:
              serialNumber: X
              vendorNmae: Acme
            endpoints:
              1: {deviceTypes: [OnOffLight]}
            """)
        #expect(expectOne(identity, at: "identity.vendorNmae") == "unknown key 'vendorNmae'; did you mean 'vendorName'?")
    }

    @Test("wrong types say what was expected and what was found")
    func wrongTypes() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                clusters:
                  LevelControl:
                    currentLevel: bright
                  OnOff:
                    onOff: 3
                """, extra: "commissioning: [1, 2]"))
        #expect(expectOne(diags, at: "endpoints[1].clusters.LevelControl.currentLevel") == "expected an integer, got \"bright\"")
        #expect(expectOne(diags, at: "endpoints[1].clusters.OnOff.onOff") == "expected true or false, got 3")
        #expect(expectOne(diags, at: "commissioning") == "expected a commissioning mapping, got a list")

        let strings = diagnostics(
            """
            identity: 12
            endpoints:
              1: {deviceTypes: {a: 1}}
            """)
        #expect(expectOne(strings, at: "endpoints[1].deviceTypes") == "expected a list of device type names, got a mapping")
        #expect(expectOne(strings, at: "identity") == "expected an identity mapping, got 12")
    }

    @Test("strings are checked against the model's length limits")
    func stringTooLong() {
        let long = String(repeating: "x", count: 33)
        let diags = diagnostics(
            device("deviceTypes: [OnOffLight]").replacingOccurrences(
                of: "serialNumber: TEST-0001", with: "serialNumber: TEST-0001\n  vendorName: \(long)"))
        #expect(expectOne(diags, at: "identity.vendorName") == "expected at most 32 UTF-8 bytes, got 33 UTF-8 bytes")
    }

    @Test("unknown device type, cluster, attribute and feature names")
    func unknownNames() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimableLight, 0x7777]
                clusters:
                  LevelControll:
                    currentLevel: 3
                  OnOff:
                    onOf: true
                  WindowCovering:
                    features: [Lightning]
                """))
        #expect(expectOne(diags, at: "endpoints[1].deviceTypes[0]") == "unknown device type 'DimableLight'; did you mean 'DimmableLight'?")
        #expect(expectOne(diags, at: "endpoints[1].deviceTypes[1]") == "unknown device type ID 0x7777")
        #expect(
            expectOne(diags, at: "endpoints[1].clusters.LevelControll") == "unknown cluster 'LevelControll'; did you mean 'LevelControl'?")
        #expect(expectOne(diags, at: "endpoints[1].clusters.OnOff.onOf") == "unknown attribute of OnOff 'onOf'; did you mean 'onOff'?")
        let feature = expectOne(diags, at: "endpoints[1].clusters.WindowCovering.features[0]")
        #expect(feature?.hasPrefix("unknown feature 'Lightning'") == true)
        #expect(feature?.contains("Lift (LF)") == true)

        let lighting = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                clusters:
                  LevelControl: {features: [OnOff, Lightning]}
                """))
        #expect(
            expectOne(lighting, at: "endpoints[1].clusters.LevelControl.features[1]")
                == "unknown feature 'Lightning'; did you mean 'Lighting'?")
    }

    @Test("enum values by name, with suggestions")
    func enumNames() {
        let ok = memoryLoader([:]).load(
            yaml: device(
                """
                deviceTypes: [OnOffLight]
                clusters:
                  OnOff: {startUpOnOff: toggle}
                """), file: "t.yaml")
        guard case .device(let d)? = ok.profile else {
            Issue.record("\(ok.diagnostics)")
            return
        }
        #expect(d.endpoint(1)?.cluster(ClusterID(0x0006))?.initialValues[AttributeID(0x4003)] == .unsigned(2))

        let bad = diagnostics(
            device(
                """
                deviceTypes: [OnOffLight]
                clusters:
                  OnOff: {startUpOnOff: Togle}
                """))
        #expect(
            expectOne(bad, at: "endpoints[1].clusters.OnOff.startUpOnOff")
                == "unknown StartUpOnOffEnum value 'Togle'; did you mean 'toggle'?")
        let number = diagnostics(
            device(
                """
                deviceTypes: [OnOffLight]
                clusters:
                  OnOff: {startUpOnOff: 7}
                """))
        #expect(expectOne(number, at: "endpoints[1].clusters.OnOff.startUpOnOff") == "expected one of 0 (Off), 1 (On), 2 (Toggle), got 7")
    }

    @Test("YAML syntax errors carry line and column")
    func syntaxError() {
        let diags = diagnostics(
            """
            identity:
              serialNumber: X
            endpoints:
              1: {deviceTypes: [OnOffLight]
              2: x
            """)
        #expect(diags.count == 1)
        let d = diags.first
        #expect(d?.path.isRoot == true)
        #expect(d?.line == 5)
        #expect(d?.column != nil)
        #expect(d?.message.hasPrefix("YAML syntax error") == true)
        #expect(d?.description.hasPrefix("test.yaml: line 5, column") == true)
    }

    @Test("duplicate endpoint numbers")
    func duplicateEndpoints() {
        let diags = diagnostics(
            """
            identity: {serialNumber: X}
            endpoints:
              1: {deviceTypes: [OnOffLight]}
              0x01: {deviceTypes: [DimmableLight]}
            """)
        #expect(expectOne(diags, at: "endpoints[1]") == "duplicate endpoint number 1 (already defined at line 3, column 3)")

        // Written identically, the YAML parser itself rejects the second key.
        let same = diagnostics(
            """
            identity: {serialNumber: X}
            endpoints:
              1: {deviceTypes: [OnOffLight]}
              1: {deviceTypes: [DimmableLight]}
            """)
        #expect(same.count == 1)
        #expect(same.first?.message == "duplicate key '1' in one mapping (each key may appear once)")
        #expect(same.first?.line != nil)
    }

    @Test("invalid endpoint numbers and missing device types")
    func badEndpoints() {
        let diags = diagnostics(
            """
            identity: {serialNumber: X}
            endpoints:
              one: {deviceTypes: [OnOffLight]}
              65535: {deviceTypes: [OnOffLight]}
              2: {clusters: {OnOff: {}}}
              3: {deviceTypes: [RootNode]}
            """)
        #expect(expectOne(diags, at: "endpoints.one") == "expected an endpoint number in 0...65534, got \"one\"")
        #expect(expectOne(diags, at: "endpoints[\"65535\"]") == "expected an endpoint number in 0...65534, got 65535")
        #expect(expectOne(diags, at: "endpoints[2]")?.hasPrefix("missing required key 'deviceTypes'") == true)
        #expect(expectOne(diags, at: "endpoints[3].deviceTypes[0]") == "RootNode is a node device type; it belongs on endpoint 0 only")
    }

    @Test("endpoint 0 holds the root node only")
    func rootEndpoint() {
        let diags = diagnostics(
            """
            identity: {serialNumber: X}
            endpoints:
              0: {deviceTypes: [OnOffLight]}
            """)
        #expect(
            expectOne(diags, at: "endpoints[0].deviceTypes[0]")
                == "OnOffLight is an application device type; put it on an endpoint in 1...65534, not on the root endpoint 0")
        #expect(expectOne(diags, at: "endpoints") == "expected at least one application endpoint (1...65534) besides the root node (0)")
    }

    @Test("a home's identity and setup code overrides are checked in the home file")
    func homeIdentityOverrides() {
        let plug = try! shippedText("devices/on-off-plug.yaml")
        let diags = diagnostics(
            """
            structures:
              - name: House
                devices:
                  - profile: plug.yaml
                    identity: {vendorID: 70000, productNmae: X}
                    commissioning: {passcode: 87654321}
                    values:
                      0:
                        BasicInformation: {vendorName: Y}
            """, file: "home.yaml", others: ["plug.yaml": plug])
        #expect(diags.allSatisfy { $0.file == "home.yaml" })
        #expect(expectOne(diags, at: "structures[0].devices[0].identity.vendorID") == "expected an integer in 0...65535, got 70000")
        #expect(
            expectOne(diags, at: "structures[0].devices[0].identity.productNmae")
                == "unknown key 'productNmae'; did you mean 'productName'?")
        #expect(expectOne(diags, at: "structures[0].devices[0].commissioning.passcode")?.contains("forbids") == true)
        #expect(
            expectOne(diags, at: "structures[0].devices[0].values[0].BasicInformation.vendorName")
                == "set vendorName under structures[0].devices[0].identity.vendorName, not as a cluster value")
    }

    @Test("invalid passcodes and discriminators")
    func badCommissioning() {
        for (passcode, expected) in [
            ("11111111", "setup passcode 11111111 is one the spec forbids (00000000, 11111111, …, 99999999, 12345678, 87654321)"),
            ("12345678", "setup passcode 12345678 is one the spec forbids (00000000, 11111111, …, 99999999, 12345678, 87654321)"),
            ("0", "expected a setup passcode in 1...99999998, got 0"),
            ("100000000", "expected a setup passcode in 1...99999998, got 100000000"),
            ("abc", "expected a setup passcode (an integer in 1...99999998), got \"abc\""),
        ] {
            let diags = diagnostics(device("deviceTypes: [OnOffLight]", extra: "commissioning: {passcode: \(passcode)}"))
            #expect(expectOne(diags, at: "commissioning.passcode") == expected)
        }
        let disc = diagnostics(device("deviceTypes: [OnOffLight]", extra: "commissioning: {passcode: 20202021, discriminator: 4096}"))
        #expect(expectOne(disc, at: "commissioning.discriminator") == "expected an integer in 0...4095, got 4096")
    }

    @Test("a required cluster missing the device type's required features")
    func missingRequiredFeatures() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                clusters:
                  LevelControl:
                    features: [OnOff]
                """))
        #expect(
            expectOne(diags, at: "endpoints[1].clusters.LevelControl.features")
                == "DimmableLight requires LevelControl with features OnOff (OO), Lighting (LT); missing Lighting (LT)")
    }

    @Test("feature conformance: choice groups and dependent features")
    func featureConformance() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [WindowCovering]
                clusters:
                  WindowCovering:
                    features: [PositionAwareLift]
                """))
        let messages = diags.filter { $0.path.description.hasPrefix("endpoints[1].clusters.WindowCovering.features") }.map(\.message)
        #expect(messages.contains("WindowCovering needs at least one of the features Lift (LF), Tilt (TL)"))
        #expect(messages.contains { $0.hasPrefix("feature PositionAwareLift (PA_LF) is not allowed in WindowCovering") })

        // Without a features list the choice is made for the profile: Lift.
        let d = try? memoryLoader([:]).loadDevice(yaml: device("deviceTypes: [WindowCovering]"), file: "w.yaml")
        #expect(d?.endpoint(1)?.cluster(ClusterID(0x0102))?.features == ["LF"])
        // The root node's network interface defaults to Ethernet.
        #expect(d?.endpoint(0)?.cluster(ClusterID(0x0031))?.features == ["ET"])
    }

    @Test("a mistake in a features list does not cause knock-on errors")
    func noKnockOn() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [WindowCovering]
                clusters:
                  WindowCovering:
                    features: [Lift, PositionAwareLiftt]
                    currentPositionLiftPercent100ths: 5000
                """))
        #expect(diags.count == 1, "\(diags.map(\.description))")
        #expect(
            expectOne(diags, at: "endpoints[1].clusters.WindowCovering.features[1]")
                == "unknown feature 'PositionAwareLiftt'; did you mean 'PositionAwareLift'?")
    }

    @Test("attributes outside the cluster's features are rejected")
    func attributeConformance() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [WindowCovering]
                clusters:
                  WindowCovering:
                    features: [Lift, PositionAwareLift]
                    currentPositionTiltPercent100ths: 100
                """))
        let message = expectOne(diags, at: "endpoints[1].clusters.WindowCovering.currentPositionTiltPercent100ths")
        #expect(
            message?.hasPrefix(
                "currentPositionTiltPercent100ths is not part of WindowCovering with features Lift (LF), PositionAwareLift (PA_LF)") == true
        )
    }

    @Test("identity attributes and global attributes are not set as cluster values")
    func reservedAttributes() {
        let diags = diagnostics(
            """
            identity: {serialNumber: X}
            endpoints:
              0:
                clusters:
                  BasicInformation: {vendorName: Acme, nodeLabel: Hall}
              1:
                deviceTypes: [OnOffLight]
                clusters:
                  OnOff: {featureMap: 1, clusterRevision: 9}
            """)
        #expect(
            expectOne(diags, at: "endpoints[0].clusters.BasicInformation.vendorName")
                == "set vendorName under identity.vendorName, not as a cluster value")
        // Issue #41: `featureMap` is the FeatureMap served as written (a clone's); the global
        // attribute's own name stays derived, and says which key serves it.
        #expect(!diags.contains { $0.path.description.hasSuffix("OnOff.featureMap") })
        #expect(expectOne(diags, at: "endpoints[1].clusters.OnOff.clusterRevision")?.contains("not set directly; give the served one as 'revision'") == true)
    }

    @Test("cloud-only clusters must exist on the endpoint and not be the node's plumbing")
    func cloudOnly() {
        let diags = diagnostics(
            device(
                """
                deviceTypes: [DimmableLight]
                cloudOnly: [LevelControl, WindowCovering, Descriptor, Nope]
                """))
        #expect(diags.count == 3, "\(diags.map(\.description))")
        #expect(
            expectOne(diags, at: "endpoints[1].cloudOnly[1]")
                == "WindowCovering is not a server cluster on endpoint 1; add it under clusters to make it cloud-only")
        #expect(
            expectOne(diags, at: "endpoints[1].cloudOnly[2]")
                == "Descriptor must stay reachable on the local network; it cannot be cloud-only")
        #expect(expectOne(diags, at: "endpoints[1].cloudOnly[3]")?.hasPrefix("unknown cluster 'Nope'") == true)
    }

    @Test("behaviour settings are range-checked")
    func behaviour() {
        let diags = diagnostics(
            device(
                "deviceTypes: [WindowCovering]",
                extra: """
                    behaviour:
                      windowCovering: {liftSpeed: 0, tiltSpeed: fast}
                      level: {defaultMoveRate: 255}
                      fan: {acceleration: 0, spin: 3}
                    """))
        #expect(expectOne(diags, at: "behaviour.windowCovering.liftSpeed") == "expected a number in 0.1...100 (percent per second), got 0")
        #expect(
            expectOne(diags, at: "behaviour.windowCovering.tiltSpeed")
                == "expected a number in 0.1...100 (percent per second), got \"fast\"")
        #expect(expectOne(diags, at: "behaviour.level.defaultMoveRate") == "expected an integer in 1...254, got 255")
        #expect(
            expectOne(diags, at: "behaviour.fan.acceleration") == "expected a number in 1...100 (percent of full speed per second), got 0")
        #expect(expectOne(diags, at: "behaviour.fan.spin") != nil)
    }

    @Test("a sensor reading's schedule or random walk is checked, and needs a thermometer")
    func reading() throws {
        let thermometer = "deviceTypes: [TemperatureSensor]"
        let walk = try #require(
            try memoryLoader([:]).loadDevice(
                yaml: device(thermometer, extra: "behaviour:\n  reading: {randomWalk: {every: 60, step: 0.2, min: 18, max: 24}}"),
                file: "t.yaml"))
        #expect(walk.behaviour.reading == .randomWalk(every: 60, step: 0.2, min: 18, max: 24))
        let schedule = try #require(
            try memoryLoader([:]).loadDevice(
                yaml: device(thermometer, extra: "behaviour:\n  reading: {schedule: {points: [[0, 19.5], [3600, 21]], repeatEvery: 7200}}"),
                file: "t.yaml"))
        #expect(
            schedule.behaviour.reading == .schedule(points: [.init(at: 0, value: 19.5), .init(at: 3600, value: 21)], repeatEvery: 7200))

        let both = diagnostics(
            device(
                thermometer, extra: "behaviour:\n  reading: {schedule: {points: [[0, 1]]}, randomWalk: {every: 1, step: 1, min: 0, max: 1}}"
            ))
        #expect(expectOne(both, at: "behaviour.reading") == "expected one of schedule or randomWalk, got both")
        let upsideDown = diagnostics(
            device(thermometer, extra: "behaviour:\n  reading: {randomWalk: {every: 60, step: 1, min: 25, max: 18}}"))
        #expect(expectOne(upsideDown, at: "behaviour.reading.randomWalk.max") == "expected at least min (25.0), got 18.0")
        let badPair = diagnostics(device(thermometer, extra: "behaviour:\n  reading: {schedule: {points: [[0, 19.5], [60]]}}"))
        #expect(expectOne(badPair, at: "behaviour.reading.schedule.points[1]") == "expected a [seconds, value] pair, got a list")
        let late = diagnostics(
            device(thermometer, extra: "behaviour:\n  reading: {schedule: {points: [[0, 1], [90, 2]], repeatEvery: 60}}"))
        #expect(
            expectOne(late, at: "behaviour.reading.schedule.repeatEvery") == "expected more than the last point's time (90.0 s), got 60.0")
        let light = diagnostics(
            device("deviceTypes: [OnOffLight]", extra: "behaviour:\n  reading: {randomWalk: {every: 60, step: 1, min: 0, max: 1}}"))
        #expect(
            expectOne(light, at: "behaviour.reading")
                == "expected a device with a measurement cluster (e.g. TemperatureMeasurement) for a reading; this one has none")

        // A device with several measurement clusters gives each its reading under `readings`.
        let monitor = """
            deviceTypes: [AirQualitySensor]
            clusters: {CarbonDioxideConcentrationMeasurement: {features: [NumericMeasurement]}, \
            Pm25ConcentrationMeasurement: {features: [NumericMeasurement]}}
            """
        let walkOf = "{randomWalk: {every: 30, step: 25, min: 450, max: 1100}}"
        let one = diagnostics(device(monitor, extra: "behaviour:\n  reading: \(walkOf)"))
        #expect(
            expectOne(one, at: "behaviour.reading")
                == "expected one measurement cluster for a reading, this device has CarbonDioxideConcentrationMeasurement, "
                + "Pm25ConcentrationMeasurement; use readings")
        let absent = diagnostics(device(monitor, extra: "behaviour:\n  readings: {Pm10ConcentrationMeasurement: \(walkOf)}"))
        #expect(
            expectOne(absent, at: "behaviour.readings.Pm10ConcentrationMeasurement")
                == "expected a measurement cluster of this device for a reading (CarbonDioxideConcentrationMeasurement, "
                + "Pm25ConcentrationMeasurement), got 'Pm10ConcentrationMeasurement'")
        let each = try #require(
            try memoryLoader([:]).loadDevice(
                yaml: device(monitor, extra: "behaviour:\n  readings: {CarbonDioxideConcentrationMeasurement: \(walkOf)}"),
                file: "t.yaml"))
        #expect(
            each.behaviour.readings == [
                Clusters.CarbonDioxideConcentrationMeasurement.id: .randomWalk(every: 30, step: 25, min: 450, max: 1100)
            ])
        #expect(each.behaviour.reading(for: Clusters.Pm25ConcentrationMeasurement.id) == nil)
    }

    @Test("a thermostat's room rates are range-checked and a home changes one of them")
    func room() throws {
        let thermostat = "deviceTypes: [Thermostat]\nclusters: {Thermostat: {features: [Heating]}}"
        let bad = diagnostics(device(thermostat, extra: "behaviour:\n  room: {every: 0, heatingRate: 0.5, leak: 3}"))
        #expect(expectOne(bad, at: "behaviour.room.every") == "expected a number in 1...3600 (seconds), got 0")
        #expect(expectOne(bad, at: "behaviour.room.leak")?.hasPrefix("unknown key 'leak'") == true)
        let home = """
            name: H
            structures:
              - name: S
                devices:
                  - name: T
                    profile: t.yaml
                    behaviour: {room: {coolingRate: 0.3}}
            """
        let loaded = try memoryLoader(["t.yaml": device(thermostat, extra: "behaviour:\n  room: {every: 60, heatingRate: 0.5}")])
            .loadHome(yaml: home, file: "h.yaml")
        let room = try #require(loaded.allDevices.first?.profile.behaviour.room)
        #expect(room == .init(every: 60, heatingRate: 0.5, coolingRate: 0.3, leakPercent: 2))
    }

    @Test("missing required keys")
    func missingKeys() {
        let diags = diagnostics("name: Nothing\n")
        #expect(diags.contains { $0.message == "missing required key 'identity'" })
        #expect(diags.contains { $0.message == "missing required key 'endpoints'" })
        let serial = diagnostics("identity: {vendorName: Acme}\nendpoints: {1: {deviceTypes: [OnOffLight]}}\n")
        #expect(expectOne(serial, at: "identity") == "missing required key 'serialNumber'")
    }

    @Test("every error in a file is reported, not just the first")
    func collectsAll() {
        let diags = diagnostics(
            """
            identity:
              serialNumber: X
              vendorID: 70000
            commissioning: {passcode: 11111111, discriminator: -1}
            behavior: {}
            endpoints:
              1:
                deviceTypes: [DimmableLight, Toaster]
                clusters:
                  LevelControl: {currentLevel: 300, onLevel: 0}
              2:
                deviceTypes: [WindowCovering]
                clusters:
                  WindowCovering: {features: [Lift, PositionAwareLift], currentPositionLiftPercent100ths: 10001}
            """)
        let paths = Set(diags.map(\.path.description))
        for expected in [
            "identity.vendorID", "commissioning.passcode", "commissioning.discriminator", "behavior",
            "endpoints[1].deviceTypes[1]", "endpoints[1].clusters.LevelControl.currentLevel",
            "endpoints[1].clusters.LevelControl.onLevel",
            "endpoints[2].clusters.WindowCovering.currentPositionLiftPercent100ths",
        ] {
            #expect(paths.contains(expected), "missing \(expected) in \(diags.map(\.description))")
        }
        #expect(diags.count == 8, "\(diags.map(\.description))")
    }

    @Test("a home's device references, overrides and names are checked")
    func homeErrors() {
        let light = try! shippedText("devices/dimmable-light.yaml")
        let files = ["homes/../devices/light.yaml": light, "devices/light.yaml": light, "homes/other-home.yaml": "structures: []\n"]
        let diags = diagnostics(
            """
            structures:
              - name: House
                rooms:
                  - name: Hall
                    devices:
                      - profile: ../devices/missing.yaml
                      - profile: ../devices/light.yaml
                        name: Lamp
                        values:
                          1:
                            LevelControl: {currentLevel: 300}
                          9:
                            OnOff: {onOff: true}
                      - profile: ../devices/light.yaml
                        name: Lamp
                      - profile: other-home.yaml
                        nmae: X
              - name: House
            """, file: "homes/test-home.yaml", others: files)
        #expect(diags.allSatisfy { $0.file == "homes/test-home.yaml" }, "\(diags.map(\.description))")
        #expect(
            expectOne(diags, at: "structures[0].rooms[0].devices[0].profile")
                == "device profile '../devices/missing.yaml' not found (looked for devices/missing.yaml)")
        #expect(
            expectOne(diags, at: "structures[0].rooms[0].devices[1].values[1].LevelControl.currentLevel")
                == "expected an integer in 1...254, got 300")
        #expect(
            expectOne(diags, at: "structures[0].rooms[0].devices[1].values[9]") == "the device has no endpoint 9 (its endpoints are 0, 1)")
        #expect(
            expectOne(diags, at: "structures[0].rooms[0].devices[2].name")?.hasPrefix(
                "another device in room \"Hall\" is already named \"Lamp\"") == true)
        #expect(expectOne(diags, at: "structures[0].rooms[0].devices[3].profile") == "'other-home.yaml' is a home, not a device profile")
        #expect(expectOne(diags, at: "structures[0].rooms[0].devices[3].nmae") == "unknown key 'nmae'; did you mean 'name'?")
        #expect(expectOne(diags, at: "structures[1].name") == "structure name \"House\" is already used by structures[0]")
    }

    @Test("errors inside a referenced device profile name that file")
    func homeReferencedProfileErrors() {
        let broken = device(
            """
            deviceTypes: [DimmableLight]
            clusters:
              LevelControl: {currentLevel: 999}
            """)
        let diags = diagnostics(
            """
            structures:
              - name: House
                devices:
                  - {profile: broken.yaml, name: A}
                  - {profile: broken.yaml, name: B}
            """, file: "home.yaml", others: ["broken.yaml": broken])
        #expect(diags.count == 1, "\(diags.map(\.description))")
        #expect(diags.first?.file == "broken.yaml")
        #expect(diags.first?.path.description == "endpoints[1].clusters.LevelControl.currentLevel")
    }

    @Test("a structure's device groups name devices of that structure that can join a group")
    func homeGroups() {
        let plug = try! shippedText("devices/on-off-plug.yaml")
        let blind = try! shippedText("devices/window-covering.yaml")
        let diags = diagnostics(
            """
            structures:
              - name: House
                groups:
                  - {name: Hall, devices: [A, B, Nobody, A]}
                  - {name: Hall, devices: [A]}
                  - {name: Empty, devices: []}
                  - {name: Typo, devcies: [A]}
                devices:
                  - {profile: plug.yaml, name: A}
                  - {profile: blind.yaml, name: B}
              - name: Cottage
                groups:
                  - {name: Elsewhere, devices: [A]}
            """, file: "home.yaml", others: ["plug.yaml": plug, "blind.yaml": blind])
        #expect(
            expectOne(diags, at: "structures[0].groups[0].devices[1]")
                == "device \"B\" cannot join a group: its profile (blind.yaml) has no Groups cluster (lights and plugs have one)")
        #expect(
            expectOne(diags, at: "structures[0].groups[0].devices[2]")
                == "no device named \"Nobody\" in structure \"House\" (its devices: \"A\", \"B\")")
        #expect(expectOne(diags, at: "structures[0].groups[0].devices[3]") == "device \"A\" is already in this group")
        #expect(expectOne(diags, at: "structures[0].groups[1].name") == "group name \"Hall\" is already used by structures[0].groups[0]")
        #expect(expectOne(diags, at: "structures[0].groups[2].devices") == "expected at least one device name")
        #expect(expectOne(diags, at: "structures[0].groups[3].devcies") == "unknown key 'devcies'; did you mean 'devices'?")
        #expect(
            expectOne(diags, at: "structures[1].groups[0].devices[0]")
                == "no device named \"A\" in structure \"Cottage\" (it has none)")
    }

    @Test("a structure's switch bindings name a light switch and lights of that structure")
    func homeBindings() {
        let plug = try! shippedText("devices/on-off-plug.yaml")
        let blind = try! shippedText("devices/window-covering.yaml")
        let light = try! shippedText("devices/on-off-light.yaml")
        let wallSwitch = try! shippedText("devices/on-off-light-switch.yaml")
        let files = ["plug.yaml": plug, "blind.yaml": blind, "light.yaml": light, "switch.yaml": wallSwitch]
        let home = """
            structures:
              - name: House
                bindings:
                  - {switch: S, lights: [A, B, Nobody, A]}
                  - {switch: S, lights: [A]}
                  - {switch: A, lights: [L]}
                  - {switch: T, lights: []}
                  - {swich: S, lights: [A]}
                devices:
                  - {profile: plug.yaml, name: A}
                  - {profile: blind.yaml, name: B}
                  - {profile: light.yaml, name: L}
                  - {profile: switch.yaml, name: S}
                  - {profile: switch.yaml, name: T}
            """
        let diags = diagnostics(home, file: "home.yaml", others: files)
        #expect(
            expectOne(diags, at: "structures[0].bindings[0].lights[1]")
                == "device \"B\" cannot be switched: its profile (blind.yaml) has no light or plug endpoint (OnOff and Groups clusters)")
        #expect(
            expectOne(diags, at: "structures[0].bindings[0].lights[2]")
                == "no device named \"Nobody\" in structure \"House\" (its devices: \"A\", \"B\", \"L\", \"S\", \"T\")")
        #expect(expectOne(diags, at: "structures[0].bindings[0].lights[3]") == "device \"A\" is already in this binding")
        #expect(
            expectOne(diags, at: "structures[0].bindings[1].switch")
                == "switch \"S\" is already bound at structures[0].bindings[0].switch; list all its lights there")
        #expect(
            expectOne(diags, at: "structures[0].bindings[2].switch")
                == "device \"A\" cannot be bound: its profile (plug.yaml) has no Binding cluster (an On/Off Light Switch or Dimmer Switch has one)")
        #expect(expectOne(diags, at: "structures[0].bindings[3].lights") == "expected at least one device name")
        #expect(expectOne(diags, at: "structures[0].bindings[4].swich") == "unknown key 'swich'; did you mean 'switch'?")
    }

    @Test("a home with the same serial number twice")
    func duplicateSerials() {
        let plug = try! shippedText("devices/on-off-plug.yaml")
        let diags = diagnostics(
            """
            structures:
              - name: House
                devices:
                  - {profile: plug.yaml, name: A, identity: {serialNumber: SAME}}
                  - {profile: plug.yaml, name: B, identity: {serialNumber: SAME}}
            """, file: "home.yaml", others: ["plug.yaml": plug])
        #expect(
            expectOne(diags, at: "structures[0].devices[1].identity.serialNumber")
                == "serial number \"SAME\" is also used by structures[0].devices[0]; each device needs its own")
    }

    @Test("kind detection: explicit kind, structures, endpoints")
    func kinds() {
        let loader = memoryLoader([:])
        #expect(loader.load(yaml: "kind: home\nstructures: [{name: A}]\n", file: "h.yaml").kind == .home)
        #expect(loader.load(yaml: "structures: [{name: A}]\n", file: "h.yaml").profile != nil)
        #expect(loader.load(yaml: device("deviceTypes: [OnOffLight]"), file: "d.yaml").kind == .device)
        let typo = loader.load(yaml: "structurs: [{name: A}]\n", file: "h.yaml")
        #expect(typo.kind == .home)
        #expect(typo.diagnostics.contains { $0.message == "unknown key 'structurs'; did you mean 'structures'?" })
        let wrongKind = loader.load(yaml: "kind: device\nstructures: []\n", file: "h.yaml")
        #expect(wrongKind.kind == .device)
        #expect(wrongKind.diagnostics.contains { $0.path.description == "structures" })
    }

    @Test("a missing file is one clear error")
    func missingFile() {
        let result = memoryLoader([:]).load(file: "nope.yaml")
        #expect(result.diagnostics.map(\.description) == ["nope.yaml: file not found"])
    }
}
