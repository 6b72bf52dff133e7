"""Drives Home Assistant's Matter server (python-matter-server) through its WebSocket API
against simulated devices, and checks what it sees. Runs on the server's host of the fake LAN
that scripts/ohf-check.sh makes; the devices run on other hosts under device-supervisor.sh,
which this script powers off (SIGKILL) and on again.

Per node: commission_with_code with its manual code, the interview's endpoints, device types,
clusters and BasicInformation against `matter-sim describe --json`; each cluster's steps
(checks.clusters, shared with the reference controller's checks): device_command On, Off,
Toggle, MoveToLevelWithOnOff, the colour spaces, GoToLiftPercentage, UpOrOpen, DownOrClose,
UnlockDoor, LockDoor, SetpointRaiseLower and a setpoint write with the server's kept values
following, and what a person does at a sensor, switch or lock (the simulator's control
socket, as `matter-sim act`) reaching the server as node events and kept values; read_attribute /
write_attribute of NodeLabel. Then for all nodes at once a
power cut and restart (unavailable, available again without commissioning, a command works).
Then per node a second admin (second_admin.py on its own host, one process for the run) commissioned through the
server's open_commissioning_window, whose change the server sees, and remove_node, after which
the device holds only the second admin's fabric. Last, the server's own warnings and errors
about the nodes. Prints a PASS/FAIL line per step and ends "ohf: N passed, M failed".
"""

import argparse
import asyncio
import copy
import json
import os
import re
import shutil
import signal
import sys
import time

import aiohttp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checks"))
from checks.control import act  # noqa: E402 (the shared package, found above)
from checks import clusters, dumps  # noqa: E402
from checks.jsonl import objects  # noqa: E402
from checks.report import Report, device_line  # noqa: E402
from ha_platforms import platforms  # noqa: E402 (beside this file)

BASIC, DESCRIPTOR = 40, 29
ONOFF, LEVEL, COVERING, COLOR = clusters.ON_OFF, clusters.LEVEL_CONTROL, clusters.WINDOW_COVERING, clusters.COLOR_CONTROL
EVENT_S = 5.0           # an urgent event reaches the server well within this
FOLLOW_S = 1.0          # the bound: the server's kept value follows within 1 s
REPORT_FLOOR_S = 1.0    # the server subscribes with MinIntervalFloor 1 s; commands are spaced by it


def now_ms(start):
    return round((time.monotonic() - start) * 1000)



class SecondAdmin:
    """second_admin.py serving one JSON request a line for the whole run (its native stack
    starts once, not twice per node). Every request is bounded; close() ends it whatever its
    state, and it ends by itself when our end of its stdin closes."""

    START_S = 90      # the native stack's start
    REQUEST_S = 150   # second_admin.py bounds each request by 120 s itself

    def __init__(self, command, log_path):
        self.command = command
        self.log_path = log_path
        self.process = None
        self.next_id = 0

    async def start(self):
        self.log = open(self.log_path, "ab")
        # A session of its own: close() kills the wrapper and whatever it started.
        self.process = await asyncio.create_subprocess_exec(
            *self.command, "serve", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=self.log, start_new_session=True)
        await self.answer(None, self.START_S)

    async def answer(self, request_id, timeout_s):
        """The next answer line carrying request_id (the ready line for None)."""
        deadline = time.monotonic() + timeout_s
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), max(0.1, deadline - time.monotonic()))
            if not line:
                raise RuntimeError(f"second admin ended (exit {await self.process.wait()}); log: {self.log_path}")
            answer = next(objects([line]), None)
            if answer is None:
                continue  # not an answer: keep reading
            if "error" in answer and answer.get("id") in (request_id, None):
                raise RuntimeError(f"second admin: {answer['error']} (log: {self.log_path})")
            if answer.get("id") == request_id:
                return answer

    async def request(self, verb, **args):
        self.next_id += 1
        self.process.stdin.write((json.dumps({"id": self.next_id, "verb": verb, **args}) + "\n").encode())
        await self.process.stdin.drain()
        return await self.answer(self.next_id, self.REQUEST_S)

    async def close(self):
        if self.process is None:
            return
        if self.process.returncode is None:
            try:
                await self.request("close")
                await asyncio.wait_for(self.process.wait(), 5)
            except Exception:
                pass
        if self.process.returncode is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            await self.process.wait()
        self.log.close()


class ServerError(Exception):
    pass


class Server:
    """The WebSocket API: commands with message IDs, events kept in a node cache."""

    def __init__(self, url):
        self.url = url
        self.next_id = 0
        self.pending = {}
        self.nodes = {}
        self.changed = asyncio.Condition()
        self.events = []

    async def connect(self, timeout_s):
        self.session = aiohttp.ClientSession()
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.ws = await self.session.ws_connect(self.url, max_msg_size=0)
                break
            except aiohttp.ClientError:
                if time.monotonic() > deadline:
                    raise
                await asyncio.sleep(0.5)
        self.info = (await self.ws.receive_json())
        self.reader = asyncio.create_task(self.read())
        for node in await self.command("start_listening"):
            self.nodes[node["node_id"]] = node

    async def close(self):
        self.reader.cancel()
        await self.ws.close()
        await self.session.close()

    async def read(self):
        async for message in self.ws:
            data = json.loads(message.data)
            if "message_id" in data and data["message_id"] in self.pending:
                self.pending.pop(data["message_id"]).set_result(data)
            elif "event" in data:
                await self.on_event(data["event"], data.get("data"))

    async def on_event(self, event, data):
        self.events.append((time.monotonic(), event, data))
        async with self.changed:
            if event in ("node_added", "node_updated"):
                self.nodes[data["node_id"]] = data
            elif event == "attribute_updated":
                node_id, path, value = data
                if node_id in self.nodes:
                    self.nodes[node_id]["attributes"][path] = value
            elif event == "node_removed":
                self.nodes.pop(data, None)
            self.changed.notify_all()

    async def command(self, command, timeout_s=180, **args):
        self.next_id += 1
        message_id = str(self.next_id)
        future = asyncio.get_running_loop().create_future()
        self.pending[message_id] = future
        await self.ws.send_json({"message_id": message_id, "command": command, "args": args})
        answer = await asyncio.wait_for(future, timeout_s)
        if "error_code" in answer:
            raise ServerError(f"{command}: error {answer['error_code']}: {answer.get('details')}")
        return answer.get("result")

    async def wait_for(self, predicate, timeout_s):
        """Waits until predicate() is true on the cache; returns the seconds it took, or None."""
        start = time.monotonic()
        async with self.changed:
            try:
                await asyncio.wait_for(self.changed.wait_for(predicate), timeout_s)
            except asyncio.TimeoutError:
                return None
        return time.monotonic() - start

    async def quiet(self, node_id, quiet_s, timeout_s=15):
        """Waits until the node's last report is quiet_s old, so the next one is not held back
        by the subscription's MinIntervalFloor (a transition still reporting, say)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            last = max((t for t, e, d in self.events if self.about(e, d) == node_id), default=0)
            wait = last + quiet_s - time.monotonic()
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    @staticmethod
    def about(event, data):
        """The node an event is about (a report, or the node's data after (re)subscribing)."""
        if event == "attribute_updated":
            return data[0]
        # An event report is a report too: the next one waits out MinIntervalFloor after it.
        if event in ("node_added", "node_updated", "node_event") and isinstance(data, dict):
            return data.get("node_id")
        return None

    def attribute(self, node_id, path):
        return self.nodes.get(node_id, {}).get("attributes", {}).get(path)

    def available(self, node_id):
        return self.nodes.get(node_id, {}).get("available") is True


def field(struct, number, name):
    """A struct as the server keeps it: TLV tag numbers as keys (or field names)."""
    if isinstance(struct, dict):
        return struct.get(str(number), struct.get(name))
    return None


class ServerDriver:
    """checks.clusters' driver for one node through the server's WebSocket API: device_command,
    write_attribute, and the values the server keeps (its subscription's), which must follow
    within the issue's bound; an act's node events must come too, in order."""

    WITHIN_S = {clusters.AT_ONCE: FOLLOW_S, clusters.BEHIND_REPORTS: FOLLOW_S + REPORT_FLOOR_S,
                clusters.TRANSITION: 5.0, clusters.MOVEMENT: 60.0, clusters.ACT: EVENT_S}

    def __init__(self, check, device):
        self.check = check
        self.server = check.server
        self.device = device
        self.since = 0
        self.may_be_late = False

    async def read(self, endpoint, cluster, attribute):
        return self.server.attribute(self.device.node_id, f"{endpoint}/{cluster}/{attribute}")

    async def command(self, endpoint, cluster, name, fields, timed_ms=None):
        extra = {"timed_request_timeout_ms": timed_ms} if timed_ms else {}
        await self.server.command("device_command", node_id=self.device.node_id, endpoint_id=endpoint,
                                  cluster_id=cluster, command_name=name, payload=fields, **extra)

    async def write(self, endpoint, cluster, attribute, value):
        written = await self.server.command("write_attribute", node_id=self.device.node_id,
                                            attribute_path=f"{endpoint}/{cluster}/{attribute}", value=value)
        statuses = [field(s, 1, "Status") for s in written or []]
        return statuses[0] if len(statuses) == 1 else statuses

    def act(self, action, value=None):
        self.check.act(self.device, action, value)

    async def before(self, endpoint, move):
        """A command or a write waits until its report can go out at once (settle); an act's
        events are those after this."""
        if not move.act:
            await self.check.settle(self.device)
        self.since = len(self.server.events)
        # A command's or write's follow may come late on a busy machine, counted (`follows`).
        self.may_be_late = move.pace == clusters.AT_ONCE

    async def wait_for(self, endpoint, cluster, attribute, predicate, timeout_s, events=()):
        node_id, path = self.device.node_id, f"{endpoint}/{cluster}/{attribute}"

        def raised():
            return [d["event_id"] for _, e, d in self.server.events[self.since:]
                    if e == "node_event" and d["node_id"] == node_id and d["endpoint_id"] == endpoint
                    and d["cluster_id"] == cluster]

        start = time.monotonic()
        took = await self.check.follows(
            self.device, lambda: predicate(self.server.attribute(node_id, path)) and raised()[:len(events)] == list(events),
            start, timeout_s, may_be_late=self.may_be_late)
        self.may_be_late = False
        return took, self.server.attribute(node_id, path)

    def within(self, pace):
        return self.WITHIN_S[pace]


class Device:
    def __init__(self, description, directory):
        self.d = description
        self.name = description["name"]
        self.dir = directory
        self.node_id = None
        self.first_dump = None     # the server's node JSON as interviewed
        self.commissioning = None  # wall-clock (start, end) of its commission_with_code
        self.retried = False       # its first commission_with_code failed among twins
        self.short_discriminator = description["discriminator"] >> 8
        self.endpoints = {e["number"]: e for e in description["endpoints"]}

    def endpoints_with(self, cluster):
        return [n for n, e in sorted(self.endpoints.items()) if cluster in e["serverClusters"]]


class Check:
    def __init__(self, args, devices):
        self.args = args
        self.devices = devices
        self.report = Report("ohf", args.report, line=device_line)
        # Follows counted, and those that came late (see `follows`).
        self.follow_count = 0
        self.late = []
        self.server = Server(args.url)
        self.power_window = None  # wall-clock (cut, available again)
        self.clones = []  # the clone round trip's nodes (copies of the devices they replace)
        self.second_admin = SecondAdmin(args.second_admin + ["--workdir", args.second_admin_workdir, "--paa", args.paa],
                                        os.path.join(args.second_admin_workdir, "second-admin.log"))

    def record(self, device_name, step, ok, **values):
        return self.report.record(step, ok, device_name, **values)

    async def step(self, device, name, body):
        return await self.report.step(name, body, device.name)

    # --- per node -----------------------------------------------------------------------------

    async def commission(self, device):
        start = time.monotonic()
        device.commissioning = [time.time(), None]
        # A manual code names 4 bits of the discriminator; with several commissionable twins
        # the SDK tries them one by one and may run out its discovery time. A user tries again;
        # so does this, once, and says so.
        first_error = None
        for attempt in (1, 2):
            try:
                node = await self.server.command("commission_with_code", timeout_s=300,
                                                 code=device.d["manualCode"], network_only=True)
                break
            except ServerError as error:
                if attempt == 2:
                    raise
                first_error = str(error)
                device.retried = True
        device.node_id = node["node_id"]
        device.commissioning[1] = time.time()
        values = {"nodeId": device.node_id, "ms": now_ms(start), "attempts": attempt}
        if first_error:
            values["firstAttempt"] = first_error
        return node.get("available") is True, values

    async def interview(self, device):
        node = self.server.nodes[device.node_id]
        attrs = node["attributes"]
        problems = []
        seen = sorted({int(p.split("/")[0]) for p in attrs})
        if seen != sorted(device.endpoints):
            problems.append(f"endpoints {seen}, expected {sorted(device.endpoints)}")
        for number, endpoint in sorted(device.endpoints.items()):
            types = [field(t, 0, "deviceType") for t in attrs.get(f"{number}/{DESCRIPTOR}/0") or []]
            if types != endpoint["deviceTypes"]:
                problems.append(f"endpoint {number} device types {types}, expected {endpoint['deviceTypes']}")
            servers = sorted(attrs.get(f"{number}/{DESCRIPTOR}/1") or [])
            if servers != endpoint["serverClusters"]:
                problems.append(f"endpoint {number} server clusters {servers}, expected {endpoint['serverClusters']}")
            interviewed = sorted({int(p.split("/")[1]) for p in attrs if p.startswith(f"{number}/")})
            missing = [c for c in endpoint["serverClusters"] if c not in interviewed]
            if missing:
                problems.append(f"endpoint {number}: clusters {missing} listed but not interviewed")
        basic = {"vendorName": 1, "vendorID": 2, "productName": 3, "productID": 4, "serialNumber": 15}
        for key, attribute in basic.items():
            value = attrs.get(f"0/{BASIC}/{attribute}")
            if value != device.d[key]:
                problems.append(f"BasicInformation {key} {value!r}, expected {device.d[key]!r}")
        info = node.get("device_info") or {}
        return not problems, {"problems": problems, "endpoints": seen, "available": node.get("available"),
                              "product": info.get("productName", attrs.get(f"0/{BASIC}/3"))}

    async def entity_platforms(self, device):
        """The entity platform Home Assistant makes of each endpoint's device types, from what
        the server interviewed (ha_platforms: HA core's discovery rule per device type)."""
        attrs = self.server.nodes[device.node_id]["attributes"]
        found, problems = [], []
        for number, endpoint in sorted(device.endpoints.items()):
            ep_found, ep_problems = platforms(attrs, number, endpoint["deviceTypes"])
            found += ep_found
            problems += ep_problems
        return not problems, {"platforms": found, "problems": problems}

    async def follows(self, device, condition, start, timeout_s=FOLLOW_S, may_be_late=True):
        """Waits until condition holds, timeout_s from start. On a machine running several
        servers and dozens of nodes at once, one process not scheduled for a moment makes a
        follow a few hundred ms late now and then (seen: 1,090 and 1,187 ms among ~130 follows,
        the server's timeline showing nothing held the report back). A follow up to LATE_S past
        its bound passes and is counted: more than LATE_ALLOWED of them (a share of the follows)
        fail the run, since a device that reports late does so on every follow."""
        self.follow_count += may_be_late
        if await self.server.wait_for(condition, max(0.0, timeout_s - (time.monotonic() - start))) is not None:
            return True
        if not may_be_late:
            return False
        late = await self.server.wait_for(condition, max(0.0, timeout_s + LATE_S - (time.monotonic() - start)))
        if late is None:
            return False
        self.late.append(f"{device.name}: {now_ms(start)} ms")
        return True

    async def settle(self, device):
        """Waits until the node's next report can go out at once. The server subscribes with
        MinIntervalFloor 1 s, so a report within the last second holds the next one back. A
        level transition (an On or Off fades over OnOffTransitionTime) reports at its end with
        values the server may already hold, which it does not pass on as events, and a moving
        covering reports its position every floor: such a node is read until LevelControl
        RemainingTime (Level Control's and Color Control's) and WindowCovering OperationalStatus
        are 0, and then given two floors."""
        node_id = device.node_id
        transition_end = None
        deadline = time.monotonic() + 60
        moving = [f"{ep}/{LEVEL}/1" for ep in device.endpoints_with(LEVEL)]        # RemainingTime
        moving += [f"{ep}/{COVERING}/10" for ep in device.endpoints_with(COVERING)]  # OperationalStatus
        moving += [f"{ep}/{COLOR}/2" for ep in device.endpoints_with(COLOR)]         # RemainingTime
        # Only what the node has: RemainingTime is Level Control's Lighting feature (a speaker's
        # volume has none), and reading an attribute that is not there answers a status, never 0.
        attributes = self.server.nodes[node_id]["attributes"]
        moving = [path for path in moving if path in attributes]
        for path in moving:
            while time.monotonic() < deadline:
                read = await self.server.command("read_attribute", node_id=node_id, attribute_path=path)
                value = read.get(path) if isinstance(read, dict) else read
                transition_end = time.monotonic()
                if not value:
                    break
                await asyncio.sleep(0.1)
        await self.server.quiet(node_id, REPORT_FLOOR_S)
        if transition_end is not None:
            await asyncio.sleep(max(0.0, transition_end + 2 * REPORT_FLOOR_S - time.monotonic()))

    async def cluster_steps(self, device):
        """Each cluster's moves (checks.clusters, shared with the reference controller's check),
        a step each: the command, write or act, then the server's kept value follows."""
        driver = ServerDriver(self, device)
        for cluster, moves_of in clusters.STEPS:
            for ep in device.endpoints_with(cluster):
                moves = await moves_of(driver, ep)
                if cluster == clusters.WINDOW_COVERING and not moves:
                    self.record(device.name, f"ep{ep} WindowCovering", True,
                                skipped="no position-aware lift (features LF, PA_LF): no lift target to follow")
                for move in moves:
                    name = f"act {move.title}" if move.act else f"{clusters.NAMES[cluster]} {move.title}"
                    await self.step(device, f"ep{ep} {name}", lambda: clusters.follow(driver, ep, move))

    def act(self, device, action, value=None):
        """What a person does at the device, through the control socket of the simulator that
        runs it (its state root, or a node's own state directory)."""
        serial = device.d["serialNumber"]
        response = act(device.dir, action, value, node=serial, own=serial)
        if response.get("error"):
            raise RuntimeError(f"act {action}: {response['error']}")

    async def node_label(self, device):
        node_id = device.node_id
        label = f"ohf {node_id}"
        before = await self.server.command("read_attribute", node_id=node_id, attribute_path=f"0/{BASIC}/5")
        await self.settle(device)
        start = time.monotonic()
        written = await self.server.command("write_attribute", node_id=node_id, attribute_path=f"0/{BASIC}/5",
                                            value=label)
        statuses = [field(s, 1, "Status") for s in written or []]
        read = await self.server.command("read_attribute", node_id=node_id, attribute_path=f"0/{BASIC}/5")
        after = read.get(f"0/{BASIC}/5") if isinstance(read, dict) else read
        took = await self.follows(device, lambda: self.server.attribute(node_id, f"0/{BASIC}/5") == label, start)
        ok = statuses == [0] and after == label and took
        return ok, {"before": before, "writeStatus": statuses, "readBack": after, "followedMs": now_ms(start)}

    # --- all nodes together: power cut and restart --------------------------------------------

    async def power_cycle(self, devices):
        groups = {}
        for device in devices:
            group = int(open(os.path.join(device.dir, "device.pgid")).read().strip())
            groups[group] = device.dir
        cut = time.monotonic()
        cut_wall = time.time()
        for group in groups:
            os.killpg(group, signal.SIGKILL)
        ids = [d.node_id for d in devices]
        took = await self.server.wait_for(lambda: not any(self.server.available(i) for i in ids),
                                          self.args.unavailable_timeout)
        unavailable_s = None if took is None else round(time.monotonic() - cut, 1)
        for device in devices:
            self.record(device.name, "power cut: the server shows it unavailable",
                               not self.server.available(device.node_id), afterS=unavailable_s)
        for directory in set(groups.values()):
            open(os.path.join(directory, "power-on"), "w").close()
        on = time.monotonic()
        on_wall = time.time()
        await self.server.wait_for(lambda: all(self.server.available(i) for i in ids), self.args.available_timeout)
        back_s = round(time.monotonic() - on, 1)
        self.power_window = (cut_wall, time.time())
        for device in devices:
            available = self.server.available(device.node_id)
            commissioned_again = any(e == "node_added" and t > cut for t, e, _ in self.server.events)
            back_at = next((t for t, e, d in self.server.events if t > on and e == "node_updated"
                            and d.get("node_id") == device.node_id and d.get("available")), None)
            took_s = None if back_at is None else round(back_at - on, 1)
            self.record(device.name, "power on: available again without commissioning",
                               available and not commissioned_again, nodeId=device.node_id,
                               restartToAvailableS=took_s, allAvailableS=back_s, poweredOnAt=round(on_wall, 3))
            # A home is back as a whole within seconds (#43): the server finds each node again
            # from its own announcement, not after a resubscription backoff of up to a minute.
            # Opt-in: beside the test command's other servers and fleets, start-up alone can
            # take longer than the bound.
            bound = self.args.power_on_bound
            if bound is not None:
                self.record(device.name, f"power on: available within {bound:g} s",
                            took_s is not None and took_s <= bound, restartToAvailableS=took_s)
        backs = [e.get("restartToAvailableS") for e in self.report.steps
                 if e.get("step") == "power on: available again without commissioning"]
        known = sorted(b for b in backs if b is not None)
        if known:
            print(f"ohf: restart -> available, {len(known)} of {len(backs)} nodes: min {known[0]} s, "
                  f"median {known[len(known) // 2]} s, max {known[-1]} s", flush=True)
        # Each node's own command or write, CHECKING_AT_ONCE nodes at a time: each waits on its
        # node's report, not on the others (one after another, a home of 21 took 25 s here).
        at_once = asyncio.Semaphore(CHECKING_AT_ONCE)

        async def after_restart(device):
            async with at_once:
                if device.endpoints_with(ONOFF):
                    ep = device.endpoints_with(ONOFF)[0]
                    await self.step(device, "after restart: a command works",
                                    lambda: clusters.follow(ServerDriver(self, device), ep, clusters.TOGGLE))
                else:
                    await self.step(device, "after restart: a write works", lambda: self.node_label(device))
        await asyncio.gather(*(after_restart(device) for device in devices))

    # --- issue #41: the clone round trip -----------------------------------------------------

    async def clone_round_trip(self, devices):
        """Each node's dump as the server interviewed it becomes a profile (`matter-sim clone`,
        same serial); the clone then runs on the node's host in its place (a power cut, fresh
        state, the node's passcode and discriminator), and the server commissions and interviews
        it: its dump must equal the first apart from checks.dumps.VARIES. All clones start at
        once; the server commissions them one after another, as the originals."""
        start = time.monotonic()
        cut = []
        for device in (d for d in devices if d.first_dump is not None):
            first = os.path.join(device.dir, "first.json")
            with open(first, "w") as out:
                json.dump(device.first_dump, out)
            profile = os.path.join(device.dir, "clone.yaml")
            made = await asyncio.create_subprocess_exec(
                self.args.clone_roundtrip, "clone", first, "--serial", device.d["serialNumber"], "--output", profile,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            _, error = await made.communicate()
            if made.returncode != 0:
                self.record(device.name, "clone round trip: matter-sim clone", False, error=error.decode()[-400:])
                continue
            if device.node_id in self.server.nodes:
                # The original leaves the server first (the full run's multi-admin step removed it already).
                try:
                    await self.server.command("remove_node", timeout_s=60, node_id=device.node_id)
                except (ServerError, asyncio.TimeoutError) as error:
                    self.record(device.name, "clone round trip: remove_node of the original", False, error=str(error))
            with open(os.path.join(device.dir, "run.sh"), "w") as out:
                out.write(f'exec "{self.args.clone_roundtrip}" run "{profile}" --passcode {device.d["passcode"]}'
                          f' --discriminator {device.d["discriminator"]}\n')
            try:
                os.killpg(int(open(os.path.join(device.dir, "device.pgid")).read().strip()), signal.SIGKILL)
            except (OSError, ValueError):
                pass  # already off
            cut.append(device)
        for device in cut:
            # The supervisor removes device.pgid once the node is gone; then the clone gets a fresh state.
            deadline = time.monotonic() + 10
            while os.path.exists(os.path.join(device.dir, "device.pgid")) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            shutil.rmtree(os.path.join(device.dir, ".matter-sim"), ignore_errors=True)
            open(os.path.join(device.dir, "power-on"), "w").close()
        # Each clone is a node of its own for the log's excuses: all are commissionable at once,
        # so the server may try a clone sharing the short discriminator first (Core 5.1.4.1),
        # as with the originals, whose commissioning windows stay as they were.
        clones = [copy.copy(device) for device in cut]
        for clone in clones:
            clone.commissioning = None
        self.clones += clones
        for clone in clones:
            await self.step(clone, "clone round trip: the server's dump of the clone equals the original's",
                            lambda: self.clone_dump_equal(clone))
        self.record("server", "clone round trip: seconds", True, seconds=round(time.monotonic() - start, 1), clones=len(cut))

    async def clone_dump_equal(self, device):
        committed, values = await self.commission(device)
        if not committed or await self.server.wait_for(lambda: device.node_id in self.server.nodes, 10) is None:
            return False, values
        second = copy.deepcopy(self.server.nodes[device.node_id])
        if self.args.dump_dir:
            os.makedirs(os.path.join(self.args.dump_dir, "clones"), exist_ok=True)
            with open(os.path.join(self.args.dump_dir, "clones", f"{device.d['serialNumber']}.json"), "w") as out:
                json.dump(second, out, indent=1)
        compared, differences, varied = dumps.round_trip(device.first_dump["attributes"], second["attributes"])
        return not differences, {"equal": f"{len(compared) - len(differences)}/{len(compared)}",
                                 "statedFieldsDiffering": [p for p, *_ in varied],
                                 "differences": [f"{p} ({kind}): first {dumps.short(a)}, clone {dumps.short(b)}"
                                                 for p, kind, a, b in differences[:20]]}

    # --- multi-admin and removal --------------------------------------------------------------

    async def multi_admins(self, devices):
        """One second admin process for every node, ended whatever happens. A home's second
        node of the same device profile is not commissioned again: its sharing would read what
        the first one's did (ohf-profiles shares every shipped profile on a host of its own;
        here it is one node of each beside the home's others), at about 3 s a node."""
        try:
            await self.second_admin.start()
        except Exception as error:
            self.record("second admin", "started", False, error=f"{type(error).__name__}: {error}")
            await self.second_admin.close()
            return
        shared = {}
        try:
            for device in devices:
                source = device.d.get("source")
                if source in shared:
                    self.record(device.name, "multi-admin and remove_node", True,
                                skipped=f"same device profile as {shared[source]}, shared above")
                    continue
                if self.server.available(device.node_id):
                    shared[source] = device.name
                    try:
                        await self.multi_admin(device)
                    except Exception as error:
                        self.record(device.name, "multi-admin and remove_node", False,
                                           error=f"{type(error).__name__}: {error}")
        finally:
            await self.second_admin.close()

    async def multi_admin(self, device):
        node_id = device.node_id
        params = await self.server.command("open_commissioning_window", node_id=node_id)
        code = params["setup_manual_code"]
        second_id = 1000 + node_id
        label = f"second admin {node_id}"
        toggles = device.endpoints_with(ONOFF)
        done = await self.second_admin.request("commission", code=code, nodeId=second_id, label=label, toggle=toggles)
        self.record(device.name, "open_commissioning_window: the reference controller commissions",
                           True, code=code, commissionedMs=done["commissionedMs"])
        # The second admin's last change was made when it printed; the first admin's subscription follows.
        wanted = {f"0/{BASIC}/5": label, **{f"{ep}/{ONOFF}/0": v for ep, v in
                                            ((int(k), v) for k, v in done["onOffAfterToggle"].items())}}
        took = await self.server.wait_for(
            lambda: all(self.server.attribute(node_id, p) == v for p, v in wanted.items()), FOLLOW_S)
        self.record(device.name, "a change by the second admin reaches the server", took is not None,
                           wanted=wanted, kept={p: self.server.attribute(node_id, p) for p in wanted},
                           sinceChangeMs=round((time.time() - done["changedAt"]) * 1000))
        await self.server.command("remove_node", node_id=node_id)
        gone = await self.server.wait_for(lambda: node_id not in self.server.nodes, 10)
        fabrics = (await self.second_admin.request("fabrics", nodeId=second_id))["fabrics"]
        only_second = len(fabrics) == 1 and fabrics[0]["vendorID"] == 0xFFF2
        return self.record(device.name, "remove_node: only the second admin's fabric is left",
                                  gone is not None and only_second, fabrics=fabrics)

    # --- the server's log ---------------------------------------------------------------------

    def server_log(self, devices):
        """Every warning or error the server (and the SDK inside it) logged, sorted into the
        device's fault or not. Lines while the devices were powered off are the power cut's."""
        expected = [(re.compile(p), why) for p, why in EXPECTED_LOG_LINES]
        faults, excused = [], {}
        try:
            lines = open(self.args.server_log, errors="replace").read().splitlines()
        except OSError as error:
            return self.record("server", "log: no warning or error that is a device's fault", False,
                                      error=str(error))
        for line in lines:
            if not re.search(r"(\b|_)(WARNING|ERROR|CRITICAL)\b", line):
                continue
            why = next((w for p, w in expected if p.search(line)), None)
            stamp = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?)", line)
            at = time.mktime(time.strptime(stamp.group(1).split(".")[0], "%Y-%m-%d %H:%M:%S")) if stamp else None
            if why is None and at and self.power_window:
                if self.power_window[0] - 1 <= at <= self.power_window[1] + 1:
                    why = "the power cut: the node was off (or just starting again)"
            if why is None and at and PASE_FAILURE.search(line) and self.tried_a_twin(devices, at):
                why = ("a manual code holds 4 bits of the discriminator: the server first tried another "
                       "commissionable device with the same short discriminator (Core 5.1.4.1)")
            if why is None and at and PASE_BUSY.search(line) and self.commissioned_then(devices, at):
                why = ("BUSY from a node already in a PASE handshake, during a commission_with_code that then "
                       "succeeded: the server's second attempt at once (another address or a twin; Core 4.11.1.3)")
            if why is None and TABLE_FULL.search(line) and len(devices) > DISCOVERED_NODES_MAX:
                why = (f"the server's SDK holds {DISCOVERED_NODES_MAX} discovered commissionable nodes "
                       f"(CHIP_DEVICE_CONFIG_MAX_DISCOVERED_NODES) and {len(devices)} advertise at once")
            if why is None and at and self.retried_among_twins(devices, at):
                why = ("a first commission_with_code that ran out among devices with the same short "
                       "discriminator (retried once, as a user would)")
            if why is None:
                faults.append(line.strip())
            else:
                excused[why] = excused.get(why, 0) + 1
        return self.record("server", "log: no warning or error that is a device's fault", not faults,
                                  faults=faults[:20], excused=excused)

    @staticmethod
    def commissioned_then(devices, at):
        """True when a commission_with_code that succeeded was under way at wall-clock time at."""
        return any(d.commissioning and d.commissioning[1] and d.commissioning[0] - 1 <= at <= d.commissioning[1] + 1
                   for d in devices)

    @staticmethod
    def retried_among_twins(devices, at):
        return any(d.retried and d.commissioning and d.commissioning[0] - 1 <= at <= (d.commissioning[1] or at) + 1
                   and any(o is not d and o.short_discriminator == d.short_discriminator for o in devices)
                   for d in devices)

    @staticmethod
    def tried_a_twin(devices, at):
        """True when, at wall-clock time at, a device was being commissioned while another one
        still commissionable shared its short discriminator."""
        for device in devices:
            if not device.commissioning or not (device.commissioning[0] - 1 <= at <= (device.commissioning[1] or at) + 1):
                continue
            for other in devices:
                if other is not device and other.short_discriminator == device.short_discriminator and (
                        other.commissioning is None or other.commissioning[0] > device.commissioning[0]):
                    return True
        return False

    async def run(self):
        start = time.monotonic()
        await self.server.connect(self.args.connect_timeout)
        self.record("server", "connected", True, sdk=self.server.info.get("sdk_version"),
                    schema=self.server.info.get("schema_version"), ms=now_ms(start))
        commissioned, checking = [], []
        # Commissioning goes one node at a time (a node serves one PASE at a time, and the log's
        # excuses read the order); each node's own checks then run beside the next nodes'
        # commissioning, at most CHECKING_AT_ONCE nodes at a time: they wait on that node and the
        # server, not on each other (a home of 21 took 21 x 12 s one after another).
        at_once = asyncio.Semaphore(CHECKING_AT_ONCE)

        async def check(device):
            async with at_once:
                await self.step(device, "interview: endpoints, device types, clusters, BasicInformation",
                                lambda: self.interview(device))
                # The server's node JSON as interviewed (scripts/clone-roundtrip.sh and the clone
                # round trip below clone it).
                device.first_dump = copy.deepcopy(self.server.nodes[device.node_id])
                await self.step(device, "entity platform (HA's discovery rule per device type)",
                                lambda: self.entity_platforms(device))
                if self.args.dump_dir:
                    with open(os.path.join(self.args.dump_dir, f"{device.d['serialNumber']}.json"), "w") as out:
                        json.dump(device.first_dump, out, indent=1)
                if self.args.interview_only or self.args.power_cut_only:
                    return
                await self.cluster_steps(device)
                await self.step(device, "read_attribute / write_attribute NodeLabel", lambda: self.node_label(device))

        for device in self.devices:
            if not await self.step(device, "commission_with_code (interview, available)",
                                   lambda: self.commission(device)):
                continue
            commissioned.append(device)
            checking.append(asyncio.create_task(check(device)))
        await asyncio.gather(*checking)
        if commissioned and not self.args.interview_only:
            await self.power_cycle(commissioned)
        if not (self.args.interview_only or self.args.power_cut_only) and any(
                self.server.available(d.node_id) for d in commissioned):
            await self.multi_admins(commissioned)
        if self.args.clone_roundtrip and commissioned:
            await self.clone_round_trip(commissioned)
        await self.server.close()
        allowed = max(2, int(self.follow_count * LATE_ALLOWED))
        self.record("server", f"follows past {FOLLOW_S:g} s (a busy machine): at most {LATE_ALLOWED:.0%}",
                    len(self.late) <= allowed, follows=self.follow_count, late=self.late, allowed=allowed)
        self.server_log(self.devices + self.clones)
        events = [{"t": round(t - start, 3), "event": e, "data": d} for t, e, d in self.server.events
                  if e != "node_added"]
        self.report.write(seconds=round(time.monotonic() - start, 1), events=events)
        self.report.summary()
        return self.report.failed() == 0


# A follow may be this late (past its bound) on a busy machine, for this share of a run's
# follows (at least two); see `follows`.
LATE_S = 1.0
LATE_ALLOWED = 0.04

# How many nodes' own checks run at once, beside the next nodes' commissioning.
CHECKING_AT_ONCE = 4

# A Secure Channel BUSY (protocol code 4) answering a PBKDFParamRequest: the node was in
# another PASE handshake (it serves one at a time), which the SDK reports as an error.
PASE_BUSY = re.compile(r"\[chip\.native\.SC\] Received error \(protocol code 4\) during PASE process")
PASE_FAILURE = re.compile(r"\[chip\.native\.SC\] (Failed to verify peer's MAC|Failed during PASE session setup)")

# connectedhomeip's table of commissionable nodes found by one discovery: a node seen again
# with the same host, port and addresses takes its old entry, so only a LAN with more
# commissionable nodes than entries fills it.
DISCOVERED_NODES_MAX = 10
TABLE_FULL = re.compile(r"Failed to add discovered node with hostname .*Insufficient space")

# Server log lines that are not a device's fault, each with the reason. Anything else at
# WARNING or above fails the check.
EXPECTED_LOG_LINES = [
    # Offline by design: the fake LAN has no route out, so the DCL and certificate downloads fail.
    (r"(?i)(on\.dcl\.csa-iot\.org|api\.github\.com|fetch .*from DCL)", "offline: no DCL or certificate download"),
    # The server's first start: no storage yet.
    (r"\[chip\.storage\] (\[Errno 2\] No such file|Could not load configuration|No valid (SDK|REPL) configuration)",
     "first start: the server has no stored configuration yet"),
    # The SDK's own watchdog: one of the server's event handlers ran over 100 ms
    # (CHIP_DISPATCH_EVENT_LONG_DISPATCH_TIME_WARNING_THRESHOLD_MS). It times the server's
    # process on a busy machine, not anything a device sent.
    (r"\[chip\.native\.DL\] Long dispatch time: \d+ ms", "the server's own event loop was slow (a busy machine)"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="ws://127.0.0.1:5580/ws")
    parser.add_argument("--devices", required=True, help="matter-sim describe --json output")
    parser.add_argument("--device-dir", action="append", required=True,
                        help="device-supervisor.sh directory of device i (one for a whole home in one process)")
    parser.add_argument("--paa", required=True)
    parser.add_argument("--server-log", required=True)
    parser.add_argument("--second-admin", required=True, help="command that runs second_admin.py (JSON list)")
    parser.add_argument("--second-admin-workdir", required=True)
    parser.add_argument("--report")
    parser.add_argument("--connect-timeout", type=float, default=60)
    parser.add_argument("--unavailable-timeout", type=float, default=240)
    parser.add_argument("--available-timeout", type=float, default=120)
    parser.add_argument("--power-on-bound", type=float, default=None,
                        help="seconds from power-on within which every node must be available again (default: not checked)")
    parser.add_argument("--dump-dir", help="write each node's JSON, as the server interviewed it, here (SERIAL.json)")
    parser.add_argument("--clone-roundtrip", metavar="MATTER_SIM",
                        help="then clone each node's dump with this matter-sim, run the clone in its place and compare the server's dumps")
    parser.add_argument("--interview-only", action="store_true", help="commission and interview only (no cluster steps, power cut or second admin)")
    parser.add_argument("--power-cut-only", action="store_true",
                        help="commission and interview, then the power cut and restart only (no cluster steps or second admin)")
    args = parser.parse_args()
    args.second_admin = json.loads(args.second_admin)
    descriptions = json.load(open(args.devices))["devices"]
    dirs = args.device_dir if len(args.device_dir) == len(descriptions) else args.device_dir[:1] * len(descriptions)
    devices = [Device(d, dirs[i]) for i, d in enumerate(descriptions)]
    ok = asyncio.run(Check(args, devices).run())
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
