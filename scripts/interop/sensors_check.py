"""Sensor and switch check with the reference controller: commission a device, then do at the
device what a person does (through the simulator's control socket, as `matter-sim act` does)
and see it arrive as Matter events and attribute reports.

Runs as the checker of scripts/interop/run.sh (--checker) for any device; each endpoint's
clusters decide what is done:
- BooleanState (Contact Sensor): open, then close; a StateChange event carrying each new
  StateValue, on an urgent event subscription, and the attribute read back.
- Switch (Generic Switch, momentary with release, long press and multi-press): a double press
  gives InitialPress, ShortRelease, InitialPress, MultiPressOngoing(2), ShortRelease,
  MultiPressComplete(2) (TC-SWTCH-2.5 step 5a);
  a long press gives InitialPress, LongPress, LongRelease; CurrentPosition is back to 0.
- OccupancySensing: occupied, then unoccupied; OccupancyChanged events and the Occupancy bitmap.
- TemperatureMeasurement: a new reading (22.75 °C) read back as MeasuredValue 2275, and a
  reading outside MinMeasuredValue..MaxMeasuredValue refused.
- DoorLock: an untimed UnlockDoor refused (NEEDS_TIMED_INTERACTION); SetUser and SetCredential
  (Timed) give a user a PIN; UnlockDoor with it raises LockOperation (Unlock, Remote, the user,
  this controller); a wrong PIN fails and raises LockOperationError (InvalidCredential); the key
  turned at the lock (`act lock`) raises LockOperation (Lock, Manual); GetUser shows the user.
- Thermostat: OccupiedHeatingSetpoint written and read back, one beyond its limit refused
  (CONSTRAINT_ERROR), one within the deadband of the cooling setpoint pushing it up, SystemMode
  Heat, SetpointRaiseLower, and the running state heating while the room is below the setpoint.
- SmokeCoAlarm: smoke and clear at the device (SmokeAlarm, AllClear), SelfTestRequest (BUSY
  during an alarm; TestInProgress, then SelfTestComplete).
- BooleanStateConfiguration (Water Leak Detector): wet, SuppressAlarm, dry, each an
  AlarmsStateChanged with AlarmsActive/AlarmsSuppressed.
- PowerSource: a battery at 15 %: BatPercentRemaining, BatChargeLevel, BatReplacementNeeded.
- Binding (a light switch): written and read back fabric-scoped, a bad target refused, a press.
- BridgedDeviceBasicInformation (a bridge's bulbs): unplugged and plugged back in, each a
  ReachableChanged with Reachable following; removed from the bridge and added back, endpoint
  0's PartsList without it, then with it.
The event numbers of the events seen must rise. The acts and commands Home Assistant's check
sends too (open/close, the reading, the key turned, the setpoint write and SetpointRaiseLower)
are checks.clusters' moves, run through reference_check's ReadDriver.
"""

import asyncio
import os
from dataclasses import dataclass

import chip.clusters as Clusters
from chip import ChipUtility
from chip.clusters.Types import NullValue
from chip.interaction_model import InteractionModelError
from reference_check import NODE_ID, Check, main
from checks import clusters  # (reference_check put scripts/checks on sys.path)
from checks.control import act

EVENT_WAIT_S = 10
# The sensors whose step is their act alone (checks.clusters' SENSOR_ACTS), by step name.
NAMES_OF_ACTS = {clusters.RELATIVE_HUMIDITY: "relative-humidity", clusters.ILLUMINANCE: "illuminance",
                 clusters.PRESSURE: "pressure", clusters.FLOW: "flow", clusters.CO2_CONCENTRATION: "co2-concentration",
                 clusters.AIR_QUALITY: "air-quality"}


@dataclass
class UntimedUnlockDoor(Clusters.DoorLock.Commands.UnlockDoor):
    """UnlockDoor sent as a plain invoke: the controller would refuse to send it, so the
    lock's own refusal (NEEDS_TIMED_INTERACTION) is what is checked."""

    @ChipUtility.classproperty
    def must_use_timed_invoke(cls) -> bool:
        return False


class SensorsCheck(Check):
    def __init__(self, args):
        super().__init__(args)
        self.device_dir = os.path.join(os.path.dirname(os.path.abspath(args.workdir)), "device")

    # --- the device side: the simulator's control socket ------------------------------------

    def act(self, action, value=None):
        """One request on the control socket (checks.control); returns the answer."""
        return act(self.device_dir, action, value)

    def act_ok(self, action, value=None):
        response = self.act(action, value)
        if response.get("error") or any(r.get("note") for r in response.get("results", [])):
            raise RuntimeError(f"act {action} {value or ''}: {response}")

    # --- the controller side: an urgent event subscription to one cluster -------------------

    async def subscribe_events(self, endpoint, cluster):
        """An urgent subscription to every event of `cluster`; returns it and a queue of
        (event number, event data) as they arrive, priming left out."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()
        subscription = await self.controller.ReadEvent(
            NODE_ID, [(endpoint, cluster, 1)], reportInterval=(0, 10), fabricFiltered=False)
        primed = {e.Header.EventNumber for e in subscription.GetEvents()}

        def arrived(event, transaction):
            if event.Header.EventNumber not in primed:
                loop.call_soon_threadsafe(queue.put_nowait, (event.Header.EventNumber, event.Data))

        subscription.SetEventUpdateCallback(arrived)
        return subscription, queue

    async def next_events(self, queue, count):
        events = []
        for _ in range(count):
            events.append(await asyncio.wait_for(queue.get(), EVENT_WAIT_S))
        return events

    @staticmethod
    def rising(events):
        numbers = [n for n, _ in events]
        return numbers == sorted(numbers) and len(set(numbers)) == len(numbers)

    # --- the clusters -----------------------------------------------------------------------

    async def boolean_state(self, endpoint):
        State = Clusters.BooleanState
        subscription, queue = await self.subscribe_events(endpoint, State)
        # Open and close (a leak detector: wet, then dry) with StateValue following: checks.clusters,
        # as Home Assistant's check.
        first, second = await clusters.boolean_state(self.driver, endpoint)
        try:
            first_ok, first_value = await clusters.follow(self.driver, endpoint, first)
            events = await self.next_events(queue, 1)
            second_ok, second_value = await clusters.follow(self.driver, endpoint, second)
            events += await self.next_events(queue, 1)
        finally:
            subscription.Shutdown()
        kinds = [(type(d).__name__, d.stateValue) for _, d in events]
        ok = (kinds == [("StateChange", first.wanted), ("StateChange", second.wanted)] and first_ok and second_ok
              and self.rising(events))
        return ok, {"events": kinds, "stateValues": [first_value["value"], second_value["value"]]}

    async def switch(self, endpoint):
        Switch = Clusters.Switch
        subscription, queue = await self.subscribe_events(endpoint, Switch)
        try:
            self.act_ok("press", "double")
            double = await self.next_events(queue, 6)
            self.act_ok("press", "long")
            long = await self.next_events(queue, 3)
            position = await self.read(endpoint, Switch.Attributes.CurrentPosition)
        finally:
            subscription.Shutdown()

        def describe(events):
            out = []
            for _, d in events:
                fields = {k: v for k, v in vars(d).items() if not k.startswith("_")}
                out.append([type(d).__name__, fields])
            return out

        want_double = [["InitialPress", {"newPosition": 1}], ["ShortRelease", {"previousPosition": 1}],
                       ["InitialPress", {"newPosition": 1}],
                       ["MultiPressOngoing", {"newPosition": 1, "currentNumberOfPressesCounted": 2}],
                       ["ShortRelease", {"previousPosition": 1}],
                       ["MultiPressComplete", {"previousPosition": 1, "totalNumberOfPressesCounted": 2}]]
        want_long = [["InitialPress", {"newPosition": 1}], ["LongPress", {"newPosition": 1}],
                     ["LongRelease", {"previousPosition": 1}]]
        ok = describe(double) == want_double and describe(long) == want_long and position == 0 and self.rising(double + long)
        return ok, {"double": describe(double), "long": describe(long), "currentPosition": position}

    async def occupancy(self, endpoint):
        Occupancy = Clusters.OccupancySensing
        subscription, queue = await self.subscribe_events(endpoint, Occupancy)
        try:
            self.act_ok("occupied")
            walked_in = await self.next_events(queue, 1)
            occupied = await self.read(endpoint, Occupancy.Attributes.Occupancy)
            self.act_ok("unoccupied")
            walked_out = await self.next_events(queue, 1)
            unoccupied = await self.read(endpoint, Occupancy.Attributes.Occupancy)
        finally:
            subscription.Shutdown()
        kinds = [(type(d).__name__, int(d.occupancy)) for _, d in walked_in + walked_out]
        ok = (kinds == [("OccupancyChanged", 1), ("OccupancyChanged", 0)] and int(occupied) == 1 and int(unoccupied) == 0
              and self.rising(walked_in + walked_out))
        return ok, {"events": kinds, "occupied": int(occupied), "unoccupied": int(unoccupied)}

    async def temperature(self, endpoint):
        """A new reading (checks.clusters, as Home Assistant's check), then one out of range."""
        Measurement = Clusters.TemperatureMeasurement.Attributes
        [reading] = clusters.SENSOR_ACTS[clusters.TEMPERATURE_MEASUREMENT]
        measured_ok, seen = await clusters.follow(self.driver, endpoint, reading)
        refused = self.act("temperature", "400")
        after = await self.read(endpoint, Measurement.MeasuredValue)
        ok = measured_ok and bool(refused.get("error")) and after == reading.wanted
        return ok, {"measuredValue": seen["value"], "outOfRangeRefused": bool(refused.get("error")), "afterRefusal": after}

    async def door_lock(self, endpoint):
        Lock = Clusters.DoorLock
        pin = b"135790"
        try:
            await self.invoke(endpoint, UntimedUnlockDoor(PINCode=pin))
            untimed = "accepted"
        except InteractionModelError as error:
            untimed = int(error.status)
        timed = 1000
        await self.controller.SendCommand(
            NODE_ID, endpoint, Lock.Commands.SetUser(
                operationType=Lock.Enums.DataOperationTypeEnum.kAdd, userIndex=1, userName="reference",
                userUniqueID=NullValue, userStatus=NullValue, userType=NullValue, credentialRule=NullValue),
            timedRequestTimeoutMs=timed)
        credential = Lock.Structs.CredentialStruct(credentialType=Lock.Enums.CredentialTypeEnum.kPin, credentialIndex=1)
        set_credential = await self.controller.SendCommand(
            NODE_ID, endpoint, Lock.Commands.SetCredential(
                operationType=Lock.Enums.DataOperationTypeEnum.kAdd, credential=credential, credentialData=pin, userIndex=1,
                userStatus=NullValue, userType=NullValue),
            timedRequestTimeoutMs=timed)
        subscription, queue = await self.subscribe_events(endpoint, Lock)
        try:
            await self.controller.SendCommand(NODE_ID, endpoint, Lock.Commands.UnlockDoor(PINCode=pin), timedRequestTimeoutMs=timed)
            unlocked = await self.next_events(queue, 1)
            state_unlocked = await self.read(endpoint, Lock.Attributes.LockState)
            try:
                await self.controller.SendCommand(
                    NODE_ID, endpoint, Lock.Commands.LockDoor(PINCode=b"000000"), timedRequestTimeoutMs=timed)
                wrong = "accepted"
            except InteractionModelError as error:
                wrong = int(error.status)
            refused = await self.next_events(queue, 1)
            # The key turned at the lock: checks.clusters, as Home Assistant's check.
            turned_ok, turned_seen = await clusters.follow(self.driver, endpoint, clusters.KEY_LOCK)
            turned = await self.next_events(queue, 1)
            state_locked = turned_seen["value"]
        finally:
            subscription.Shutdown()
        user = await self.controller.SendCommand(NODE_ID, endpoint, Lock.Commands.GetUser(userIndex=1))
        events = unlocked + refused + turned
        kinds = [type(d).__name__ for _, d in events]
        u, e, t = unlocked[0][1], refused[0][1], turned[0][1]
        # UserIndex names only a user the Add created (TC-DRLK-2.4 step 2d): null for user 1, made by SetUser.
        ok = (untimed == 0xC6 and set_credential.status == 0 and set_credential.userIndex is NullValue
              and kinds == ["LockOperation", "LockOperationError", "LockOperation"]
              and u.lockOperationType == Lock.Enums.LockOperationTypeEnum.kUnlock
              and u.operationSource == Lock.Enums.OperationSourceEnum.kRemote and u.userIndex == 1 and u.sourceNode == 112233
              and wrong == 0x01 and e.operationError == Lock.Enums.OperationErrorEnum.kInvalidCredential
              and t.lockOperationType == Lock.Enums.LockOperationTypeEnum.kLock
              and t.operationSource == Lock.Enums.OperationSourceEnum.kManual
              and state_unlocked == Lock.Enums.DlLockState.kUnlocked and turned_ok
              and user.userName == "reference" and len(user.credentials) == 1 and self.rising(events))
        return ok, {"untimedUnlock": untimed, "setCredentialStatus": int(set_credential.status),
                    # A credential added to an existing user: the response names no new user (TC-DRLK-2.4).
                    "setCredentialUserIndex": None if set_credential.userIndex is NullValue else set_credential.userIndex,
                    "events": kinds,
                    "unlockedBy": {"user": u.userIndex, "source": int(u.operationSource), "node": u.sourceNode},
                    "wrongPIN": wrong, "keyTurn": int(t.operationSource), "lockState": [int(state_unlocked), int(state_locked)],
                    "getUser": {"name": user.userName, "credentials": len(user.credentials or [])}}

    async def thermostat(self, endpoint):
        T = Clusters.Thermostat
        A = T.Attributes

        async def write(attribute, value):
            [status] = await self.controller.WriteAttribute(NODE_ID, [(endpoint, attribute(value))])
            return int(status.Status)

        written = await write(A.OccupiedHeatingSetpoint, 2200)
        heating = await self.read(endpoint, A.OccupiedHeatingSetpoint)
        beyond = await write(A.OccupiedHeatingSetpoint, 3500)
        # The deadband push and SetpointRaiseLower: checks.clusters, as Home Assistant's check.
        push, lower = clusters.THERMOSTAT_MOVES
        pushed_ok, pushed = await clusters.follow(self.driver, endpoint, push)
        mode = await write(A.SystemMode, T.Enums.SystemModeEnum.kHeat)
        lowered_ok, lowered = await clusters.follow(self.driver, endpoint, lower)
        local = await self.read(endpoint, A.LocalTemperature)
        running = int(await self.read(endpoint, A.ThermostatRunningState))
        ok = (written == 0 and heating == 2200 and beyond == 0x87 and pushed_ok and mode == 0 and lowered_ok
              and (running & 1) == (1 if local < lower.wanted - 25 else running & 1))
        return ok, {"writeStatus": written, "heating": heating, "beyondLimit": beyond, "deadbandPush": pushed["cooling"],
                    "systemModeHeat": mode, "afterRaiseLower": lowered["value"], "local": local, "runningState": running}

    async def smoke_co_alarm(self, endpoint):
        """Smoke (critical) then clear at the device (checks.clusters, as Home Assistant's check):
        SmokeAlarm with severity Critical, AllClear; then SelfTestRequest: TestInProgress at once,
        SelfTestComplete and AllClear when the 5 s test ends; a SelfTestRequest during an alarm
        is BUSY."""
        Smoke = Clusters.SmokeCoAlarm
        smoke, clear = clusters.SENSOR_ACTS[clusters.SMOKE_CO_ALARM]
        subscription, queue = await self.subscribe_events(endpoint, Smoke)
        try:
            smoke_ok, _ = await clusters.follow(self.driver, endpoint, smoke)
            alarm = await self.next_events(queue, 1)
            try:
                await self.invoke(endpoint, Smoke.Commands.SelfTestRequest())
                busy = "accepted"
            except InteractionModelError as error:
                busy = int(error.status)
            clear_ok, _ = await clusters.follow(self.driver, endpoint, clear)
            cleared = await self.next_events(queue, 1)
            await self.invoke(endpoint, Smoke.Commands.SelfTestRequest())
            testing = await self.read(endpoint, Smoke.Attributes.TestInProgress)
            tested = await self.next_events(queue, 2)
            after = await self.read(endpoint, Smoke.Attributes.TestInProgress)
        finally:
            subscription.Shutdown()
        events = alarm + cleared + tested
        kinds = [type(d).__name__ for _, d in events]
        severity = int(alarm[0][1].alarmSeverityLevel)
        ok = (smoke_ok and clear_ok and busy == 0x9C and kinds == ["SmokeAlarm", "AllClear", "SelfTestComplete", "AllClear"]
              and severity == 2 and testing is True and after is False and self.rising(events))
        return ok, {"events": kinds, "smokeSeverity": severity, "selfTestDuringAlarm": busy, "testInProgress": [testing, after]}

    async def boolean_state_configuration(self, endpoint):
        """Water at the detector (checks.clusters): AlarmsActive visual+audible with
        AlarmsStateChanged; SuppressAlarm(audible) sets AlarmsSuppressed; dry again clears both."""
        Config = Clusters.BooleanStateConfiguration
        leak, dry = clusters.SENSOR_ACTS[clusters.BOOLEAN_STATE_CONFIGURATION]
        subscription, queue = await self.subscribe_events(endpoint, Config)
        try:
            leak_ok, _ = await clusters.follow(self.driver, endpoint, leak)
            events = await self.next_events(queue, 1)
            await self.invoke(endpoint, Config.Commands.SuppressAlarm(alarmsToSuppress=2))
            events += await self.next_events(queue, 1)
            suppressed = int(await self.read(endpoint, Config.Attributes.AlarmsSuppressed))
            dry_ok, _ = await clusters.follow(self.driver, endpoint, dry)
            events += await self.next_events(queue, 1)
        finally:
            subscription.Shutdown()
        seen = [(int(d.alarmsActive), int(d.alarmsSuppressed)) for _, d in events]
        ok = leak_ok and dry_ok and suppressed == 2 and seen == [(3, 0), (3, 2), (0, 0)] and self.rising(events)
        return ok, {"alarmsStateChanged": seen, "suppressed": suppressed}

    async def power_source(self, endpoint):
        """A battery at 15 % (checks.clusters): BatPercentRemaining 30 (half-percent units),
        BatChargeLevel Warning, BatReplacementNeeded; a full one puts them back."""
        Power = Clusters.PowerSource.Attributes
        [battery] = clusters.SENSOR_ACTS[clusters.POWER_SOURCE]
        low_ok, low = await clusters.follow(self.driver, endpoint, battery)
        level = int(await self.read(endpoint, Power.BatChargeLevel))
        needed = await self.read(endpoint, Power.BatReplacementNeeded)
        self.act_ok("battery", "100")
        full = await self.read(endpoint, Power.BatPercentRemaining)
        ok = low_ok and level == 1 and needed is True and full == 200
        return ok, {"batPercentRemaining": low["value"], "batChargeLevel": level, "replacementNeeded": needed, "afterNew": full}

    async def binding(self, endpoint):
        """A light switch's Binding (fabric-scoped): written with a light's node and endpoint, read
        back with this fabric's index; a target with both a node and a group is refused
        (CONSTRAINT_ERROR); a press at the switch is accepted (it goes to the bound node)."""
        Binding = Clusters.Binding
        target = Binding.Structs.TargetStruct(node=0x1234, endpoint=1, cluster=Clusters.OnOff.id)
        [written] = await self.controller.WriteAttribute(NODE_ID, [(endpoint, Binding.Attributes.Binding([target]))])
        entries = await self.read(endpoint, Binding.Attributes.Binding)
        both = Binding.Structs.TargetStruct(node=0x1234, group=1, endpoint=1)
        [refused] = await self.controller.WriteAttribute(NODE_ID, [(endpoint, Binding.Attributes.Binding([both]))])
        after = await self.read(endpoint, Binding.Attributes.Binding)
        pressed = self.act("press")
        ok = (int(written.Status) == 0 and len(entries) == 1 and entries[0].node == 0x1234 and entries[0].fabricIndex >= 1
              and int(refused.Status) == 0x87 and len(after) == 1 and not pressed.get("error"))
        return ok, {"writeStatus": int(written.Status), "entries": len(entries), "bothRefused": int(refused.Status),
                    "pressed": pressed.get("error") or "ok"}

    async def bridged(self, endpoint):
        """A bridged device unplugged and plugged back in (checks.clusters, as Home Assistant's
        check): ReachableChanged false, then true, with Reachable following."""
        Info = Clusters.BridgedDeviceBasicInformation
        unplug, plug = await clusters.bridged(self.driver, endpoint)
        subscription, queue = await self.subscribe_events(endpoint, Info)
        try:
            unplug_ok, _ = await clusters.follow(self.driver, endpoint, unplug)
            events = await self.next_events(queue, 1)
            plug_ok, _ = await clusters.follow(self.driver, endpoint, plug)
            events += await self.next_events(queue, 1)
        finally:
            subscription.Shutdown()
        seen = [(type(d).__name__, d.reachableNewValue) for _, d in events]
        # Removed from the bridge and added back: out of endpoint 0's PartsList, then in again.
        Descriptor = Clusters.Descriptor.Attributes
        self.act_ok("remove-bridged", str(endpoint))
        removed = list(await self.read(0, Descriptor.PartsList))
        self.act_ok("add-bridged", str(endpoint))
        added = list(await self.read(0, Descriptor.PartsList))
        ok = (unplug_ok and plug_ok and seen == [("ReachableChanged", False), ("ReachableChanged", True)] and self.rising(events)
              and endpoint not in removed and endpoint in added)
        return ok, {"events": seen, "partsListRemoved": removed, "partsListAdded": added}

    async def run(self):
        servers = await self.commissioned_endpoints()
        if servers is None:
            return
        await self.step("basic-information ep0", self.basic_information())
        checks = [
            (Clusters.BooleanState.id, "boolean-state", self.boolean_state),
            (Clusters.Switch.id, "switch", self.switch),
            (Clusters.OccupancySensing.id, "occupancy-sensing", self.occupancy),
            (Clusters.TemperatureMeasurement.id, "temperature-measurement", self.temperature),
            (Clusters.DoorLock.id, "door-lock", self.door_lock),
            (Clusters.Thermostat.id, "thermostat", self.thermostat),
            (Clusters.SmokeCoAlarm.id, "smoke-co-alarm", self.smoke_co_alarm),
            (Clusters.BooleanStateConfiguration.id, "boolean-state-configuration", self.boolean_state_configuration),
            (Clusters.PowerSource.id, "power-source", self.power_source),
            (Clusters.Binding.id, "binding", self.binding),
            (Clusters.BridgedDeviceBasicInformation.id, "bridged", self.bridged),
        ]
        # Clusters whose steps are checks.clusters' moves alone (the driver reads what follows).
        moves = {clusters.FAN_CONTROL: "fan-control", clusters.HEPA_FILTER_MONITORING: "hepa-filter-monitoring",
                 clusters.VALVE_CONFIGURATION_AND_CONTROL: "valve-configuration-and-control",
                 clusters.PUMP_CONFIGURATION_AND_CONTROL: "pump-configuration-and-control",
                 clusters.RVC_CLEAN_MODE: "rvc-clean-mode", clusters.RVC_RUN_MODE: "rvc-run-mode",
                 clusters.RVC_OPERATIONAL_STATE: "rvc-operational-state"}
        moves.update({cluster: NAMES_OF_ACTS[cluster] for cluster in NAMES_OF_ACTS})
        for endpoint, server_clusters in servers.items():
            for cluster_id, name, body in checks:
                if endpoint != 0 and cluster_id in server_clusters:
                    await self.step(f"{name} ep{endpoint}", body(endpoint))
            for cluster_id, name in moves.items():
                if endpoint != 0 and cluster_id in server_clusters:
                    listed = [m for c, of in clusters.STEPS if c == cluster_id for m in await of(self.driver, endpoint)]
                    await self.step(f"{name} ep{endpoint}", clusters.follow_all(self.driver, endpoint, listed))


if __name__ == "__main__":
    # Commissioning, the endpoint steps and at least one cluster step.
    main(SensorsCheck, "sensors-check", complete=lambda steps: any(s["step"].split(" ")[0] in (
        "boolean-state", "switch", "occupancy-sensing", "temperature-measurement", "door-lock", "thermostat", "fan-control",
        "hepa-filter-monitoring", "valve-configuration-and-control", "pump-configuration-and-control",
        "rvc-run-mode", "rvc-operational-state", "smoke-co-alarm", "boolean-state-configuration", "power-source", "binding", "bridged",
        *NAMES_OF_ACTS.values())
        for s in steps))
