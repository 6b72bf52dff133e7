"""A second administrator for ohf_check.py: the connectedhomeip Python controller (the build
Home Assistant's Matter server pins) on a host of its own, with a fabric of its own.

    second_admin.py --workdir DIR --paa DIR serve

One process serves a whole run (starting the native stack costs seconds; a command, about
one): it reads one JSON request a line on stdin and answers each with one JSON line on stdout,
carrying the request's "id". The native stack's log goes to stderr. Requests:

    {"id": 1, "verb": "commission", "code": CODE, "nodeId": N, "label": TEXT, "toggle": [EP, ...]}
    {"id": 2, "verb": "fabrics", "nodeId": N}
    {"id": 3, "verb": "close"}

`commission` commissions the node with a code from the first admin's commissioning window,
writes BasicInformation NodeLabel and sends OnOff Toggle on each `toggle` endpoint (changes the
first admin must see through its own subscription). `fabrics` reads the node's fabric table
unfiltered. A failed request answers {"id": …, "error": "…"}; each is bounded by --timeout.
The process ends on `close` or when stdin closes (its caller is gone).
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


async def commission(controller, request):
    node_id, toggles = int(request["nodeId"]), [int(ep) for ep in request.get("toggle", [])]
    start = time.monotonic()
    # Seen once in a whole home on one host (the Counter Lights, a lone-clone CI run on 2026-11-26): PASE failed
    # with "Incorrect state" after its timeout, the symptom group_check.py retries. The
    # connectedhomeip resolver can hand a discovery the address of an SRV it is still resolving
    # for another node. The window stays open, so one more attempt is made, bounded.
    for attempt in range(2):
        try:
            await controller.CommissionWithCode(setupPayload=request["code"], nodeid=node_id,
                                                discoveryType=DiscoveryType.DISCOVERY_NETWORK_ONLY)
            break
        except Exception as error:
            if "Incorrect state" not in str(error) or attempt == 1:
                raise
            await asyncio.sleep(1)
    commissioned_ms = round((time.monotonic() - start) * 1000)
    await controller.WriteAttribute(node_id, [(0, Clusters.BasicInformation.Attributes.NodeLabel(request["label"]))])
    toggled = {}
    # A report to the first admin's subscription (MinIntervalFloor 1 s) went out for the
    # label; the toggle a floor later is reported at once, not held back behind it.
    if toggles:
        await asyncio.sleep(1.1)
    for endpoint in toggles:
        await controller.SendCommand(node_id, endpoint, Clusters.OnOff.Commands.Toggle())
        read = await controller.ReadAttribute(node_id, [(endpoint, Clusters.OnOff.Attributes.OnOff)])
        toggled[str(endpoint)] = read[endpoint][Clusters.OnOff][Clusters.OnOff.Attributes.OnOff]
    return {"commissionedMs": commissioned_ms, "label": request["label"], "onOffAfterToggle": toggled,
            "changedAt": time.time()}


async def fabrics(controller, request):
    Credentials = Clusters.OperationalCredentials
    node_id = int(request["nodeId"])
    read = await controller.ReadAttribute(node_id, [(0, Credentials.Attributes.Fabrics),
                                                    (0, Credentials.Attributes.CurrentFabricIndex)],
                                          fabricFiltered=False)
    values = read[0][Credentials]
    table = values[Credentials.Attributes.Fabrics]
    return {"currentFabricIndex": values[Credentials.Attributes.CurrentFabricIndex],
            "fabrics": [{"fabricIndex": f.fabricIndex, "vendorID": int(f.vendorID), "fabricID": f.fabricID,
                         "nodeID": f.nodeID, "label": f.label} for f in table]}


VERBS = {"commission": commission, "fabrics": fabrics}


async def serve(controller, answers, timeout_s):
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return  # the caller is gone
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("expected a JSON object")
        except ValueError as error:
            answer = {"error": f"malformed request {line.strip()[:80]!r}: {error}"}
        else:
            verb = request.get("verb")
            if verb == "close":
                answers.write(json.dumps({"id": request.get("id"), "closed": True}) + "\n")
                answers.flush()
                return
            body = VERBS.get(verb)
            try:
                if body is None:
                    raise ValueError(f"verb {verb!r}: expected one of {sorted(VERBS) + ['close']}")
                answer = await asyncio.wait_for(body(controller, request), timeout_s)
            except Exception as error:  # the caller records it as the step's failure
                answer = {"error": f"{type(error).__name__}: {error}"}
            answer = {"id": request.get("id"), **answer}
        answers.write(json.dumps(answer) + "\n")
        answers.flush()


def main():
    parser = argparse.ArgumentParser(description="A second Matter administrator for ohf_check.py")
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--paa", required=True)
    parser.add_argument("--timeout", type=float, default=120, help="seconds a request may take")
    parser.add_argument("verb", choices=["serve"])
    args = parser.parse_args()
    # Answers keep the real stdout; everything else written to fd 1 (the native stack's log,
    # which may leave a line open) goes to stderr.
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    try:
        stack, authorities, controller = start_controller(args.workdir, args.paa)
        answers.write(json.dumps({"ready": True}) + "\n")
        answers.flush()
        asyncio.run(serve(controller, answers, args.timeout))
        code = 0
    except Exception as error:
        answers.write(json.dumps({"error": f"{type(error).__name__}: {error}"}) + "\n")
        code = 1
    answers.flush()
    # The native stack's shutdown can hang on a half-open session; every answer is out already.
    os._exit(code)


if __name__ == "__main__":
    main()
