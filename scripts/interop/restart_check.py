"""Restart check with the reference controller: commission a device, turn it on, restart the
device's process, and read it again over a new CASE session without commissioning again.

Runs as the checker of scripts/interop/run.sh (--checker), with the device command wrapped in
restarting-device.sh, which records the device's PID and starts the command again when it ends.
"""

import asyncio
import os
import signal
import time

import chip.clusters as Clusters
from reference_check import NODE_ID, Check, elapsed_ms, main


async def wait_for_restart(pidfile, old_pid, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            pid = int(open(pidfile).read().strip())
            if pid != old_pid:
                return pid
        except (OSError, ValueError):
            pass  # restarting-device.sh is rewriting it
        await asyncio.sleep(0.2)
    raise TimeoutError("the device process did not come back")


class RestartCheck(Check):
    def __init__(self, args):
        super().__init__(args)
        # restarting-device.sh writes the PID into the device's directory, ../device.
        self.pidfile = os.path.join(os.path.dirname(os.path.abspath(args.workdir)), "device", "device.pid")

    async def read_after_restart(self):
        OnOff = Clusters.OnOff.Attributes.OnOff
        NodeLabel = Clusters.BasicInformation.Attributes.NodeLabel
        await self.invoke(1, Clusters.OnOff.Commands.On())
        before = await self.read(1, OnOff)
        startup_before = await self.startup_number()
        label = "restart-check"
        await self.controller.WriteAttribute(NODE_ID, [(0, NodeLabel(label))])
        old_pid = int(open(self.pidfile).read().strip())
        os.kill(old_pid, signal.SIGTERM)
        new_pid = await wait_for_restart(self.pidfile, old_pid)
        self.controller.ExpireSessions(NODE_ID)  # the old CASE session died with the process
        start = time.monotonic()
        while True:
            try:
                after = await self.read(1, OnOff)
                label_after = await self.read(0, NodeLabel)
                break
            except Exception:
                if time.monotonic() - start > 60:
                    raise
                await asyncio.sleep(1)
        # Event numbers never go back, across a restart too (Core 7.14.2.1): the new StartUp
        # is numbered past the old one.
        startup_after = await self.startup_number()
        numbers_ok = (len(startup_before) == 1 and len(startup_after) == 1
                      and startup_after[0][0] > startup_before[0][0])
        ok = before is True and after is True and label_after == label and numbers_ok
        return ok, {"oldPid": old_pid, "newPid": new_pid, "onOffBefore": before, "onOffAfter": after,
                    "nodeLabelAfter": label_after, "reconnectMs": elapsed_ms(start),
                    "startUpNumberedPastTheLastRun": numbers_ok}

    async def run(self):
        self.start_controller()
        if await self.commission():
            await self.step("read after restart without commissioning", self.read_after_restart())


if __name__ == "__main__":
    main(RestartCheck, "restart-check", complete=lambda steps: len(steps) == 2)
