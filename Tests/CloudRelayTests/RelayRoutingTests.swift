import Foundation
import MatterController
import MatterModel
import MatterProtocol
import MatterTLV
@testable import RelayClients
@testable import RelayProtocol
import RelayTestClient
import TestWaiting
import Testing

/// A controller drives a relay-connected device that serves the Interaction Model
/// with a real InteractionServer, over real WebSockets on loopback.
@Suite struct RelayRoutingTests {
    @Test func invokeReadWriteAndSubscribeThroughTheRelay() async throws {
        try await withRelay { relay in
            let (_, token, credential) = try await relay.home("Home", device: "kitchen-light")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                #expect(device.client.state == .connected)
                // The device's socket is up before the relay has registered it: wait until the
                // relay tells the controller the device is present.
                #expect(await until(controller.presenceUpdates()) { controller.presence["kitchen-light"] == true })

                // Invoke On: the device's cluster server runs it.
                let response = try await controller.invoke("kitchen-light", OnOff.command(OnOff.on))
                #expect(response.statuses == [.success])
                #expect(await device.node.isOn)
                #expect(await device.node.invocations.map(\.command) == [OnOff.on])

                // Read it back, and a value the device never had before the write.
                let report = try await controller.read("kitchen-light", paths: [AttributePathIB(OnOff.onOffPath)])
                #expect(report.value(OnOff.onOffPath) == .bool(true))

                let write = try await controller.write(
                    "kitchen-light",
                    WriteRequestMessage(writeRequests: [AttributeDataIB(path: AttributePathIB(OnOff.onTimePath), data: .unsigned(30))]))
                #expect(write.writeResponses.map(\.status.status.status) == [.success])
                let onTime = try await controller.read("kitchen-light", paths: [AttributePathIB(OnOff.onTimePath)])
                #expect(onTime.value(OnOff.onTimePath) == .unsigned(30))

                // A wildcard read expands on the device.
                let all = try await controller.read(
                    "kitchen-light", paths: [AttributePathIB(endpoint: OnOff.endpoint, cluster: OnOff.cluster, attribute: nil)])
                #expect(all.attributeReports.count == 2)

                // Subscribe: priming data, then a report after the value changes.
                let subscription = try await controller.subscribe(
                    "kitchen-light",
                    SubscribeRequestMessage(
                        minIntervalFloor: 0, maxIntervalCeiling: 30, attributeRequests: [AttributePathIB(OnOff.onOffPath)]))
                #expect(subscription.priming.value(OnOff.onOffPath) == .bool(true))
                #expect(subscription.maxInterval >= 1)

                let off = try await controller.invoke("kitchen-light", OnOff.command(OnOff.off))
                #expect(off.statuses == [.success])
                let next = try await withRelayTimeout(.seconds(10), "subscription report") {
                    var iterator = subscription.reports.makeAsyncIterator()
                    while let report = await iterator.next() {
                        if report.value(OnOff.onOffPath) != nil { return report }
                    }
                    throw RelayError.connectionLost
                }
                #expect(next.value(OnOff.onOffPath) == .bool(false))
                subscription.cancel()

                // The relay saw every request answered and timed it.
                let metrics = relay.server.metrics.snapshot
                #expect(metrics.latencyCount >= 5)
                #expect((metrics.routed[.toDevice] ?? 0) >= 5)
                #expect((metrics.routed[.toController] ?? 0) >= 5)
                #expect(metrics.connections[.device] == 1)
                #expect(metrics.connections[.controller] == 1)
            }
        }
    }

    @Test func aSubscriptionEndsOnTheDeviceWhenItsControllerLeaves() async throws {
        try await withRelay { relay in
            let (_, token, credential) = try await relay.home("Home", device: "hall-light")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let stayer = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await stayer.run() }]) {
                try await device.client.waitUntilConnected()
                let leaver = RelayControllerClient(
                    relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
                try await withServices([{ try await leaver.run() }]) {
                    let subscription = try await leaver.subscribe(
                        "hall-light",
                        SubscribeRequestMessage(
                            minIntervalFloor: 0, maxIntervalCeiling: 60, attributeRequests: [AttributePathIB(OnOff.onOffPath)]))
                    #expect(subscription.priming.value(OnOff.onOffPath) == .bool(false))
                    // The device registers it just after its SubscribeResponse goes out.
                    let server = device.interactionServer
                    #expect(await until(server.subscriptionChanges()) { await server.activeSubscriptions().count == 1 })
                }
                // The leaver is gone (once the relay has seen its connection close: under load it
                // may still be routing to it); the next change makes the device report to a dead session.
                let metrics = relay.server.metrics
                #expect(await until(metrics.changes()) { metrics.snapshot.connections[.controller] == 1 })
                _ = try await stayer.invoke("hall-light", OnOff.command(OnOff.on))
                #expect(await within { await device.interactionServer.untilActiveSubscriptions(0) })
                #expect(await until(metrics.changes()) { (metrics.snapshot.rejected[.sessionGone] ?? 0) >= 1 })
            }
        }
    }

    @Test func deviceStatusErrorsComeBackAsTypedStatus() async throws {
        try await withRelay { relay in
            let (_, token, credential) = try await relay.home("Home", device: "lamp")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(), logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                // A command the cluster does not accept: the InteractionServer answers UNSUPPORTED_COMMAND in the response.
                let unsupported = try await controller.invoke("lamp", OnOff.command(CommandID(0x40)))
                #expect(unsupported.statuses == [.unsupportedCommand])
                // An empty read is an invalid action: a StatusResponse, surfaced as a typed error.
                await #expect(throws: ControllerError.status(InteractionStatus(.invalidAction), "Read")) {
                    _ = try await controller.read("lamp", ReadRequestMessage())
                }
                // A timed invoke opens its window first and is accepted.
                let timed = try await controller.invoke("lamp", OnOff.command(OnOff.toggle), timedTimeout: 2000)
                #expect(timed.statuses == [.success])
                #expect(await device.node.isOn)
            }
        }
    }

    @Test func offlineAndUnknownDevicesFailFast() async throws {
        try await withRelay { relay in
            let (home, token, credential) = try await relay.home("Home", device: "sensor")
            _ = try await relay.store.registerDevice(homeID: home.id, deviceID: "never-connects")
            let device = RelayTestDevice(relayURL: relay.baseURL, credential: credential, configuration: deviceConfiguration())
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: controllerConfiguration(timeout: .seconds(30)),
                logger: testLogger)
            try await withServices(device.services + [{ try await controller.run() }]) {
                try await device.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                // The relay's answers, not the 30 s operation timeout (which would throw .timeout).
                await #expect(throws: RelayError.deviceOffline("never-connects")) {
                    _ = try await controller.invoke("never-connects", OnOff.command(OnOff.on))
                }
                await #expect(throws: RelayError.unknownDevice("no-such-device")) {
                    _ = try await controller.invoke("no-such-device", OnOff.command(OnOff.on))
                }
                // The relay keeps the store's answer for a device not connected a second (a
                // flood to an unknown device costs one lookup a second); registering forgets it.
                let registered = try await RelayHTTP.request(
                    "POST", relay.httpURL + "/v1/homes/\(home.id)/devices", bearer: token,
                    json: Array(#"{"deviceID":"no-such-device"}"#.utf8))
                #expect(registered.status == 201)
                await #expect(throws: RelayError.deviceOffline("no-such-device")) {
                    _ = try await controller.invoke("no-such-device", OnOff.command(OnOff.on))
                }

                // Fault injection: the device drops off, the controller learns it, and it comes back.
                #expect(await until(controller.presenceUpdates()) { controller.presence["sensor"] == true })
                device.client.goOffline()
                try await device.client.waitUntilDisconnected()
                #expect(device.client.state == .offline)
                #expect(await until(controller.presenceUpdates()) { controller.presence["sensor"] == false })
                await #expect(throws: RelayError.deviceOffline("sensor")) {
                    _ = try await controller.invoke("sensor", OnOff.command(OnOff.on))
                }
                device.client.goOnline()
                try await device.client.waitUntilConnected()
                #expect(await until(controller.presenceUpdates()) { controller.presence["sensor"] == true })
                let response = try await controller.invoke("sensor", OnOff.command(OnOff.on))
                #expect(response.statuses == [.success])
            }
        }
    }

    @Test func silentDeviceTimesOutWithinTheBound() async throws {
        try await withRelay { relay in
            let (_, token, credential) = try await relay.home("Home", device: "stuck")
            let client = RelayDeviceClient(
                relayURL: relay.baseURL, credential: credential, handler: SilentHandler(), configuration: deviceConfiguration(),
                logger: testLogger)
            let configuration = controllerConfiguration()
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: configuration, logger: testLogger)
            try await withServices([{ try await client.run() }, { try await controller.run() }]) {
                try await client.waitUntilConnected()
                // Measured on the clock the controller's timeouts run on.
                let clock = configuration.settings.clock
                let started = clock.now
                await #expect(throws: RelayError.timeout("an answer from stuck")) {
                    _ = try await controller.invoke("stuck", OnOff.command(OnOff.on), timeout: .milliseconds(500))
                }
                #expect(clock.now - started < .seconds(5))
            }
        }
    }

    /// Issue #42: one sweeper keeps a connection's answer deadlines, asleep until the earliest.
    /// A shorter timeout coming while it sleeps on a longer one still ends on time, and an
    /// answer that comes in time is taken, the missed one ending only its own exchange.
    @Test func aShortTimeoutEndsOnTimeWhileALongerOneWaits() async throws {
        try await withRelay { relay in
            let (home, token, credential) = try await relay.home("Home", device: "stuck")
            let lightCredential = try await relay.store.registerDevice(homeID: home.id, deviceID: "light")
            let client = RelayDeviceClient(
                relayURL: relay.baseURL, credential: credential, handler: SilentHandler(), configuration: deviceConfiguration(),
                logger: testLogger)
            let light = RelayTestDevice(relayURL: relay.baseURL, credential: lightCredential, configuration: deviceConfiguration())
            let configuration = controllerConfiguration()
            let controller = RelayControllerClient(
                relayURL: relay.baseURL, homeToken: token, configuration: configuration, logger: testLogger)
            try await withServices([{ try await client.run() }, { try await controller.run() }] + light.services) {
                try await client.waitUntilConnected()
                try await light.client.waitUntilConnected()
                try await controller.waitUntilConnected()
                let long = Task { try await controller.invoke("stuck", OnOff.command(OnOff.on), timeout: .seconds(20)) }
                defer { long.cancel() }
                // The long wait is the sweeper's earliest deadline once it runs.
                // real time: external: the relay's sweeper task picking up the first deadline.
                try await Task.sleep(for: .milliseconds(200))
                let clock = configuration.settings.clock
                let started = clock.now
                await #expect(throws: RelayError.timeout("an answer from stuck")) {
                    _ = try await controller.invoke("stuck", OnOff.command(OnOff.on), timeout: .milliseconds(500))
                }
                #expect(clock.now - started < .seconds(5))
                let response = try await controller.invoke("light", OnOff.command(OnOff.on), timeout: .seconds(30))
                #expect(response.statuses == [.success])
            }
        }
    }

    @Test func operationsWithoutARelayEndNotConnected() async throws {
        // Nothing listens on this port: a freshly bound and closed one would do, port 9 (discard) is never served here.
        let configuration = controllerConfiguration(timeout: .milliseconds(400))
        let controller = RelayControllerClient(
            relayURL: "ws://127.0.0.1:9", homeToken: "mrh_x", configuration: configuration, logger: testLogger)
        try await withServices([{ try await controller.run() }]) {
            // Measured on the clock the controller's timeouts run on.
            let clock = configuration.settings.clock
            let started = clock.now
            await #expect(throws: RelayError.notConnected) {
                _ = try await controller.read("any", paths: [AttributePathIB(OnOff.onOffPath)])
            }
            #expect(clock.now - started < .seconds(5))
        }
    }
}
