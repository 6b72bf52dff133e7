"""A second administrator for ohf_check.py: the connectedhomeip Python controller (the build
Home Assistant's Matter server pins) on a host of its own, with a fabric of its own.

    second_admin.py --workdir DIR --paa DIR commission --code CODE --node-id N --label TEXT [--toggle EP]...
    second_admin.py --workdir DIR --paa DIR fabrics --node-id N

`commission` commissions the node with a code from the first admin's commissioning window,
writes BasicInformation NodeLabel and sends OnOff Toggle on each --toggle endpoint (changes the
first admin must see through its own subscription). `fabrics` reads the node's fabric table
unfiltered. Each prints one JSON object on stdout; the exit status is 0 only on success.
"""

import argparse
import asyncio
import json
import os
import sys
import time

import chip.CertificateAuthority
import chip.clusters as Clusters
import chip.native
from chip.ChipDeviceCtrl import DiscoveryType
from chip.ChipStack import ChipStack


def start_controller(workdir, paa):
    chip.native.Init()
    stack = ChipStack(persistentStoragePath=os.path.join(workdir, "second-admin-storage.json"),
                      enableServerInteractions=False)
    authorities = chip.CertificateAuthority.CertificateAuthorityManager(chipStack=stack)
    authorities.LoadAuthoritiesFromStorage()
    authority = authorities.activeCaList[0] if authorities.activeCaList else authorities.NewCertificateAuthority()
    # Fabric 2 under vendor 0xFFF2: nothing like the first admin's, so the device holds two.
    admin = authority.adminList[0] if authority.adminList else authority.NewFabricAdmin(vendorId=0xFFF2, fabricId=2)
    return stack, authorities, admin.NewController(paaTrustStorePath=paa)


async def commission(controller, args):
    start = time.monotonic()
    # Seen once in a whole home on one host (the Counter Lights, a lone-clone CI run on 2026-11-26): PASE failed
    # with "Incorrect state" after its timeout, the symptom group_check.py retries. The
    # connectedhomeip resolver can hand a discovery the address of an SRV it is still resolving
    # for another node. The window stays open, so one more attempt is made, bounded.
    for attempt in range(2):
        try:
            await controller.CommissionWithCode(setupPayload=args.code, nodeid=args.node_id,
                                                discoveryType=DiscoveryType.DISCOVERY_NETWORK_ONLY)
            break
        except Exception as error:
            if "Incorrect state" not in str(error) or attempt == 1:
                raise
            await asyncio.sleep(1)
    commissioned_ms = round((time.monotonic() - start) * 1000)
    await controller.WriteAttribute(args.node_id, [(0, Clusters.BasicInformation.Attributes.NodeLabel(args.label))])
    toggled = {}
    # A report to the first admin's subscription (MinIntervalFloor 1 s) went out for the
    # label; the toggle a floor later is reported at once, not held back behind it.
    if args.toggle:
        await asyncio.sleep(1.1)
    for endpoint in args.toggle:
        await controller.SendCommand(args.node_id, endpoint, Clusters.OnOff.Commands.Toggle())
        read = await controller.ReadAttribute(args.node_id, [(endpoint, Clusters.OnOff.Attributes.OnOff)])
        toggled[str(endpoint)] = read[endpoint][Clusters.OnOff][Clusters.OnOff.Attributes.OnOff]
    return {"commissionedMs": commissioned_ms, "label": args.label, "onOffAfterToggle": toggled,
            "changedAt": time.time()}


async def fabrics(controller, args):
    Credentials = Clusters.OperationalCredentials
    read = await controller.ReadAttribute(args.node_id, [(0, Credentials.Attributes.Fabrics),
                                                         (0, Credentials.Attributes.CurrentFabricIndex)],
                                          fabricFiltered=False)
    values = read[0][Credentials]
    table = values[Credentials.Attributes.Fabrics]
    return {"currentFabricIndex": values[Credentials.Attributes.CurrentFabricIndex],
            "fabrics": [{"fabricIndex": f.fabricIndex, "vendorID": int(f.vendorID), "fabricID": f.fabricID,
                         "nodeID": f.nodeID, "label": f.label} for f in table]}


def main():
    parser = argparse.ArgumentParser(description="A second Matter administrator for ohf_check.py")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--paa", required=True)
    verbs = parser.add_subparsers(dest="verb", required=True)
    c = verbs.add_parser("commission")
    c.add_argument("--code", required=True)
    c.add_argument("--node-id", type=int, required=True)
    c.add_argument("--label", required=True)
    c.add_argument("--toggle", type=int, action="append", default=[])
    f = verbs.add_parser("fabrics")
    f.add_argument("--node-id", type=int, required=True)
    args = parser.parse_args()

    stack, authorities, controller = start_controller(args.workdir, args.paa)
    try:
        body = commission if args.verb == "commission" else fabrics
        result = asyncio.run(asyncio.wait_for(body(controller, args), 120))
        # On a line of its own: the native stack's log shares stdout and may leave a line open.
        sys.stdout.flush()
        print("\n" + json.dumps(result), flush=True)
        code = 0
    except Exception as error:  # the caller records it as the step's failure
        print("\n" + json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
        code = 1
    # The native stack's shutdown can hang on a half-open session; the answer is out already.
    sys.stdout.flush()
    os._exit(code)


if __name__ == "__main__":
    main()
