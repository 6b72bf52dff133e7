"""The cases' simulator hook, the all-clusters app's named pipe (--app-pid): each JSON line a
case writes there stands for an operator at the device, done on the device's control socket as
`matter-sim act` does it (one JSON request a connection, one line back).

    python3 app_pipe.py FIFO CONTROL_SOCKET LOG

One process for the whole run, not a `matter-sim act` per line: a case reads the result 50 ms
after it writes (chip.testing's write_to_app_pipe), which a process started per line under load
misses (TC-OCC-3.1 step 5b read the occupancy before the act arrived). Commands with no act
are left undone (the case then fails and says why).
"""
import json
import os
import socket
import sys


def act(command: dict) -> tuple[str, str | None] | None:
    """The control socket's action and value for one pipe command, or None."""
    name = command.get("Name")
    if name == "SimulateLongPress":
        return "press", "long"
    if name == "SimulateMultiPress":
        presses = int(command.get("MultiPressNumPresses", 1))
        return "press", {1: "single", 2: "double"}.get(presses, str(presses))
    if name == "SetOccupancy":
        return ("occupied" if int(command.get("Occupancy", 0)) else "unoccupied"), None
    return None


def send(control: str, action: str, value: str | None) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(control)
        s.sendall((json.dumps({"node": "all", "action": action, "value": value}) + "\n").encode())
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = s.recv(4096)
            if not chunk:
                break
            answer += chunk
        return answer.decode(errors="replace").strip()


def main() -> None:
    fifo, control, log_path = sys.argv[1:4]
    # Opened read-write: the pipe stays open between writers (no end of file when a case closes it).
    pipe = os.fdopen(os.open(fifo, os.O_RDWR), "r", buffering=1)
    with open(log_path, "a", buffering=1) as log:
        for line in pipe:
            try:
                what = act(json.loads(line))
            except (ValueError, TypeError, AttributeError) as error:
                log.write(f"not a command ({error}): {line}")
                continue
            if what is None:
                log.write(f"no act for: {line}")
                continue
            try:
                log.write(f"{what}: {send(control, *what)}\n")
            except OSError as error:
                log.write(f"{what}: control socket {control}: {error}\n")


if __name__ == "__main__":
    main()
