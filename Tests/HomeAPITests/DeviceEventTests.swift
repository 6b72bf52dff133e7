import Foundation
import HomeAPI
import MatterDevice
import MatterModel
import MatterTLV
import OpenCombine
import TestDevices
import TestWaiting
import Testing

// Issue #15: a device's Matter events through the Home API (`deviceType.events.subscribe`),
// in Discovery as `EventCandidate`s, and as automation starters, against in-process
// simulated devices on loopback UDP, each event done at the device (`MatterNode.act`).

/// What a publisher sent, as the test waits for it.
final class Received<Output: Sendable>: @unchecked Sendable {
    // @unchecked: `cancellable` is set once in init, then only cancelled (AnyCancellable.cancel is thread-safe).
    let values = Watched<[Output]>([])
    private var cancellable: AnyCancellable?

    init<P: Publisher>(_ publisher: P) where P.Output == Output {
        let values = values
        cancellable = publisher.sink(receiveCompletion: { _ in }, receiveValue: { value in values.update { $0.append(value) } })
    }

    func stop() { cancellable?.cancel() }
}

/// A sensor of `deviceType` whose one cluster is `cluster`.
private func sensor(_ deviceType: UInt32, _ cluster: UInt32, features: Set<String> = [], serial: String) -> NodeDescription {
    Fixture.singleCluster(deviceType, ClusterID(cluster), features: features, product: "Sensor", serial: serial)
}

@Suite("Device events", .serialized)
struct DeviceEventTests {
    @Test func aContactSensorsStateChangeArrivesOnceWithItsPayloadAndTheAttributeFollows() async throws {
        let rig = try await Rig.make()
        let sensor = try await TestDevice.start(Fixture.contactSensor())
        defer {
            PendingCleanups.run {
                await sensor.stop(); await rig.close()
            }
        }
        let device = try await rig.add(sensor, name: "Front Door")
        let contact = try #require(await device.types.get(ContactSensorDeviceType.self))
        #expect(contact.matterTraits.booleanStateTrait?.stateValue == true)
        #expect(contact.events.contains(Matter.BooleanStateTrait.StateChangeEvent.self))
        #expect(!contact.events.contains(Matter.SwitchTrait.InitialPressEvent.self))
        #expect(await sensor.untilSubscribed())

        let changes = Received(contact.events.subscribe(Matter.BooleanStateTrait.StateChangeEvent.self))
        defer { changes.stop() }
        try await sensor.node.act(.contact(false))
        #expect(await changes.values.until { $0.count == 1 })
        try await sensor.node.act(.contact(true))
        #expect(await changes.values.until { $0.count == 2 })
        let events = changes.values.value
        #expect(events.map(\.stateValue) == [false, true])
        #expect(events[0].number < events[1].number)
        #expect(events.allSatisfy { $0.importance == .info && $0.timestamp > 1_700_000_000 })
        // The attribute follows the event.
        let closed = await until(signals(device.types.subscribe(ContactSensorDeviceType.self))) {
            await (try? rig.home.device(id: device.id))?.types.get(ContactSensorDeviceType.self)?
                .matterTraits.booleanStateTrait?.stateValue == true
        }
        #expect(closed)
    }

    @Test func aDoublePressReachesTheAppAsTheSwitchsEventFlowInOrder() async throws {
        let rig = try await Rig.make()
        let button = try await TestDevice.start(Fixture.genericSwitch())
        defer {
            PendingCleanups.run {
                await button.stop(); await rig.close()
            }
        }
        let device = try await rig.add(button, name: "Wall Button")
        let type = try #require(await device.types.get(GenericSwitchDeviceType.self))
        #expect(type.matterTraits.switchTrait?.multiPressMax == 2)
        #expect(await button.untilSubscribed())
        let presses = Received(type.events.subscribe(Matter.SwitchTrait.InitialPressEvent.self))
        let ongoing = Received(type.events.subscribe(Matter.SwitchTrait.MultiPressOngoingEvent.self))
        let completes = Received(type.events.subscribe(Matter.SwitchTrait.MultiPressCompleteEvent.self))
        defer {
            presses.stop(); ongoing.stop(); completes.stop()
        }

        try await button.node.act(.press(.double))
        // Each subscription is its own stream, consumed by its own task: wait on every one, since
        // MultiPressComplete can reach its consumer before the second InitialPress reaches its own.
        #expect(await completes.values.until { $0.count == 1 })
        #expect(await presses.values.until { $0.count == 2 })
        #expect(await ongoing.values.until { $0.count == 1 })
        // Each press starts with InitialPress; the second adds MultiPressOngoing (TC-SWTCH-2.5).
        #expect(presses.values.value.map(\.newPosition) == [1, 1])
        #expect(ongoing.values.value.map(\.currentNumberOfPressesCounted) == [2])
        let complete = try #require(completes.values.value.first)
        #expect(complete.totalNumberOfPressesCounted == 2 && complete.previousPosition == 1)
        let second = try #require(presses.values.value.dropFirst().first)
        let counted = try #require(ongoing.values.value.first)
        #expect(second.number < counted.number && counted.number < complete.number)
    }

    @Test func aLongPressAShortReleaseAndALatchingSwitchReachTheApp() async throws {
        let rig = try await Rig.make()
        let button = try await TestDevice.start(Fixture.genericSwitch())
        let rocker = try await TestDevice.start(sensor(0x000F, 0x003B, features: ["LS"], serial: "ROCKER-1"))
        defer {
            PendingCleanups.run {
                await button.stop(); await rocker.stop(); await rig.close()
            }
        }
        let buttonType = try #require(await rig.add(button, name: "Wall Button").types.get(GenericSwitchDeviceType.self))
        let rockerType = try #require(await rig.add(rocker, name: "Rocker").types.get(GenericSwitchDeviceType.self))
        for d in [button, rocker] { #expect(await d.untilSubscribed()) }
        let long = Received(buttonType.events.subscribe(Matter.SwitchTrait.LongPressEvent.self))
        let longRelease = Received(buttonType.events.subscribe(Matter.SwitchTrait.LongReleaseEvent.self))
        let shortRelease = Received(buttonType.events.subscribe(Matter.SwitchTrait.ShortReleaseEvent.self))
        let latched = Received(rockerType.events.subscribe(Matter.SwitchTrait.SwitchLatchedEvent.self))
        defer {
            long.stop(); longRelease.stop(); shortRelease.stop(); latched.stop()
        }

        // Held past the long-press threshold: LongPress, then LongRelease, and no ShortRelease.
        try await button.node.act(.press(.long))
        #expect(await longRelease.values.until { $0.count == 1 })
        #expect(await long.values.until { $0.count == 1 })
        #expect(long.values.value.map(\.newPosition) == [1] && longRelease.values.value.map(\.previousPosition) == [1])
        let held = try #require(long.values.value.first), released = try #require(longRelease.values.value.first)
        #expect(held.number < released.number)
        #expect(shortRelease.values.value.isEmpty)
        // A short press: one ShortRelease.
        try await button.node.act(.press(.single))
        #expect(await shortRelease.values.until { $0.map(\.previousPosition) == [1] })
        // The latching rocker goes to its other position and back: SwitchLatched each time.
        try await rocker.node.act(.press(.single))
        try await rocker.node.act(.press(.single))
        #expect(await latched.values.until { $0.map(\.newPosition) == [1, 0] })
    }

    @Test func aLocksWrongCodeLockoutAndItsUserChangesReachTheApp() async throws {
        let rig = try await Rig.make()
        let lock = try await TestDevice.start(Fixture.doorLock())
        defer {
            PendingCleanups.run {
                await lock.stop(); await rig.close()
            }
        }
        let type = try #require(await rig.add(lock, name: "Front Door Lock").types.get(DoorLockDeviceType.self))
        let trait = try #require(type.matterTraits.doorLockTrait)
        #expect(trait.wrongCodeEntryLimit == 3)
        #expect(await lock.untilSubscribed())
        let alarms = Received(type.events.subscribe(Matter.DoorLockTrait.DoorLockAlarmEvent.self))
        let errors = Received(type.events.subscribe(Matter.DoorLockTrait.LockOperationErrorEvent.self))
        let userChanges = Received(type.events.subscribe(Matter.DoorLockTrait.LockUserChangeEvent.self))
        defer {
            alarms.stop(); errors.stop(); userChanges.stop()
        }

        // A user added from the app (SetUser, a Timed Invoke): LockUserChange.
        try await trait.setUser(
            operationType: .add, userIndex: 2, userName: "Guest", userStatus: .occupiedEnabled, userType: .unrestrictedUser)
        #expect(await userChanges.values.until { $0.count == 1 })
        let added = userChanges.values.value[0]
        #expect(added.lockDataType == .userIndex && added.dataOperationType == .add && added.userIndex == 2)
        // Three wrong PINs reach WrongCodeEntryLimit: a LockOperationError each, then DoorLockAlarm.
        for _ in 0..<3 {
            await #expect(throws: HomeError.self) { try await trait.unlockDoor(pinCode: Data("0000".utf8)) }
        }
        #expect(await alarms.values.until { $0.map(\.alarmCode) == [.wrongCodeEntryLimit] })
        #expect(await errors.values.until { $0.count == 3 })
        #expect(errors.values.value.allSatisfy { $0.operationError == .invalidCredential && $0.lockOperationType == .unlock })
    }

    @Test func theAppGivesAUserAPINReadsItBackAndUnlocksWithIt() async throws {
        let rig = try await Rig.make()
        let lock = try await TestDevice.start(Fixture.doorLock())
        defer {
            PendingCleanups.run {
                await lock.stop(); await rig.close()
            }
        }
        let type = try #require(await rig.add(lock, name: "Front Door Lock").types.get(DoorLockDeviceType.self))
        let trait = try #require(type.matterTraits.doorLockTrait)
        #expect(await lock.untilSubscribed())
        let operations = Received(type.events.subscribe(Matter.DoorLockTrait.LockOperationEvent.self))
        defer { operations.stop() }

        // SetCredential (a Timed Invoke answered with SetCredentialResponse) makes user 1 for a new PIN.
        let pin = Matter.DoorLockTrait.CredentialStruct(credentialType: .pin, credentialIndex: 1)
        let set = try await trait.setCredential(operationType: .add, credential: pin, credentialData: Data("13579".utf8))
        #expect(set.status == 0 && set.userIndex == 1)
        // Answers in the response's Status, not as errors: the same slot again is OCCUPIED (3), the
        // same PIN in another slot DUPLICATE (2).
        let again = try await trait.setCredential(operationType: .add, credential: pin, credentialData: Data("24680".utf8))
        #expect(again.status == 3)
        let other = Matter.DoorLockTrait.CredentialStruct(credentialType: .pin, credentialIndex: 2)
        let twin = try await trait.setCredential(operationType: .add, credential: other, credentialData: Data("13579".utf8))
        #expect(twin.status == 2)
        // GetUser (answered with GetUserResponse, a list of CredentialStruct) and GetCredentialStatus.
        let user = try await trait.getUser(userIndex: 1)
        #expect(user.userIndex == 1 && user.userStatus == .occupiedEnabled && user.credentials == [pin])
        let status = try await trait.getCredentialStatus(credential: pin)
        #expect(status.credentialExists == true && status.userIndex == 1)
        let empty = try await trait.getUser(userIndex: 2)
        #expect(empty.userStatus == nil && empty.credentials == nil)

        try await trait.unlockDoor(pinCode: Data("13579".utf8))
        #expect(await operations.values.until { $0.map(\.userIndex) == [1] })
        // ClearCredential (a struct field): the PIN no longer opens the door.
        try await trait.clearCredential(credential: pin)
        #expect(try await trait.getCredentialStatus(credential: pin).credentialExists == false)
        await #expect(throws: HomeError.self) { try await trait.unlockDoor(pinCode: Data("13579".utf8)) }
    }

    @Test func aThermometersReadingAndAMotionSensorsOccupancyReachTheirTraits() async throws {
        let rig = try await Rig.make()
        let thermometer = try await TestDevice.start(sensor(0x0302, 0x0402, serial: "TEMP-1"))
        let motion = try await TestDevice.start(sensor(0x0107, 0x0406, features: ["PIR"], serial: "OCC-1"))
        defer {
            PendingCleanups.run {
                await thermometer.stop(); await motion.stop(); await rig.close()
            }
        }
        let thermometerDevice = try await rig.add(thermometer, name: "Hall")
        let motionDevice = try await rig.add(motion, name: "Landing")
        let temperature = try #require(await thermometerDevice.types.get(TemperatureSensorDeviceType.self))
        #expect(temperature.matterTraits.temperatureMeasurementTrait?.measuredValue == 2000)
        #expect(temperature.matterTraits.temperatureMeasurementTrait?.minMeasuredValue == -2000)
        let occupancy = try #require(await motionDevice.types.get(OccupancySensorDeviceType.self))
        let trait = try #require(occupancy.matterTraits.occupancySensingTrait)
        #expect(trait.occupancy == [] && trait.occupancySensorType == .pir && trait.occupancySensorTypeBitmap == .pir)
        for d in [thermometer, motion] { #expect(await d.untilSubscribed()) }

        let changes = Received(occupancy.events.subscribe(Matter.OccupancySensingTrait.OccupancyChangedEvent.self))
        defer { changes.stop() }
        try await motion.node.act(.occupancy(true))
        try await thermometer.node.act(.temperature(23.5))
        #expect(await changes.values.until { $0.map(\.occupancy) == [.occupied] })
        let updated = await until(signals(rig.home.devices().batched())) {
            let t = await (try? rig.home.device(id: thermometerDevice.id))?.types.get(TemperatureSensorDeviceType.self)
            let o = await (try? rig.home.device(id: motionDevice.id))?.types.get(OccupancySensorDeviceType.self)
            return t?.matterTraits.temperatureMeasurementTrait?.measuredValue == 2350
                && o?.matterTraits.occupancySensingTrait?.occupancy == .occupied
        }
        #expect(updated)
    }

    @Test func aDoorLockUnlockedWithAPINTurnsTheHallLightOnAndAWrongPINIsRefused() async throws {
        let rig = try await Rig.make()
        let lock = try await TestDevice.start(Fixture.doorLock())
        let hall = try await TestDevice.start(Fixture.onOffLight(serial: "HALL"))
        defer {
            PendingCleanups.run {
                await lock.stop(); await hall.stop(); await rig.close()
            }
        }
        // The installer sets a PIN at the lock (SetCredential: a new user gets it).
        let credential = TLVValue.structure([.context(0, .unsigned(1)), .context(1, .unsigned(1))])
        let installed = await lock.node.invoke(
            CommandPath(endpoint: 1, cluster: Fixture.doorLock, command: CommandID(0x22)),
            fields: .structure([
                .context(0, .unsigned(0)), .context(1, credential), .context(2, .bytes(Array("2468".utf8))), .context(3, .null),
                .context(4, .null), .context(5, .null),
            ]), timed: true)
        guard case .response(_, let answer) = installed else {
            Issue.record("SetCredential: \(installed)")
            return
        }
        #expect(answer[context: 0] == .unsigned(0) && answer[context: 1] == .unsigned(1))

        let lockDevice = try await rig.add(lock, name: "Front Door Lock")
        let hallDevice = try await rig.add(hall, name: "Hall Light")
        _ = try await rig.structure.createAutomation(
            automation(name: "Unlocked: hall light on") {
                starter(lockDevice, DoorLockDeviceType.self, Matter.DoorLockTrait.LockOperationEvent.self) {
                    Matter.DoorLockTrait.LockOperationEvent.lockOperationType(.unlock)
                }
                action(hallDevice, OnOffLightDeviceType.self) { Matter.OnOffTrait.on() }
            })
        #expect(await lock.untilSubscribed())
        let runner = await rig.home.startAutomations()
        defer { PendingCleanups.run { await runner.stop() } }
        let type = try #require(await lockDevice.types.get(DoorLockDeviceType.self))
        let trait = try #require(type.matterTraits.doorLockTrait)
        #expect(trait.lockState == .locked && trait.numberOfTotalUsersSupported == 10)
        let operations = Received(type.events.subscribe(Matter.DoorLockTrait.LockOperationEvent.self))
        defer { operations.stop() }

        // A wrong PIN: the lock refuses, nothing runs.
        await #expect(throws: HomeError.self) { try await trait.unlockDoor(pinCode: Data("1111".utf8)) }
        // Locking fires no automation (the starter wants an unlock): the lock reports it.
        try await trait.lockDoor()
        #expect(await operations.values.until { $0.count == 1 })
        // The right PIN (a Timed Invoke, as the model asks): unlocked by user 1 from this home.
        try await trait.unlockDoor(pinCode: Data("2468".utf8))
        #expect(await operations.values.until { $0.count == 2 })
        let unlocked = operations.values.value[1]
        #expect(unlocked.lockOperationType == .unlock && unlocked.operationSource == .remote && unlocked.userIndex == 1)
        #expect(await until(hall.attributeChanges()) { await hall.value(Fixture.onOffPath) == .bool(true) })
        #expect(
            await until(runner.runs()) {
                (try? await rig.structure.automationHistory())?.map(\.starter) == ["Front Door Lock LockOperation (lockOperationType = 1)"]
            })
        let state = await until(signals(rig.home.devices().batched())) {
            await (try? rig.home.device(id: lockDevice.id))?.types.get(DoorLockDeviceType.self)?.matterTraits.doorLockTrait?.lockState
                == .unlocked
        }
        #expect(state)
    }

    @Test func aThermostatsSetpointsModeAndRoomThroughItsTrait() async throws {
        let rig = try await Rig.make()
        let thermostat = try await TestDevice.start(sensor(0x0301, 0x0201, features: ["HEAT", "COOL", "AUTO"], serial: "THERMO-1"))
        defer {
            PendingCleanups.run {
                await thermostat.stop(); await rig.close()
            }
        }
        let device = try await rig.add(thermostat, name: "Hall Thermostat")
        let trait = try #require(await device.types.get(ThermostatDeviceType.self)?.matterTraits.thermostatTrait)
        #expect(trait.localTemperature == 2000 && trait.occupiedHeatingSetpoint == 2000 && trait.systemMode == .auto)
        // Writes and a command; the deadband pushes the cooling setpoint; a value past its limit is refused.
        try await trait.setOccupiedHeatingSetpoint(2450)
        try await trait.setpointRaiseLower(mode: .heat, amount: 5)
        await #expect(throws: HomeError.self) { try await trait.setOccupiedHeatingSetpoint(3500) }
        try await trait.setSystemMode(.heat)
        let settled = await until(signals(rig.home.devices().batched())) {
            guard let t = await (try? rig.home.device(id: device.id))?.types.get(ThermostatDeviceType.self)?.matterTraits.thermostatTrait
            else { return false }
            return t.occupiedHeatingSetpoint == 2500 && t.occupiedCoolingSetpoint == 2750 && t.systemMode == .heat
                && t.thermostatRunningState == .heat
        }
        #expect(settled)
    }

    @Test func discoveryListsTheEventsTheSwitchsFeaturesAllow() async throws {
        let rig = try await Rig.make()
        let button = try await TestDevice.start(Fixture.genericSwitch())
        defer {
            PendingCleanups.run {
                await button.stop(); await rig.close()
            }
        }
        let device = try await rig.add(button, name: "Wall Button")
        let events = try await rig.structure.candidates(for: device, ignoringCache: true).list()
            .compactMap { $0.node as? EventCandidate }
        let names = Set(events.map { $0.event.name })
        // MS, MSR, MSL and MSM: every momentary event; SwitchLatched needs LS.
        #expect(
            names == ["InitialPress", "LongPress", "ShortRelease", "LongRelease", "MultiPressOngoing", "MultiPressComplete"])
        let complete = try #require(events.first { $0.event == Matter.SwitchTrait.MultiPressCompleteEvent.self })
        #expect(complete.deviceTypes.contains { $0 == GenericSwitchDeviceType.self })
        #expect(
            complete.fieldDetails.keys.contains(
                AnyField(erasing: Matter.SwitchTrait.MultiPressCompleteEvent.EventFields.totalNumberOfPressesCounted)))
    }

    @Test func aSwitchPressTogglesTheLightAndADoorOpeningTurnsTheHallLightOn() async throws {
        let rig = try await Rig.make()
        let button = try await TestDevice.start(Fixture.genericSwitch())
        let door = try await TestDevice.start(Fixture.contactSensor())
        let lamp = try await TestDevice.start(Fixture.onOffLight(serial: "LAMP"))
        let hall = try await TestDevice.start(Fixture.onOffLight(serial: "HALL"))
        defer {
            PendingCleanups.run {
                for d in [button, door, lamp, hall] { await d.stop() }
                await rig.close()
            }
        }
        let buttonDevice = try await rig.add(button, name: "Wall Button")
        let doorDevice = try await rig.add(door, name: "Front Door")
        let lampDevice = try await rig.add(lamp, name: "Lamp")
        let hallDevice = try await rig.add(hall, name: "Hall Light")
        _ = try await rig.structure.createAutomation(
            automation(name: "Button toggles the lamp") {
                starter(buttonDevice, GenericSwitchDeviceType.self, Matter.SwitchTrait.InitialPressEvent.self)
                action(lampDevice, OnOffLightDeviceType.self) { Matter.OnOffTrait.toggle() }
            })
        _ = try await rig.structure.createAutomation(
            automation(name: "Door opens the hall light") {
                starter(doorDevice, ContactSensorDeviceType.self, Matter.BooleanStateTrait.StateChangeEvent.self)
                action(hallDevice, OnOffLightDeviceType.self) { Matter.OnOffTrait.on() }
            })
        // A device that does not raise the event cannot start on it.
        await #expect(throws: HomeError.self) {
            try await rig.structure.createAutomation(
                automation {
                    starter(lampDevice, OnOffLightDeviceType.self, Matter.SwitchTrait.InitialPressEvent.self)
                    action(hallDevice, OnOffLightDeviceType.self) { Matter.OnOffTrait.on() }
                })
        }
        for d in [button, door] { #expect(await d.untilSubscribed()) }
        let runner = await rig.home.startAutomations()
        defer { PendingCleanups.run { await runner.stop() } }

        try await button.node.act(.press(.single))
        #expect(await until(lamp.attributeChanges()) { await lamp.value(Fixture.onOffPath) == .bool(true) })
        try await door.node.act(.contact(false))
        #expect(await until(hall.attributeChanges()) { await hall.value(Fixture.onOffPath) == .bool(true) })
        // Each event started its automation once: one more press, once the switch has told
        // the first one complete, toggles the lamp back.
        let pressed = await button.node.events().filter { $0.cluster == Fixture.switchCluster }.count
        #expect(
            await until(button.node.recordedEvents) {
                await button.node.events().filter { $0.cluster == Fixture.switchCluster }.count == pressed + 2
            })
        try await button.node.act(.press(.single))
        #expect(await until(lamp.attributeChanges()) { await lamp.value(Fixture.onOffPath) == .bool(false) })
        // The run is recorded once its action is done.
        #expect(
            await until(runner.runs()) {
                (try? await rig.structure.automationHistory())?.filter { $0.starter == "Wall Button InitialPress" }.count == 2
            })
        let history = try await rig.structure.automationHistory()
        #expect(history.filter { $0.starter == "Wall Button InitialPress" }.count == 2)
        #expect(history.filter { $0.starter == "Front Door StateChange" }.count == 1)
        #expect(history.allSatisfy { $0.outcome == .success })
    }
}
