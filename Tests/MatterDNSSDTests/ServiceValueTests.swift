import Testing

@testable import MatterDNSSD

@Suite struct ServiceValueTests {
    @Test(arguments: ["_matterc._udp", "_matter._tcp", "_http._tcp", "_a-b._udp", "_abcdefghijklmno._udp"])
    func acceptsServiceTypes(_ type: String) {
        #expect(throws: Never.self) { try DNSSDService(instanceName: "x", type: type, port: 1).validate() }
    }

    @Test(arguments: [
        "", "_matterc", "matterc._udp", "_matterc._sctp", "_._udp", "_abcdefghijklmnop._udp", "_a b._udp",
        "_L1._sub._matterc._udp",
    ])
    func rejectsServiceTypes(_ type: String) {
        #expect(throws: DNSSDError.self) { try DNSSDService(instanceName: "x", type: type, port: 1).validate() }
    }

    @Test func instanceNamesAreOneTo63Bytes() {
        let type = "_matterc._udp"
        #expect(throws: DNSSDError.self) { try DNSSDService(instanceName: "", type: type, port: 1).validate() }
        let sixtyThree = String(repeating: "é", count: 31) + "x"
        #expect(sixtyThree.utf8.count == 63)
        #expect(throws: Never.self) { try DNSSDService(instanceName: sixtyThree, type: type, port: 1).validate() }
        #expect(throws: DNSSDError.self) {
            try DNSSDService(instanceName: sixtyThree + "x", type: type, port: 1).validate()
        }
        // Dots and spaces are fine inside an instance label.
        #expect(throws: Never.self) { try DNSSDService(instanceName: "Living room. Lamp #2", type: type, port: 1).validate() }
    }

    @Test func subtypesAreSingleLabelsListedOnce() {
        func service(_ subtypes: [String]) -> DNSSDService {
            DNSSDService(instanceName: "x", type: "_matterc._udp", port: 1, subtypes: subtypes)
        }
        #expect(throws: Never.self) { try service(["_L3840", "_S15", "_CM"]).validate() }
        #expect(throws: DNSSDError.self) { try service(["_L3840._sub"]).validate() }
        #expect(throws: DNSSDError.self) { try service(["_L 1"]).validate() }
        #expect(throws: DNSSDError.self) { try service([""]).validate() }
        #expect(throws: DNSSDError.self) { try service(["_CM", "_cm"]).validate() }
        #expect(service(["_L3840"]).subtypeServiceTypes == ["_L3840._sub._matterc._udp"])
    }

    @Test func domainsAndHostNamesAreDNSNames() {
        var service = DNSSDService(instanceName: "x", type: "_matter._tcp", port: 1, domain: "local")
        #expect(throws: Never.self) { try service.validate() }
        service.hostName = "node-1.local."
        #expect(throws: Never.self) { try service.validate() }
        service.hostName = "node..local"
        #expect(throws: DNSSDError.self) { try service.validate() }
        service.hostName = nil
        service.domain = "lo cal"
        #expect(throws: DNSSDError.self) { try service.validate() }
    }

    @Test func invalidTXTFailsServiceValidation() {
        let service = DNSSDService(instanceName: "x", type: "_matter._tcp", port: 1, txt: DNSSDTXTRecord(["": "1"]))
        #expect(throws: DNSSDError.self) { try service.validate() }
    }
}

@Suite struct AddressTests {
    @Test func formatsAndParsesAddresses() throws {
        let v4 = try #require(DNSSDAddress(family: .ipv4, bytes: [10, 77, 0, 2], interfaceIndex: 2))
        #expect(v4.text == "10.77.0.2")
        #expect(v4.description == "10.77.0.2")
        let v6 = try #require(DNSSDAddress("fe80::1:2", interfaceIndex: 3))
        #expect(v6.family == .ipv6)
        #expect(v6.bytes.count == 16)
        #expect(v6.isLinkLocal)
        #expect(v6.text == "fe80::1:2")
        #expect(v6.description == "fe80::1:2%3")
        let global = try #require(DNSSDAddress("2001:db8::5", interfaceIndex: 3))
        #expect(!global.isLinkLocal)
        #expect(global.description == "2001:db8::5")
        #expect(DNSSDAddress("10.77.0.2", interfaceIndex: 1) == DNSSDAddress(family: .ipv4, bytes: [10, 77, 0, 2], interfaceIndex: 1))
    }

    @Test func rejectsWrongLengthsAndText() {
        #expect(DNSSDAddress(family: .ipv4, bytes: [1, 2, 3], interfaceIndex: 1) == nil)
        #expect(DNSSDAddress(family: .ipv6, bytes: [UInt8](repeating: 0, count: 4), interfaceIndex: 1) == nil)
        #expect(DNSSDAddress("10.77.0.256", interfaceIndex: 1) == nil)
        #expect(DNSSDAddress("host.local", interfaceIndex: 1) == nil)
    }

    @Test func sortsByInterfaceThenFamilyThenBytes() throws {
        let a = try #require(DNSSDAddress("fe80::1", interfaceIndex: 2))
        let b = try #require(DNSSDAddress("10.0.0.9", interfaceIndex: 2))
        let c = try #require(DNSSDAddress("10.0.0.10", interfaceIndex: 2))
        let d = try #require(DNSSDAddress("10.0.0.1", interfaceIndex: 3))
        #expect([d, a, b, c].sorted() == [b, c, a, d])
    }
}
