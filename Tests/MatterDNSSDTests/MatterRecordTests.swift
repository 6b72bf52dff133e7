import Testing

@testable import MatterDNSSD

@Suite struct MatterCommissionableRecordTests {
    static let light = MatterCommissionableRecord(
        longDiscriminator: 3840, vendorID: 65521, productID: 32768, deviceType: 0x0101,
        deviceName: "Kitchen Light", commissioningMode: .basic, sessionIdleInterval: 500,
        sessionActiveInterval: 300, tcpSupport: 0, pairingHint: 33, pairingInstruction: "Press the button",
        instanceID: 0x00AB_CDEF_0123_4567)

    @Test func instanceNameIs16UppercaseHexDigits() {
        #expect(Self.light.instanceName == "00ABCDEF01234567")
        let random = MatterCommissionableRecord(longDiscriminator: 1)
        #expect(random.instanceName.utf8.count == 16)
        #expect(random.instanceName.allSatisfy { $0.isHexDigit && !$0.isLowercase })
    }

    @Test func randomInstanceIDsDiffer() {
        let names = Set((0..<8).map { _ in MatterCommissionableRecord(longDiscriminator: 1).instanceName })
        #expect(names.count == 8)
    }

    @Test func subtypesFollowTheSpecification() {
        #expect(Self.light.subtypes == ["_L3840", "_S15", "_V65521", "_T257", "_CM"])
        var closed = Self.light
        closed.commissioningMode = .disabled
        closed.vendorID = nil
        closed.productID = nil
        closed.deviceType = nil
        closed.longDiscriminator = 0x0A5
        #expect(closed.subtypes == ["_L165", "_S0"])
        #expect(closed.shortDiscriminator == 0)
    }

    @Test func txtCarriesTheNodeState() throws {
        let txt = Self.light.txt
        #expect(txt.keys == ["D", "CM", "VP", "DT", "DN", "SII", "SAI", "T", "PH", "PI"])
        #expect(txt["D"] == "3840")
        #expect(txt["CM"] == "1")
        #expect(txt["VP"] == "65521+32768")
        #expect(txt["DT"] == "257")
        #expect(txt["DN"] == "Kitchen Light")
        #expect(txt["SII"] == "500")
        #expect(txt["SAI"] == "300")
        #expect(txt["T"] == "0")
        #expect(txt["PH"] == "33")
        #expect(txt["PI"] == "Press the button")

        var vendorOnly = Self.light
        vendorOnly.productID = nil
        #expect(vendorOnly.txt["VP"] == "65521")
        var minimal = MatterCommissionableRecord(longDiscriminator: 7, commissioningMode: .enhanced)
        minimal.rotatingDeviceID = [0x0A, 0xFF, 0x00]
        #expect(minimal.txt.keys == ["D", "CM", "RI"])
        #expect(minimal.txt["RI"] == "0AFF00")
        #expect(minimal.txt["CM"] == "2")
    }

    @Test func serviceIsMattercOnPort5540() throws {
        let service = try Self.light.service()
        #expect(service.type == "_matterc._udp")
        #expect(service.instanceName == "00ABCDEF01234567")
        #expect(service.port == 5540)
        #expect(service.subtypeServiceTypes.first == "_L3840._sub._matterc._udp")
        #expect(throws: Never.self) { try service.validate() }
    }

    @Test func rejectsValuesOutsideTheSpecification() {
        var record = Self.light
        record.longDiscriminator = 4096
        #expect(throws: DNSSDError.self) { try record.service() }
        record = Self.light
        record.vendorID = nil
        #expect(throws: DNSSDError.self) { try record.validate() }
        record = Self.light
        record.deviceName = String(repeating: "x", count: 33)
        #expect(throws: DNSSDError.self) { try record.validate() }
        record.deviceName = String(repeating: "x", count: 32)
        #expect(throws: Never.self) { try record.validate() }
        record = Self.light
        record.pairingInstruction = String(repeating: "p", count: 129)
        #expect(throws: DNSSDError.self) { try record.validate() }
        record = Self.light
        record.sessionIdleInterval = 3_600_001
        #expect(throws: DNSSDError.self) { try record.validate() }
        record = Self.light
        record.sessionActiveInterval = 3_600_000
        #expect(throws: Never.self) { try record.validate() }
        record.rotatingDeviceID = [UInt8](repeating: 1, count: 51)
        #expect(throws: DNSSDError.self) { try record.validate() }
    }

    @Test func decodesWhatItEncodes() throws {
        var record = Self.light
        record.sessionActiveThreshold = 4000
        record.rotatingDeviceID = [1, 2, 3]
        let service = try record.service()
        let resolved = DNSSDResolvedService(
            instanceName: service.instanceName, type: service.type, domain: "local", hostName: "node.local",
            port: service.port, addresses: [], txt: DNSSDTXTRecord(decoding: service.txt.encoded()))
        #expect(try MatterCommissionableRecord(resolved: resolved) == record)
    }

    @Test func decodesARenamedInstance() throws {
        let decoded = try MatterCommissionableRecord(
            instanceName: "00ABCDEF01234567 #2", txt: DNSSDTXTRecord(["D": "12"]))
        #expect(decoded.instanceID == 0x00AB_CDEF_0123_4567)
        #expect(decoded.longDiscriminator == 12)
        #expect(decoded.commissioningMode == .disabled)
        #expect(decoded.vendorID == nil)
    }

    @Test(arguments: [
        ("00ABCDEF01234567", ["CM": "1"]),  // no D
        ("00ABCDEF01234567", ["D": "4096"]),
        ("00ABCDEF01234567", ["D": "-1"]),
        ("00ABCDEF01234567", ["D": "+12"]),
        ("00ABCDEF01234567", ["D": "0x10"]),
        ("00ABCDEF01234567", ["D": "99999999999999999999999"]),
        ("00ABCDEF01234567", ["D": "1", "CM": "3"]),
        ("00ABCDEF01234567", ["D": "1", "VP": "65521+"]),
        ("00ABCDEF01234567", ["D": "1", "VP": "+5"]),
        ("00ABCDEF01234567", ["D": "1", "VP": "70000"]),
        ("00ABCDEF01234567", ["D": "1", "SII": "3600001"]),
        ("00ABCDEF01234567", ["D": "1", "SAT": "65536"]),
        ("00ABCDEF01234567", ["D": "1", "T": "256"]),
        ("00ABCDEF01234567", ["D": "1", "RI": "ABC"]),
        ("00ABCDEF01234567", ["D": "1", "RI": "ZZ"]),
        ("00ABCDEF01234567", ["D": "1", "DN": String(repeating: "n", count: 33)]),
        ("00ABCDEF0123456", ["D": "1"]),
        ("00ABCDEF0123456G", ["D": "1"]),
        ("00ABCDEF01234567X", ["D": "1"]),
        ("", ["D": "1"]),
    ])
    func rejectsMalformedAdvertisements(_ name: String, _ pairs: [String: String]) {
        var txt = DNSSDTXTRecord()
        for (key, value) in pairs.sorted(by: { $0.key < $1.key }) { txt[key] = value }
        #expect(throws: DNSSDError.self) { try MatterCommissionableRecord(instanceName: name, txt: txt) }
    }

    @Test func rejectsTXTValuesThatAreNotUTF8() {
        let txt = DNSSDTXTRecord(decoding: [Array("D=1".utf8), [0x44, 0x4E, 0x3D, 0xFF]])
        #expect(throws: DNSSDError.self) { try MatterCommissionableRecord(instanceName: "0000000000000001", txt: txt) }
    }
}

@Suite struct MatterOperationalRecordTests {
    static let node = MatterOperationalRecord(
        compressedFabricID: 0x87E1_B004_E235_A130, nodeID: 0x8FC7_7724_01CD_0696, sessionIdleInterval: 5000,
        sessionActiveInterval: 300, sessionActiveThreshold: 4000, tcpSupport: 6)

    @Test func instanceNameIsFabricDashNodeInUppercaseHex() {
        #expect(Self.node.instanceName == "87E1B004E235A130-8FC7772401CD0696")
        let small = MatterOperationalRecord(compressedFabricID: 1, nodeID: 0x2A)
        #expect(small.instanceName == "0000000000000001-000000000000002A")
    }

    @Test func serviceIsMatterTCPWithTheFabricSubtype() throws {
        let service = try Self.node.service()
        #expect(service.type == "_matter._tcp")
        #expect(service.subtypes == ["_I87E1B004E235A130"])
        #expect(service.subtypeServiceTypes == ["_I87E1B004E235A130._sub._matter._tcp"])
        #expect(service.txt.keys == ["SII", "SAI", "SAT", "T"])
        #expect(service.txt["T"] == "6")
        #expect(service.port == 5540)
        #expect(MatterOperationalRecord(compressedFabricID: 1, nodeID: 2).txt.isEmpty)
    }

    @Test func parsesInstanceNames() throws {
        let ids = try MatterOperationalRecord.parseInstanceName("87e1b004e235a130-8FC7772401CD0696")
        #expect(ids.compressedFabricID == 0x87E1_B004_E235_A130)
        #expect(ids.nodeID == 0x8FC7_7724_01CD_0696)
        for bad in [
            "", "87E1B004E235A130", "87E1B004E235A130-8FC7772401CD069", "87E1B004E235A130_8FC7772401CD0696",
            "87E1B004E235A13G-8FC7772401CD0696", "87E1B004E235A130-8FC7772401CD0696 #2", "+7E1B004E235A130-8FC7772401CD0696",
        ] {
            #expect(throws: DNSSDError.self, "\(bad)") { try MatterOperationalRecord.parseInstanceName(bad) }
        }
    }

    @Test func decodesWhatItEncodes() throws {
        let service = try Self.node.service()
        let decoded = try MatterOperationalRecord(
            instanceName: service.instanceName, txt: DNSSDTXTRecord(decoding: service.txt.encoded()), port: 5540)
        #expect(decoded == Self.node)
        #expect(throws: DNSSDError.self) {
            try MatterOperationalRecord(instanceName: service.instanceName, txt: DNSSDTXTRecord(["SAI": "x"]))
        }
    }

    @Test func rejectsIntervalsAboveOneHour() {
        var node = Self.node
        node.sessionActiveInterval = 3_600_001
        #expect(throws: DNSSDError.self) { try node.service() }
    }
}

/// A node's own host (Core spec 4.3.1, 4.3.2): the name is a link-layer address in capital hex.
@Suite struct MatterHostTests {
    let address = DNSSDAddress("fe80::1", interfaceIndex: 2)!

    @Test func theNameIsTheLinkLayerAddressInCapitalHex() throws {
        let mac = try #require(MatterHost(linkLayerAddress: [0xB7, 0x5A, 0xFB, 0x45, 0x8E, 0xCD], addresses: [address]))
        #expect(mac.name == "B75AFB458ECD.local")
        let eui64 = try #require(MatterHost(linkLayerAddress: [0, 1, 2, 3, 4, 5, 6, 0xAB], addresses: []))
        #expect(eui64.name == "00010203040506AB.local")
        #expect(MatterHost(linkLayerAddress: [1, 2, 3], addresses: []) == nil)
    }

    @Test func simulatedAddressesAreLocallyAdministeredUnicastStableAndApart() {
        let seeds = (0..<200).map { "SIM-OO-\($0)/5540" }
        let macs = seeds.map(MatterHost.simulatedMACAddress)
        #expect(macs.allSatisfy { $0.count == 6 && $0[0] & 0x02 == 0x02 && $0[0] & 0x01 == 0 })
        #expect(Set(macs).count == 200)
        #expect(MatterHost.simulatedMACAddress(seed: seeds[0]) == macs[0])
        #expect(MatterHost.simulatedMACAddress(seed: "SIM-OO-0/5541") != macs[0])
    }

    @Test func theServiceCarriesTheHostAndItsAddresses() throws {
        let host = try #require(MatterHost(linkLayerAddress: [2, 0, 0, 0, 0, 1], addresses: [address]))
        let service = try MatterOperationalRecord(compressedFabricID: 1, nodeID: 2).service(host: host)
        #expect(service.hostName == "020000000001.local")
        #expect(service.hostAddresses == [address])
        var orphan = service
        orphan.hostName = nil
        #expect(throws: DNSSDError.self) { try orphan.validate() }
    }
}

/// The shared PTRs of an unprobed (operational) service: service type enumeration (RFC 6763 §9)
/// lists the `_I<fabric>` subtype too, where TC-SC-4.3 step 10 looks for it.
@Suite struct SharedPointerTests {
    @Test func enumerationListsTheTypeAndEachSubtype() throws {
        let service = try MatterOperationalRecord(compressedFabricID: 0x2906_C908_D115_D362, nodeID: 1).service()
        let pointers = PublisherEngine.sharedPointers(service, instance: service.instanceName, domain: "local")
        let enumerated = pointers.filter { $0.name == "_services._dns-sd._udp.local" }.map(\.target)
        #expect(
            enumerated == [
                DNSWireName.encode(labels: ["_matter", "_tcp", "local"]),
                DNSWireName.encode(labels: ["_I2906C908D115D362", "_sub", "_matter", "_tcp", "local"]),
            ])
        let instance = DNSWireName.encode(labels: [service.instanceName, "_matter", "_tcp", "local"])
        #expect(pointers.filter { $0.target == instance }.map(\.name) == ["_matter._tcp.local", "_I2906C908D115D362._sub._matter._tcp.local"])
    }

    /// A commissionable node is published unprobed too (a type ANY probe per name made every
    /// daemon on the link walk its whole cache: issue #43), with the records Avahi's own
    /// service call gave it: enumeration lists `_matterc._udp` alone, and each of its five
    /// subtypes points at the instance.
    @Test func aCommissionableNodeIsUnprobedAndEnumeratesOnlyItsType() throws {
        let service = try MatterCommissionableRecord(
            longDiscriminator: 3840, vendorID: 65521, productID: 32770, deviceType: 257, commissioningMode: .basic
        ).service()
        #expect(!service.probe)
        let pointers = PublisherEngine.sharedPointers(service, instance: service.instanceName, domain: "local")
        #expect(pointers.filter { $0.name == "_services._dns-sd._udp.local" }.map(\.target) == [DNSWireName.encode(labels: ["_matterc", "_udp", "local"])])
        let instance = DNSWireName.encode(labels: [service.instanceName, "_matterc", "_udp", "local"])
        #expect(
            pointers.filter { $0.target == instance }.map(\.name) == [
                "_matterc._udp.local", "_L3840._sub._matterc._udp.local", "_S15._sub._matterc._udp.local",
                "_V65521._sub._matterc._udp.local", "_T257._sub._matterc._udp.local", "_CM._sub._matterc._udp.local",
            ])
    }
}
