"""What a person does at a light, a blind and a thermostat, seen by the reference controller:
commission a device, subscribe to the attribute each act changes, do the act at the device
(through the simulator's control socket, as `matter-sim act` does) and wait for the report.

Runs as the checker of scripts/interop/run.sh (--checker) for any device; each endpoint's
clusters decide what is done (checks.clusters' DEVICE_ACTS):
- OnOff: `button` (the device's own button) toggles OnOff; the subscription reports it.
- LevelControl: `dim 50` moves CurrentLevel to 127 (50 % of 254), turning the light on.
- WindowCovering: `cord close` sets TargetPositionLiftPercent100ths to 10000, `cord open` to 0.
- Thermostat: `dial 22.5` sets the setpoint of the mode it is in (heating: 2250).
"""

import asyncio

from chip.clusters.ClusterObjects import ALL_ATTRIBUTES
from reference_check import NODE_ID, ReadDriver, main
from sensors_check import SensorsCheck
from checks import clusters  # (reference_check put scripts/checks on sys.path)


class ReportDriver(ReadDriver):
    """What follows an act is seen as a report of a subscription made before it."""

    def __init__(self, check):
        super().__init__(check)
        self.subscription = None

    async def before(self, endpoint, move):
        loop = asyncio.get_running_loop()
        self.seen, self.arrived = [], asyncio.Event()
        self.subscription = await self.check.controller.ReadAttribute(
            NODE_ID, [(endpoint, ALL_ATTRIBUTES[move.cluster][move.attribute])], reportInterval=(0, 10))

        def reported(path, transaction):
            self.seen.append(transaction.GetAttribute(path))
            loop.call_soon_threadsafe(self.arrived.set)

        self.subscription.SetAttributeUpdateCallback(reported)
        await asyncio.sleep(0.3)  # the priming report may still be on its way
        self.seen.clear()

    async def wait_for(self, endpoint, cluster, attribute, predicate, timeout_s, events=()):
        """A report of a value that satisfies predicate within timeout_s."""
        deadline = asyncio.get_running_loop().time() + timeout_s
        try:
            while not any(predicate(value) for value in self.seen):
                self.arrived.clear()
                await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - asyncio.get_running_loop().time()))
            ok = True
        except asyncio.TimeoutError:
            ok = False
        finally:
            self.subscription.Shutdown()
        return ok, self.seen[-5:]


class ActsCheck(SensorsCheck):
    def __init__(self, args):
        super().__init__(args)
        self.driver = ReportDriver(self)

    async def run(self):
        servers = await self.commissioned_endpoints()
        if servers is None:
            return
        for endpoint, server_clusters in servers.items():
            if endpoint == 0:
                continue
            for cluster, moves in clusters.DEVICE_ACTS.items():
                for move in moves if cluster in server_clusters else ():
                    await self.step(f"act {move.title} ep{endpoint}", clusters.follow(self.driver, endpoint, move))


if __name__ == "__main__":
    # Commissioning and at least one act step.
    main(ActsCheck, "acts-check", complete=lambda steps: any(s["step"].startswith("act ") for s in steps))
