"""The reference controller's check of one device (run by scripts/interop/run.sh).

It runs on the controller host of the fake LAN with the connectedhomeip Python controller:
commissions the device on the network (DNS-SD discovery by long discriminator, PASE,
attestation against --paa, CSR/NOC, CASE, CommissioningComplete), walks the endpoints named by
the Descriptor of endpoint 0, and exercises each cluster the project's devices serve:
BasicInformation, OnOff, LevelControl, WindowCovering, ColorControl (their moves are
checks.clusters', shared with Home Assistant's check, run through ReadDriver); then one
subscription and, with --latency N, N timed invokes.

The report (--report) is a JSON list with one object per step: "step", "ok", the step's own
values and "ms". Step names and values are the project's report format: scripts/interop-home.sh
and scripts/interop/steps.py compare reports by them, with the timings left out.

Other checkers (restart_check.py) reuse `Check` and take the same options.
"""

import argparse
import asyncio
import logging
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checks"))
from checks.report import Report, elapsed_ms  # noqa: E402 (the shared package, found above)
from checks.stats import median, percentile  # noqa: E402
from checks import clusters  # noqa: E402

import chip.CertificateAuthority
import chip.clusters as Clusters
from chip.clusters.ClusterObjects import ALL_ATTRIBUTES, ALL_CLUSTERS
import chip.discovery
import chip.native
from chip.ChipStack import ChipStack

# The node ID the controller gives the device on its fabric.
NODE_ID = 0x4D0A
# A step that takes longer has hung (the controller's own timeouts are longer still).
STEP_TIMEOUT_S = 90
# The clusters --require can name.
REQUIRABLE = {
    "onoff": Clusters.OnOff.id,
    "level-control": Clusters.LevelControl.id,
    "window-covering": Clusters.WindowCovering.id,
    "color-control": Clusters.ColorControl.id,
    "basic-information": Clusters.BasicInformation.id,
}


class ReadDriver:
    """checks.clusters' driver for the reference controller: commands and attributes by ID as
    its Clusters objects, and what must follow read back: once for what a command sets at once,
    again and again until it is there for a transition or a movement."""

    WITHIN_S = {clusters.AT_ONCE: 0, clusters.BEHIND_REPORTS: 0, clusters.TRANSITION: 5, clusters.MOVEMENT: 60,
                clusters.ACT: 10}

    def __init__(self, check):
        self.check = check

    async def read(self, endpoint, cluster, attribute):
        return await self.check.read(endpoint, ALL_ATTRIBUTES[cluster][attribute])

    async def command(self, endpoint, cluster, name, fields, timed_ms=None):
        command = getattr(ALL_CLUSTERS[cluster].Commands, name)(**fields)
        return await self.check.controller.SendCommand(NODE_ID, endpoint, command, timedRequestTimeoutMs=timed_ms)

    async def write(self, endpoint, cluster, attribute, value):
        [status] = await self.check.controller.WriteAttribute(NODE_ID, [(endpoint, ALL_ATTRIBUTES[cluster][attribute](value))])
        return int(status.Status)

    def act(self, action, value=None):
        self.check.act_ok(action, value)

    async def before(self, endpoint, move):
        pass

    async def wait_for(self, endpoint, cluster, attribute, predicate, timeout_s, events=()):
        """Reads until predicate holds or timeout_s is out (one read for 0). The events an act
        raises are the sensors check's own steps (its event subscriptions)."""
        deadline = time.monotonic() + timeout_s
        while True:
            value = await self.read(endpoint, cluster, attribute)
            if predicate(value) or time.monotonic() >= deadline:
                return predicate(value), value
            await asyncio.sleep(0.2)

    def within(self, pace):
        return self.WITHIN_S[pace]


class Check:
    """One controller on a fabric of its own, the device it commissions, and the report."""

    def __init__(self, args):
        self.args = args
        # Written after every step: a run that is killed still leaves what it did.
        self.report = Report("interop", args.report, write_each=True)
        self.controller = None
        self.driver = ReadDriver(self)

    # --- the report (checks.report, shared with Home Assistant's checker) -------------------

    @property
    def steps(self):
        return self.report.steps

    def record(self, name, ok, **values):
        return self.report.record(name, ok, **values)

    async def step(self, name, body):
        """Runs `body` (a coroutine giving (ok, values)) as a step; a raise is a failed step."""
        return await self.report.step(name, body, timeout_s=STEP_TIMEOUT_S)

    def passed(self):
        return self.report.all_passed()

    def summary(self, label):
        self.report.label = label
        self.report.summary()

    # --- the controller -------------------------------------------------------------------

    def start_controller(self):
        chip.native.Init()
        # Kept on self: when the stack or the authority manager is collected, it shuts the
        # controller down.
        self.stack = ChipStack(persistentStoragePath=os.path.join(self.args.workdir, "controller-storage.json"),
                               enableServerInteractions=False)
        self.authorities = chip.CertificateAuthority.CertificateAuthorityManager(chipStack=self.stack)
        self.authorities.LoadAuthoritiesFromStorage()
        authorities = self.authorities
        authority = authorities.activeCaList[0] if authorities.activeCaList else authorities.NewCertificateAuthority()
        admin = authority.adminList[0] if authority.adminList else authority.NewFabricAdmin(vendorId=0xFFF1, fabricId=1)
        self.controller = admin.NewController(paaTrustStorePath=self.args.paa)

    async def commission(self):
        start = time.monotonic()
        try:
            await self.controller.CommissionOnNetwork(
                nodeId=NODE_ID, setupPinCode=self.args.passcode,
                filterType=chip.discovery.FilterType.LONG_DISCRIMINATOR, filter=self.args.discriminator)
        except Exception as error:
            return self.record("commission", False, error=f"{type(error).__name__}: {error}")
        return self.record("commission", True, ms=elapsed_ms(start))

    async def read(self, endpoint, attribute):
        """One attribute of one endpoint, decoded; a decode failure raises."""
        result = await self.controller.ReadAttribute(NODE_ID, [(endpoint, attribute)])
        for cluster_values in result[endpoint].values():
            if attribute in cluster_values:
                value = cluster_values[attribute]
                if isinstance(value, Clusters.Attribute.ValueDecodeFailure):
                    raise RuntimeError(f"{attribute.__name__}: {value.Reason}")
                return value
        raise KeyError(f"the read of {attribute.__name__} on endpoint {endpoint} reported nothing")

    async def invoke(self, endpoint, command):
        return await self.controller.SendCommand(NODE_ID, endpoint, command)

    # --- what is checked --------------------------------------------------------------------

    async def endpoints(self):
        """Endpoint 0 and its PartsList, each with its server clusters (a step per endpoint)."""
        Descriptor = Clusters.Descriptor.Attributes
        servers = {}
        try:
            for endpoint in [0] + list(await self.read(0, Descriptor.PartsList)):
                server_list = await self.read(endpoint, Descriptor.ServerList)
                servers[endpoint] = set(server_list)
                device_types = await self.read(endpoint, Descriptor.DeviceTypeList)
                # In the device's own order: the report says what the device answered.
                self.record(f"descriptor ep{endpoint}", True, servers=[hex(s) for s in server_list],
                            deviceTypes=[hex(t.deviceType) for t in device_types])
        except Exception as error:
            self.record("descriptor", False, error=f"{type(error).__name__}: {error}")
            return None
        return servers

    async def basic_information(self):
        Info = Clusters.BasicInformation.Attributes
        values = {}
        for attribute in (Info.DataModelRevision, Info.VendorName, Info.VendorID, Info.ProductName,
                          Info.ProductID, Info.NodeLabel, Info.HardwareVersion, Info.SoftwareVersion,
                          Info.SoftwareVersionString):
            values[attribute.__name__] = await self.read(0, attribute)
        await self.controller.WriteAttribute(NODE_ID, [(0, Info.NodeLabel("interop-label"))])
        label = await self.read(0, Info.NodeLabel)
        typed = isinstance(values["VendorName"], str) and isinstance(values["VendorID"], int)
        return typed and label == "interop-label", {
            "values": {name: str(value) for name, value in values.items()}, "nodeLabelAfterWrite": label}

    async def on_off(self, endpoint):
        """On and Off (checks.clusters), each read back."""
        return await clusters.follow_all(self.driver, endpoint, (await clusters.on_off(self.driver, endpoint))[:2])

    async def toggle(self, endpoint):
        return await clusters.follow(self.driver, endpoint, clusters.TOGGLE)

    async def level_control(self, endpoint):
        """MoveToLevelWithOnOff at once (checks.clusters), then MoveToLevel over 1 s."""
        moves = await clusters.level_control(self.driver, endpoint) + [clusters.LEVEL_TRANSITION]
        return await clusters.follow_all(self.driver, endpoint, moves)

    async def window_covering(self, endpoint):
        """GoToLiftPercentage, UpOrOpen, DownOrClose (checks.clusters): the target at once, the
        position once the covering has moved."""
        moves = await clusters.window_covering(self.driver, endpoint)
        ok, seen = await clusters.follow_all(self.driver, endpoint, moves)
        return ok, seen if moves else {"skipped": "no position-aware lift (features LF, PA_LF)"}

    async def color_control(self, endpoint):
        """Each colour space the FeatureMap declares: colour temperature over a transition (and
        clamped to the physical minimum), x/y, hue and saturation, the colour loop moving the
        enhanced hue; ColorMode follows each; with Level Control's CoupleColorTempToLevel set,
        full brightness gives CoupleColorTempToLevelMinMireds."""
        Color = Clusters.ColorControl
        A = Color.Attributes
        C = Color.Commands
        features = int(await self.read(endpoint, A.FeatureMap))
        await self.invoke(endpoint, Clusters.OnOff.Commands.On())
        # Each colour space at once with ColorMode (checks.clusters, as Home Assistant's check).
        ok, seen = await clusters.follow_all(self.driver, endpoint, await clusters.color_control(self.driver, endpoint))
        seen["featureMap"] = features
        if features & 0x10:
            transition = await clusters.color_temperature_transition(self.driver, endpoint)
            moved, seen["transition"] = await clusters.follow(self.driver, endpoint, transition)
            minimum = await self.read(endpoint, A.ColorTempPhysicalMinMireds)
            await self.invoke(endpoint, C.MoveToColorTemperature(
                colorTemperatureMireds=1, transitionTime=0, optionsMask=0, optionsOverride=0))
            seen["clampedTo"] = await self.read(endpoint, A.ColorTemperatureMireds)
            ok = ok and moved and seen["clampedTo"] == minimum
            await self.invoke(endpoint, C.StepColorTemperature(
                stepMode=Color.Enums.StepModeEnum.kUp, stepSize=100, transitionTime=0, colorTemperatureMinimumMireds=0,
                colorTemperatureMaximumMireds=0, optionsMask=0, optionsOverride=0))
            seen["stepped"] = await self.read(endpoint, A.ColorTemperatureMireds)
            ok = ok and seen["stepped"] == minimum + 100
            options = int(await self.read(endpoint, Clusters.LevelControl.Attributes.Options))
            if options & 0x02:
                couple = await self.read(endpoint, A.CoupleColorTempToLevelMinMireds)
                await self.invoke(endpoint, Clusters.LevelControl.Commands.MoveToLevel(
                    level=254, transitionTime=0, optionsMask=0, optionsOverride=0))
                seen["coupledAt254"] = await self.read(endpoint, A.ColorTemperatureMireds)
                ok = ok and seen["coupledAt254"] == couple
        if features & 0x04:
            flags = Color.Bitmaps.UpdateFlagsBitmap
            await self.invoke(endpoint, C.ColorLoopSet(
                updateFlags=flags.kUpdateAction | flags.kUpdateTime, action=Color.Enums.ColorLoopActionEnum.kActivateFromEnhancedCurrentHue,
                direction=Color.Enums.ColorLoopDirectionEnum.kIncrement, time=5, startHue=0, optionsMask=0, optionsOverride=0))
            first = await self.read(endpoint, A.EnhancedCurrentHue)
            await asyncio.sleep(0.5)
            second = await self.read(endpoint, A.EnhancedCurrentHue)
            active = await self.read(endpoint, A.ColorLoopActive)
            await self.invoke(endpoint, C.ColorLoopSet(
                updateFlags=flags.kUpdateAction, action=Color.Enums.ColorLoopActionEnum.kDeactivate,
                direction=Color.Enums.ColorLoopDirectionEnum.kIncrement, time=0, startHue=0, optionsMask=0, optionsOverride=0))
            stopped = await self.read(endpoint, A.ColorLoopActive)
            seen["loop"] = {"active": active, "hueMoved": first != second, "stopped": stopped == 0}
            ok = ok and active == 1 and first != second and stopped == 0
        return ok, seen

    async def subscription(self, endpoint):
        """A subscription to OnOff reports a change another invoke makes."""
        OnOff = Clusters.OnOff
        loop = asyncio.get_running_loop()
        reported = asyncio.Event()
        subscription = await self.controller.ReadAttribute(
            NODE_ID, [(endpoint, OnOff.Attributes.OnOff)], reportInterval=(0, 10))
        subscription.SetAttributeUpdateCallback(lambda path, transaction: loop.call_soon_threadsafe(reported.set))
        await asyncio.sleep(0.3)  # the priming report may still be on its way
        reported.clear()
        now_on = await self.read(endpoint, OnOff.Attributes.OnOff)
        await self.invoke(endpoint, OnOff.Commands.Off() if now_on else OnOff.Commands.On())
        try:
            await asyncio.wait_for(reported.wait(), 5)
            got = True
        except asyncio.TimeoutError:
            got = False
        subscription.Shutdown()
        return got, {"reportReceived": got}

    async def startup_number(self, event_min=None):
        """The BasicInformation StartUp events the node holds (event number, software version,
        priority), read as events (with EventMin when given)."""
        Basic = Clusters.BasicInformation
        events = await self.controller.ReadEvent(NODE_ID, [(0, Basic.Events.StartUp, 0)], eventNumberFilter=event_min)
        return [(e.Header.EventNumber, e.Data.softwareVersion, e.Header.Priority.value) for e in events
                if isinstance(e.Data, Basic.Events.StartUp)]

    async def startup_event(self):
        """BasicInformation StartUp (Core 11.1.6.1): one critical event with the node's
        SoftwareVersion; EventMin past it leaves it out; an urgent event subscription primes with it."""
        Basic = Clusters.BasicInformation
        startups = await self.startup_number()
        version = await self.read(0, Basic.Attributes.SoftwareVersion)
        number = startups[-1][0] if startups else None
        after = await self.startup_number(event_min=number + 1) if number is not None else None
        subscription = await self.controller.ReadEvent(NODE_ID, [(0, Basic.Events.StartUp, 1)], reportInterval=(0, 10))
        primed = [e.Header.EventNumber for e in subscription.GetEvents() if isinstance(e.Data, Basic.Events.StartUp)]
        subscription.Shutdown()
        ok = (len(startups) == 1 and startups[0][1] == version and startups[0][2] == 2 and after == []
              and primed == [number])
        # Counts and comparisons only: event numbers differ from run to run (they never go back).
        return ok, {"startUpEvents": len(startups), "carriesSoftwareVersion": bool(startups) and startups[-1][1] == version,
                    "critical": bool(startups) and startups[-1][2] == 2, "afterEventMin": after,
                    "primedWithIt": primed == [number]}

    async def latency(self, endpoint, count):
        samples = []
        for index in range(count):
            command = Clusters.OnOff.Commands.On() if index % 2 == 0 else Clusters.OnOff.Commands.Off()
            start = time.perf_counter()
            await self.invoke(endpoint, command)
            samples.append((time.perf_counter() - start) * 1000)
        return True, {"invokes": count, "p50_ms": round(median(samples), 3), "p99_ms": round(percentile(samples, 0.99), 3)}

    async def commissioned_endpoints(self):
        """Starts the controller, commissions the device and walks its endpoints: their server
        clusters, or None when a step failed."""
        self.start_controller()
        if not await self.commission():
            return None
        return await self.endpoints()

    async def run(self):
        servers = await self.commissioned_endpoints()
        if servers is None:
            return
        await self.step("basic-information ep0", self.basic_information())
        await self.step("basic-information StartUp event", self.startup_event())
        first_on_off = None
        for endpoint, server_clusters in servers.items():
            if endpoint == 0:
                continue
            if Clusters.OnOff.id in server_clusters:
                first_on_off = endpoint if first_on_off is None else first_on_off
                await self.step(f"onoff ep{endpoint}", self.on_off(endpoint))
                await self.step(f"onoff toggle ep{endpoint}", self.toggle(endpoint))
            if Clusters.LevelControl.id in server_clusters:
                await self.step(f"level-control ep{endpoint}", self.level_control(endpoint))
            if Clusters.WindowCovering.id in server_clusters:
                await self.step(f"window-covering ep{endpoint}", self.window_covering(endpoint))
            if Clusters.ColorControl.id in server_clusters:
                await self.step(f"color-control ep{endpoint}", self.color_control(endpoint))
        if first_on_off is not None:
            await self.step(f"subscribe onoff ep{first_on_off}", self.subscription(first_on_off))
            if self.args.latency:
                await self.step(f"invoke latency ep{first_on_off}", self.latency(first_on_off, self.args.latency))
        present = set().union(*servers.values())
        for name in self.args.require:
            self.record(f"require {name}", REQUIRABLE[name] in present)


def options(description):
    """The options every checker takes (run.sh passes all of them)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--passcode", type=int, required=True)
    parser.add_argument("--discriminator", type=int, required=True)
    parser.add_argument("--paa", required=True, help="the PAA trust store (a directory of DER certificates)")
    parser.add_argument("--workdir", required=True, help="the controller's directory; the device's is ../device")
    parser.add_argument("--report", required=True, help="the JSON report to write")
    parser.add_argument("--latency", type=int, default=0, help="timed On/Off invokes (0: none)")
    parser.add_argument("--require", action="append", default=[], choices=sorted(REQUIRABLE))
    return parser


def main(check_type=None, label="interop", complete=lambda steps: True):
    """Runs a checker: parses the options, runs `check_type(args).run()`, prints the closing
    line and leaves at once (the native stack aborts on interpreter teardown). The exit status
    is 0 when every step passed and `complete(steps)` holds."""
    check_type = check_type or Check
    args = options(sys.modules[check_type.__module__].__doc__.splitlines()[0]).parse_args()
    logging.basicConfig(level=logging.WARNING)
    check = check_type(args)
    try:
        asyncio.run(check.run())
    finally:
        check.report.write()
        check.summary(label)
        sys.stdout.flush()
        os._exit(0 if check.passed() and complete(check.steps) else 1)


if __name__ == "__main__":
    main()
