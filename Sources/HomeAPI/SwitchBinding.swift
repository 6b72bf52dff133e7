import MatterController
import MatterModel

// A light switch bound to a light, as Google Home does when a person pairs them (issue #40):
// the controller writes the light's ACL (the switch may Operate it) and the switch's Binding;
// the switch then sends its presses to the light itself, over its own CASE session.

/// The device types whose press goes out through a Binding, with the clusters they send.
let bindingSwitchClusters: [UInt32: [ClusterID]] = [
    DeviceTypes.onOffLightSwitch.rawValue: [Clusters.OnOff.id],
    DeviceTypes.dimmerSwitch.rawValue: [Clusters.OnOff.id, Clusters.LevelControl.id],
]

extension HomeDevice {
    /// Binds this light switch (an On/Off Light Switch or a Dimmer Switch) to a light or plug:
    /// a press at the switch then turns it on or off (and a dimmer's dial sets its level).
    public func bind(to light: HomeDevice) async throws(HomeError) {
        try await homeCall { try await types.engine.bindSwitch(id, to: light.id) }
    }
}

extension HomeEngine {
    func bindSwitch(_ switchID: String, to lightID: String) async throws {
        guard let switchDevice = graph.devices[switchID] else { throw HomeError.notFound("no device with ID \(switchID)") }
        guard let light = graph.devices[lightID] else { throw HomeError.notFound("no device with ID \(lightID)") }
        let switching = switchDevice.endpoints.lazy.compactMap { endpoint in
            endpoint.deviceTypes.lazy.compactMap { bindingSwitchClusters[$0] }.first.map { (endpoint: endpoint.endpoint, clusters: $0) }
        }.first
        guard let switching else {
            throw HomeError.invalidArgument("\(switchDevice.name) is not a light switch (On/Off Light Switch or Dimmer Switch)")
        }
        guard let lightEndpoint = light.endpoints.first(where: { !groupableDeviceTypes.isDisjoint(with: $0.deviceTypes) }) else {
            throw HomeError.invalidArgument("\(light.name) has no light or plug endpoint to bind to")
        }
        // An On/Off Light or Plug has no Level Control: it takes only the On/Off binding.
        let onOffOnly: Set<UInt32> = [DeviceTypes.onOffLight.rawValue, DeviceTypes.onOffPlugInUnit.rawValue]
        let dims = onOffOnly.isDisjoint(with: lightEndpoint.deviceTypes)
        let bound = switching.clusters.filter { $0 != Clusters.LevelControl.id || dims }
        let controller = try await controller()
        try await withDeadline(configuration.commandTimeout, "binding \(switchDevice.name) to \(light.name)", clock: configuration.clock) {
            try await controller.bind(
                switchDevice.nodeID, endpoint: switching.endpoint, to: light.nodeID, endpoint: lightEndpoint.endpoint, clusters: bound)
        }
    }
}
