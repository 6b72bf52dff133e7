"""Node dumps as Home Assistant's Matter server keeps them ({"attributes": {"EP/CLUSTER/ATTR":
value}}), compared for issue #41's round trip: a node's dump, and the dump of its clone
(`matter-sim clone`), must agree on every attribute apart from what differs between two
commissionings of any node (VARIES), and, against a real device's dump, apart from what the
clone regenerates by design (REGENERATED, as `NodeCloner.isRegenerated`; its profile's header
lists them).

    python3 -m checks.dumps FIRST_DIR SECOND_DIR          the clone round trip (exit 1 on a difference)
    python3 -m checks.dumps --real REAL_DIR SECOND_DIR    real dumps: per dump, the fraction identical
                                                          and every difference by kind
Files pair by name (SERIAL.json).
"""

import json
import os
import sys

# What differs between two commissionings of one node, by ENDPOINT/CLUSTER/ATTRIBUTE ("*" any):
# fabric-scoped state (Operational Credentials' NOCs 0/62/0, Fabrics 0/62/1, TrustedRootCertificates
# 0/62/4, CurrentFabricIndex 0/62/5; the ACL 0/31/0), network state (Network Commissioning 0/49,
# General Diagnostics' NetworkInterfaces 0/51/0, Thread/Wi-Fi/Ethernet diagnostics 0/53-55),
# counters and time (RebootCount, UpTime, TotalOperationalHours 0/51/1-3; Time Synchronization
# 0/56), and a thermostat's LocalTemperature (*/513/0), which the simulated room moves.
VARIES = [("0", "62", a) for a in ("0", "1", "4", "5")] + [("0", "31", "0")] \
    + [("0", "51", a) for a in ("0", "1", "2", "3")] \
    + [("0", c, "*") for c in ("49", "53", "54", "55", "56")] \
    + [("*", "513", "0")]

# What a clone regenerates instead of copying (NodeCloner.isRegenerated): the root's fabrics,
# ACL, credentials, commissioning and network clusters (31, 48, 49, 51, 60, 62, 63), network
# diagnostics (53-55) anywhere, EventList (65530), serial numbers (40/15, 57/15) and the node's
# UniqueID (40/18), and fabric-scoped lists (entries with a FabricIndex, field 254).
REGENERATED_ROOT = {"31", "48", "49", "51", "60", "62", "63"}
NETWORK_DIAGNOSTICS = {"53", "54", "55"}


def matches(path, rules):
    e, c, a = path.split("/")
    return any(re in ("*", e) and rc in ("*", c) and ra in ("*", a) for re, rc, ra in rules)


def regenerated(path, value):
    e, c, a = path.split("/")
    if e == "0" and c in REGENERATED_ROOT:
        return True
    if a == "65530" or c in NETWORK_DIAGNOSTICS:
        return True
    if (c, a) in (("40", "15"), ("40", "18"), ("57", "15")):
        return True
    return isinstance(value, list) and any(isinstance(v, dict) and ("254" in v or "fabricIndex" in v) for v in value)


def key(path):
    return tuple(int(x) for x in path.split("/"))


ABSENT = "<absent>"


def compare(first, second, skip):
    """Attributes of two dumps. Returns (compared, differences, skipped_differences): the paths
    compared (in either dump, not skipped), and [(path, kind, first, second)] where kind is
    "value", "absent from the clone" or "only in the clone"."""
    compared, differences, skipped = [], [], []
    for path in sorted(set(first) | set(second), key=key):
        a, b = first.get(path, ABSENT), second.get(path, ABSENT)
        kind = "value" if ABSENT not in (a, b) else "absent from the clone" if b == ABSENT else "only in the clone"
        if skip(path, a):
            if a != b:
                skipped.append((path, kind, a, b))
            continue
        compared.append(path)
        if a != b:
            differences.append((path, kind, a, b))
    return compared, differences, skipped


def round_trip(first, second):
    """The clone round trip: every attribute but VARIES."""
    return compare(first, second, lambda path, _: matches(path, VARIES))


def real(dumped, served):
    """A real device's dump against the server's dump of its clone: the attributes the real
    dump holds, apart from what the clone regenerates and VARIES (a cloned thermostat's room
    moves, as the issue asks of behaviour); what only the clone has is listed apart
    (the real dumps were reduced: PROVENANCE.md)."""
    compared, differences, skipped = compare(
        dumped, {p: v for p, v in served.items() if p in dumped},
        lambda path, value: regenerated(path, value) or matches(path, VARIES) or (path.split("/")[1:] == ["29", "1"]))
    extra = sorted((p for p in served if p not in dumped), key=key)
    return compared, differences, skipped, extra


def attributes(path):
    node = json.load(open(path))
    node = node.get("data", {}).get("node", node)
    return node["attributes"]


def short(value):
    return json.dumps(value)[:120]


def main(argv):
    real_mode = argv[:1] == ["--real"]
    if real_mode:
        argv = argv[1:]
    first_dir, second_dir = argv
    status, totals = 0, [0, 0]
    for name in sorted(n for n in os.listdir(first_dir) if n.endswith(".json")):
        second_path = os.path.join(second_dir, name)
        if not os.path.exists(second_path):
            print(f"dumps: {name}: the clone was not interviewed")
            status = 1
            continue
        a, b = attributes(os.path.join(first_dir, name)), attributes(second_path)
        if real_mode:
            compared, differences, skipped, extra = real(a, b)
            serverlist = [p for p in a if p.split("/")[1:] == ["29", "1"] and a[p] != b.get(p)]
            kinds = {}
            for path, kind, _, _ in differences:
                kinds[kind] = kinds.get(kind, 0) + 1
            equal = len(compared) - len(differences)
            totals[0] += equal
            totals[1] += len(compared)
            print(f"dumps: {name}: {equal}/{len(compared)} identical ({100 * equal / max(1, len(compared)):.1f} %)"
                  f"; differences by kind: {kinds or 'none'}; regenerated or stated fields differing: {' '.join(p for p, *_ in skipped) or 'none'}"
                  f"; ServerLists differing (not counted): {len(serverlist)}; only in the clone (reduced from the real dump): {len(extra)}")
            for path in serverlist:
                print(f"  {path} ServerList: real {short(a[path])}, clone {short(b.get(path, ABSENT))}")
        else:
            compared, differences, skipped = round_trip(a, b)
            print(f"dumps: {name}: {len(compared) - len(differences)}/{len(compared)} attributes equal"
                  f" ({len(skipped)} of the stated fields differ: {' '.join(p for p, *_ in skipped)})")
        for path, kind, x, y in differences:
            print(f"  {path} ({kind}): first {short(x)}, clone {short(y)}")
        if differences:
            status = 1
    if real_mode:
        print(f"dumps: all real dumps {totals[0]}/{totals[1]} identical")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
