"""Restart check with the reference controller: commission a device, turn it on, restart the
device's process, and read it again over a new CASE session without commissioning again.

Runs in place of chip_check.py through run-interop.sh --checker, with the device command
wrapped in restarting-device.sh (which records the device PID and restarts it).
"""

import argparse
import asyncio
import os
import signal
import time

import chip.clusters as C
import chip_check
from chip_check import NODE_ID, attr, record, step


async def wait_for_restart(pidfile, old_pid, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = int(open(pidfile).read().strip())
            if pid != old_pid:
                return pid
        except (OSError, ValueError):
            pass
        await asyncio.sleep(0.2)
    raise TimeoutError("the device process did not come back")


async def read_after_restart(ctrl, pidfile):
    await ctrl.SendCommand(NODE_ID, 1, C.OnOff.Commands.On())
    before = await attr(ctrl, 1, C.OnOff.Attributes.OnOff)
    label = "restart-check"
    await ctrl.WriteAttribute(NODE_ID, [(0, C.BasicInformation.Attributes.NodeLabel(label))])
    old_pid = int(open(pidfile).read().strip())
    os.kill(old_pid, signal.SIGTERM)
    new_pid = await wait_for_restart(pidfile, old_pid)
    ctrl.ExpireSessions(NODE_ID)  # the old CASE session died with the process
    t0 = time.monotonic()
    deadline = t0 + 60
    while True:
        try:
            after = await attr(ctrl, 1, C.OnOff.Attributes.OnOff)
            node_label = await attr(ctrl, 0, C.BasicInformation.Attributes.NodeLabel)
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(1)
    ok = before is True and after is True and node_label == label
    return ok, {"oldPid": old_pid, "newPid": new_pid, "onOffBefore": before, "onOffAfter": after,
                "nodeLabelAfter": node_label, "reconnectMs": round((time.monotonic() - t0) * 1000, 1)}


async def run(args):
    import chip.CertificateAuthority
    import chip.discovery
    import chip.native
    from chip.ChipStack import ChipStack

    chip.native.Init()
    stack = ChipStack(persistentStoragePath=os.path.join(args.workdir, "controller-storage.json"),
                      enableServerInteractions=False)
    cam = chip.CertificateAuthority.CertificateAuthorityManager(chipStack=stack)
    cam.LoadAuthoritiesFromStorage()
    ca = cam.activeCaList[0] if cam.activeCaList else cam.NewCertificateAuthority()
    fabric = ca.adminList[0] if ca.adminList else ca.NewFabricAdmin(vendorId=0xFFF1, fabricId=1)
    ctrl = fabric.NewController(paaTrustStorePath=args.paa)
    t0 = time.monotonic()
    try:
        await ctrl.CommissionOnNetwork(nodeId=NODE_ID, setupPinCode=args.passcode,
                                       filterType=chip.discovery.FilterType.LONG_DISCRIMINATOR,
                                       filter=args.discriminator)
        record("commission", True, ms=round((time.monotonic() - t0) * 1000, 1))
    except Exception as exc:
        record("commission", False, error=f"{type(exc).__name__}: {exc}")
        return
    pidfile = os.path.join(os.path.dirname(os.path.abspath(args.workdir)), "device", "device.pid")
    await step("read after restart without commissioning", read_after_restart(ctrl, pidfile))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--passcode", type=int, required=True)
    p.add_argument("--discriminator", type=int, required=True)
    p.add_argument("--paa", required=True)
    p.add_argument("--workdir", required=True)
    p.add_argument("--report", required=True)
    p.add_argument("--latency", type=int, default=0)
    p.add_argument("--require", action="append", default=[])
    args = p.parse_args()
    chip_check.REPORT_PATH = args.report
    try:
        asyncio.run(run(args))
    finally:
        report = chip_check.REPORT
        ok = len(report) == 2 and all(e["ok"] for e in report)
        print(f"restart-check: {sum(e['ok'] for e in report)} passed, {sum(not e['ok'] for e in report)} failed", flush=True)
        os._exit(0 if ok else 1)


if __name__ == "__main__":
    main()
