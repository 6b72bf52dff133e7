// `matter-sim describe --json`: what a controller should find on each node of a profile or a
// home, for checks written in other languages (scripts/ohf-check.sh compares it with what
// Home Assistant's Matter server reports after its interview).
import DeviceProfile
import Foundation
import MatterModel
import MatterDevice
import MatterProtocol

struct DescriptionJSON: Encodable {
    struct Device: Encodable {
        var name: String
        /// Index in the home file (what `run --home-device` takes); nil for a device profile.
        var homeIndex: Int?
        var source: String
        var vendorName: String
        var vendorID: UInt16
        var productName: String
        var productID: UInt16
        var serialNumber: String
        var passcode: UInt32
        var discriminator: UInt16
        var manualCode: String
        var qrCode: String
        var endpoints: [Endpoint]
    }

    struct Endpoint: Encodable {
        var number: UInt16
        var deviceTypes: [UInt32]
        /// What a controller on the LAN finds: the device types its clusters conform to, and
        /// the server clusters (cloud-only ones left out).
        var serverClusters: [UInt32]
        /// Served only through the cloud relay.
        var cloudOnlyClusters: [UInt32]
    }

    var devices: [Device]

    init(_ profile: LoadedProfile, model: MatterModel) {
        switch profile {
        case .device(let device):
            devices = [Self.device(device, homeIndex: nil, model: model)]
        case .home(let home):
            devices = home.allDevices.enumerated().map { Self.device($0.element.profile, homeIndex: $0.offset, model: model) }
        }
    }

    static func device(_ device: ResolvedDeviceProfile, homeIndex: Int?, model: MatterModel) -> Device {
        let payload = OnboardingPayload(
            vendorID: device.identity.vendorID, productID: device.identity.productID,
            discriminator: device.commissioning.discriminator,
            passcode: device.commissioning.passcode)
        let node = device.nodeDescription(model: model)
        let endpoints = node.endpoints.map { endpoint in
            let cloudOnly = Set(device.endpoint(endpoint.number)?.cloudOnlyClusters ?? [])
            let served = Set(endpoint.serverClusters.map(\.id).filter { !cloudOnly.contains($0) })
            // Over the LAN an endpoint claims only device types its LAN clusters conform to.
            let lanTypes = endpoint.deviceTypes.map { type in
                (cloudOnly.isEmpty ? nil : model.standIn(for: type.id, servedClusters: served))?.id ?? type.id
            }
            return Endpoint(
                number: endpoint.number,
                deviceTypes: lanTypes.map(\.rawValue),
                serverClusters: served.map(\.rawValue).sorted(),
                cloudOnlyClusters: cloudOnly.map(\.rawValue).sorted())
        }
        return Device(
            name: device.name, homeIndex: homeIndex, source: device.source,
            vendorName: device.identity.vendorName, vendorID: device.identity.vendorID,
            productName: device.identity.productName, productID: device.identity.productID,
            serialNumber: device.identity.serialNumber,
            passcode: device.commissioning.passcode, discriminator: device.commissioning.discriminator,
            manualCode: (try? payload.manualPairingCode()) ?? "", qrCode: (try? payload.qrCode()) ?? "",
            endpoints: endpoints)
    }

    func rendered() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }
}
