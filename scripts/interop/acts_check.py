"""What a person does at a light, a blind and a thermostat, seen by the reference controller:
commission a device, subscribe to the attribute each act changes, do the act at the device
(through the simulator's control socket, as `matter-sim act` does) and wait for the report.

Runs as the checker of scripts/interop/run.sh (--checker) for any device; each endpoint's
clusters decide what is done:
- OnOff: `button` (the device's own button) toggles OnOff; the subscription reports it.
- LevelControl: `dim 50` moves CurrentLevel to 127 (50 % of 254), turning the light on.
- WindowCovering: `cord close` sets TargetPositionLiftPercent100ths to 10000, `cord open` to 0.
- Thermostat: `dial 22.5` sets the setpoint of the mode it is in (heating: 2250).
"""

import asyncio

import chip.clusters as Clusters
from reference_check import NODE_ID, main
from sensors_check import SensorsCheck

REPORT_WAIT_S = 10


class ActsCheck(SensorsCheck):
    async def act_reported(self, endpoint, attribute, action, value, wanted):
        """Subscribes to `attribute`, does the act, and waits for a report of `wanted`."""
        loop = asyncio.get_running_loop()
        seen = []
        arrived = asyncio.Event()
        subscription = await self.controller.ReadAttribute(NODE_ID, [(endpoint, attribute)], reportInterval=(0, 10))

        def reported(path, transaction):
            current = transaction.GetAttribute(path)
            seen.append(current)
            if current == wanted:
                loop.call_soon_threadsafe(arrived.set)

        subscription.SetAttributeUpdateCallback(reported)
        await asyncio.sleep(0.3)  # the priming report may still be on its way
        seen.clear()
        self.act_ok(action, value)
        try:
            await asyncio.wait_for(arrived.wait(), REPORT_WAIT_S)
            ok = True
        except asyncio.TimeoutError:
            ok = False
        subscription.Shutdown()
        return ok, {"act": f"{action} {value or ''}".strip(), "wanted": wanted, "reported": seen[-5:]}

    async def button(self, endpoint):
        before = await self.read(endpoint, Clusters.OnOff.Attributes.OnOff)
        return await self.act_reported(endpoint, Clusters.OnOff.Attributes.OnOff, "button", None, not before)

    async def run(self):
        servers = await self.commissioned_endpoints()
        if servers is None:
            return
        for endpoint, clusters in servers.items():
            if endpoint == 0:
                continue
            if Clusters.OnOff.id in clusters:
                await self.step(f"act button ep{endpoint}", self.button(endpoint))
            if Clusters.LevelControl.id in clusters:
                await self.step(f"act dim ep{endpoint}", self.act_reported(
                    endpoint, Clusters.LevelControl.Attributes.CurrentLevel, "dim", "50", 127))
            if Clusters.WindowCovering.id in clusters:
                target = Clusters.WindowCovering.Attributes.TargetPositionLiftPercent100ths
                await self.step(f"act cord close ep{endpoint}", self.act_reported(endpoint, target, "cord", "close", 10000))
                await self.step(f"act cord open ep{endpoint}", self.act_reported(endpoint, target, "cord", "open", 0))
            if Clusters.Thermostat.id in clusters:
                await self.step(f"act dial ep{endpoint}", self.act_reported(
                    endpoint, Clusters.Thermostat.Attributes.OccupiedHeatingSetpoint, "dial", "22.5", 2250))


if __name__ == "__main__":
    # Commissioning and at least one act step.
    main(ActsCheck, "acts-check", complete=lambda steps: any(s["step"].startswith("act ") for s in steps))
