import Foundation
import MatterDevice
import MatterModel
import MatterTLV

// Fixtures: the published connectedhomeip test PAA and CD-signing credentials (test
// only), and the node layouts of the simulated devices the tests commission.

/// The connectedhomeip test PAA / CD signing authority (test only).
package let testAuthority = AttestationAuthority.connectedhomeipTest

/// A PAA trust-store directory holding the test PAA and CD signing certificates.
package func makeTrustStoreDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("paa-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    try testAuthority.paaCertificatePEM.write(to: dir.appendingPathComponent("Chip-Test-PAA-Cert.pem"), atomically: true, encoding: .utf8)
    try testAuthority.cdSigningCertificatePEM.write(
        to: dir.appendingPathComponent("Chip-Test-CD-Signing-Cert.pem"), atomically: true, encoding: .utf8)
    return dir
}

package func temporaryDirectory() throws -> URL {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("homeapi-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    return dir
}

package enum Fixture {
    package static let identify = ClusterID(0x0003)
    package static let onOff = ClusterID(0x0006)
    package static let levelControl = ClusterID(0x0008)
    package static let basicInformation = ClusterID(0x0028)
    package static let windowCovering = ClusterID(0x0102)

    /// Endpoint 1's OnOff, CurrentLevel and TargetPositionLiftPercent100ths.
    package static let onOffPath = AttributePath(endpoint: 1, cluster: onOff, attribute: AttributeID(0))
    package static let currentLevelPath = AttributePath(endpoint: 1, cluster: levelControl, attribute: AttributeID(0))
    package static let targetLiftPath = AttributePath(endpoint: 1, cluster: windowCovering, attribute: AttributeID(0x000B))

    package static func deviceType(_ id: UInt32) -> DeviceTypeInstance {
        DeviceTypeInstance(id: DeviceTypeID(id), revision: MatterModel.standard.deviceType(DeviceTypeID(id))?.revision ?? 1)
    }

    package static func root(vendor: String, product: String, serial: String) -> EndpointDescription {
        EndpointDescription(
            number: 0, deviceTypes: [deviceType(0x0016)],
            serverClusters: [
                ClusterInstanceDescription(
                    id: basicInformation,
                    attributes: [
                        AttributeID(0x0001): .utf8(vendor),
                        AttributeID(0x0002): .unsigned(0xFFF1),
                        AttributeID(0x0003): .utf8(product),
                        AttributeID(0x0004): .unsigned(0x8001),
                        AttributeID(0x000F): .utf8(serial),
                    ])
            ] + ClusterInstanceDescription.rootNodeCommissioningClusters)
    }

    package static func onOffLight(serial: String = "LIGHT-1") -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: "On/Off Bulb", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(0x0100)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: onOff, features: ["LT"], attributes: [AttributeID(0): .bool(false)]),
                ]),
        ])
    }

    package static func dimmableLight(serial: String = "DIM-1") -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: "Dimmable Bulb", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(0x0101)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: onOff, features: ["LT"], attributes: [AttributeID(0): .bool(false)]),
                    ClusterInstanceDescription(id: levelControl, features: ["OO", "LT"], attributes: [AttributeID(0): .unsigned(100)]),
                ]),
        ])
    }

    package static let colorControl = ClusterID(0x0300)

    /// A colour light, on at full level: Color Temperature Light (0x010C, CT only) or Extended
    /// Color Light (0x010D, every colour space), 153 to 500 mireds, with Level Control's
    /// CoupleColorTempToLevel option set.
    package static func colorLight(extended: Bool, serial: String) -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: extended ? "Color Bulb" : "Tunable White Bulb", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(extended ? 0x010D : 0x010C)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: onOff, features: ["LT"], attributes: [AttributeID(0): .bool(true)]),
                    ClusterInstanceDescription(
                        id: levelControl, features: ["OO", "LT"],
                        attributes: [AttributeID(0): .unsigned(254), AttributeID(0x000F): .unsigned(0x02)]),
                    ClusterInstanceDescription(
                        id: colorControl, features: extended ? ["HS", "EHUE", "CL", "XY", "CT"] : ["CT"],
                        attributes: [
                            AttributeID(0x0007): .unsigned(370), AttributeID(0x400B): .unsigned(153), AttributeID(0x400C): .unsigned(500),
                            AttributeID(0x400D): .unsigned(153),
                        ]),
                ]),
        ])
    }

    /// A light or plug with the Groups cluster its device type requires (device groups).
    package static func groupable(_ deviceType: UInt32, serial: String) -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: deviceType == 0x010A ? "Smart Plug" : "On/Off Bulb", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [Fixture.deviceType(deviceType)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: ClusterID(0x0004)),
                    ClusterInstanceDescription(
                        id: onOff, features: deviceType == 0x010A ? [] : ["LT"], attributes: [AttributeID(0): .bool(false)]),
                ]),
        ])
    }

    package static func plug(serial: String = "PLUG-1") -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: "Smart Plug", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(0x010A)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: onOff, attributes: [AttributeID(0): .bool(false)]),
                ]),
        ])
    }

    package static let booleanState = ClusterID(0x0045)
    package static let stateValuePath = AttributePath(endpoint: 1, cluster: booleanState, attribute: AttributeID(0))

    /// A device of one application cluster on endpoint 1 (with Identify): the sensors, the
    /// switch and the lock below, and any other single-cluster device a test needs.
    package static func singleCluster(
        _ deviceTypeID: UInt32, _ cluster: ClusterID, features: Set<String> = [], attributes: [AttributeID: TLVValue] = [:],
        product: String, serial: String
    ) -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: product, serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(deviceTypeID)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(id: cluster, features: features, attributes: attributes),
                ]),
        ])
    }

    /// A Contact Sensor, closed (in contact).
    package static func contactSensor(serial: String = "CONTACT-1") -> NodeDescription {
        singleCluster(0x0015, booleanState, attributes: [AttributeID(0): .bool(true)], product: "Door Contact", serial: serial)
    }

    package static let switchCluster = ClusterID(0x003B)

    /// A Generic Switch: momentary, with release, long press and double press.
    package static func genericSwitch(serial: String = "SWITCH-1") -> NodeDescription {
        singleCluster(0x000F, switchCluster, features: ["MS", "MSR", "MSL", "MSM"], product: "Wall Button", serial: serial)
    }

    package static let doorLock = ClusterID(0x0101)

    /// A Door Lock with PIN credentials, users and PINs for remote operation; locked.
    package static func doorLock(serial: String = "LOCK-1") -> NodeDescription {
        singleCluster(0x000A, doorLock, features: ["PIN", "USR", "COTA"], product: "Front Door Lock", serial: serial)
    }

    package static func windowCovering(serial: String = "BLIND-1") -> NodeDescription {
        NodeDescription(endpoints: [
            root(vendor: "Acme", product: "Roller Blind", serial: serial),
            EndpointDescription(
                number: 1, deviceTypes: [deviceType(0x0202)],
                serverClusters: [
                    ClusterInstanceDescription(id: identify),
                    ClusterInstanceDescription(
                        id: windowCovering, features: ["LF", "PA_LF"], attributes: [:],
                        behavior: ClusterBehavior(liftSpeed: .percent100thsPerSecond(5000))),
                ]),
        ])
    }
}
