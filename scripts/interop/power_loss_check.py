"""Power-loss check with the reference controller: commission a device, then cut its power
(SIGKILL: no clean shutdown, no CloseSession to the controller) and time how long the controller
takes to read it again, as a controller that was never told would: no ExpireSessions hint.

Runs as the checker of scripts/interop/run.sh (--checker), with the device command wrapped in
restarting-device.sh, which records the device's PID and starts the command again when it ends.
POWER_LOSS_ROUNDS (default 2) cuts; each round's figure is from the new process's start to the
first successful read of OnOff (each read as long as the controller takes to give up).
"""

import asyncio
import os
import signal
import time

import chip.clusters as Clusters
from reference_check import NODE_ID, Check, elapsed_ms, main
from restart_check import wait_for_restart


class PowerLossCheck(Check):
    def __init__(self, args):
        super().__init__(args)
        self.pidfile = os.path.join(os.path.dirname(os.path.abspath(args.workdir)), "device", "device.pid")
        self.rounds = int(os.environ.get("POWER_LOSS_ROUNDS", "2"))

    async def power_cut(self):
        OnOff = Clusters.OnOff.Attributes.OnOff
        await self.invoke(1, Clusters.OnOff.Commands.On())
        before = await self.read(1, OnOff)
        old_pid = int(open(self.pidfile).read().strip())
        os.kill(old_pid, signal.SIGKILL)
        new_pid = await wait_for_restart(self.pidfile, old_pid)
        start = time.monotonic()
        attempts = []
        while True:
            attempt = time.monotonic()
            try:
                after = await self.read(1, OnOff)
                attempts.append({"ms": elapsed_ms(attempt), "ok": True})
                break
            except Exception as error:
                attempts.append({"ms": elapsed_ms(attempt), "error": f"{type(error).__name__}: {error}"[:160]})
                if time.monotonic() - start > 60:
                    raise
                await asyncio.sleep(0.1)
        return before is True and after is True, {
            "oldPid": old_pid, "newPid": new_pid, "onOffAfter": after, "recoveryMs": elapsed_ms(start),
            "attempts": attempts}

    async def run(self):
        self.start_controller()
        if await self.commission():
            for round in range(1, self.rounds + 1):
                await self.step(f"power cut {round}: read again", self.power_cut())


if __name__ == "__main__":
    main(PowerLossCheck, "power-loss-check", complete=lambda steps: len(steps) >= 2)
