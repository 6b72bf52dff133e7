"""What a person does at a device (`matter-sim act`): one JSON request a line on the control
socket of the simulator that runs it, one JSON answer back."""

import json
import os
import socket


def act(directory, action, value=None, node="all", own=None):
    """Sends `action` (with `value`) for `node` to the control socket under `directory` (a
    simulator's state root; `.matter-sim` is a dot directory, which glob's ** skips) and returns
    the answer. Several sockets (a home run one process per device gives each node its own, in
    a state directory named after its serial number) need `own`, that name."""
    sockets = [os.path.join(d, "control.sock") for d, _, files in os.walk(directory) if "control.sock" in files]
    if own is not None:
        sockets = [p for p in sockets if os.path.basename(os.path.dirname(p)) == own] or sockets
    elif len(sockets) > 1:
        raise RuntimeError(f"expected one control socket under {directory}, found {sockets}")
    if not sockets:
        raise RuntimeError(f"no control socket under {directory}")
    request = {"node": node, "action": action}
    if value is not None:
        request["value"] = value
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(min(sockets, key=len))
        s.sendall((json.dumps(request) + "\n").encode())
        answer = s.makefile().readline()
    return json.loads(answer)
