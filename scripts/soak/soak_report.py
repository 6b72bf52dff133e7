"""soak_report.py: reads scripts/soak.sh's samples and prints its rows, table and verdict.

  soak_report.py row STATE                 the last minute's row, while the soak runs
  soak_report.py final STATE --out DIR ... the table, soak.png (matplotlib) and the verdict

STATE/samples.txt holds blocks of `t SECONDS`, `ROLE RSS_KB FDS` per process, `figures JSON`
(the home's /api/figures, its heap in use among them), relay lines and error counts, ending with `end`.
STATE/controller.jsonl holds `homectl soak`'s lines: kind "figures" (each minute, with the
home's diagnostics), kind "heap" (its heap in use, every 10 s), kind "heapWithoutHome" (its
heap between a close and the next open), kind "error" (one failed
operation) and, at the end, kind "closed" (the closed homes it still holds: a leak). STATE/faults.log holds
`EPOCH start|end FAULT NODE` lines, STATE/started the controller's start (epoch seconds).
"""
import argparse
import json
import os
import sys

GROWTH_LIMIT = 0.05
# Counts (sessions, descriptors) move by a few as faults come and go: growth smaller than
# this many is noise, whatever its percentage.
COUNT_SLACK = 3
# After a fault is undone the controller needs a moment for a new CASE session and
# subscription: failures that soon after still come from the fault.
FAULT_GRACE = 30.0


def samples(state):
    out, cur = [], None
    try:
        lines = open(os.path.join(state, "samples.txt")).read().splitlines()
    except OSError:
        return out
    for line in lines:
        key, _, rest = line.partition(" ")
        if key == "t":
            cur = {"t": float(rest)}
        elif cur is None:
            continue
        elif key in ("home", "relay", "controller"):
            rss, fds = rest.split()
            cur[key + "_rss_mib"] = int(rss) / 1024
            cur[key + "_fds"] = int(fds)
        elif key == "figures":
            try:
                f = json.loads(rest or "{}")
            except ValueError:
                f = {}
            cur["home_sessions"] = f.get("sessions")
            cur["home_subscriptions"] = f.get("subscriptions")
            cur["home_messages_per_s"] = f.get("messagesPerSecond")
            if isinstance(f.get("heapInUse"), (int, float)) and f["heapInUse"] > 0:
                cur["home_heap_mib"] = f["heapInUse"] / 1048576.0
            if isinstance(f.get("trafficCapacity"), int) and f["trafficCapacity"] > 0:
                cur["home_traffic_entries"] = f.get("trafficEntries", 0)
                cur["home_traffic_capacity"] = f["trafficCapacity"]
        elif key == "relay_connections":
            role, n = rest.split()
            cur["relay_%s_connections" % role] = float(n)
        elif key == "relay_rejected":
            cur["relay_rejected"] = float(rest)
        elif key == "errors":
            role, n = rest.split()
            cur[role + "_error_lines"] = int(n)
        elif key == "end":
            out.append(cur)
            cur = None
    return out


def controller_lines(state):
    """The controller's lines: its minute figures, its failed operations, its heap in use
    every 10 s, and the line it writes after its last close (None if it never got there)."""
    figures, errors, heap, closed = [], [], [], None
    try:
        for line in open(os.path.join(state, "controller.jsonl")):
            try:
                d = json.loads(line)
            except ValueError:
                continue
            if d.get("kind") == "figures":
                figures.append(d)
            elif d.get("kind") == "error":
                errors.append(d)
            elif d.get("kind") in ("heap", "heapWithoutHome"):
                heap.append(d)
            elif d.get("kind") == "closed":
                closed = d
    except OSError:
        pass
    return figures, errors, heap, closed


def attach_controller(rows, figures, heap):
    """Each sample gets the controller's last figures and heap at or before it, and the heap
    it measured with no home held (between a close and the next open) if it did so since the
    sample before."""
    floors = [h for h in heap if h.get("kind") == "heapWithoutHome" and isinstance(h.get("heapInUse"), (int, float))]
    for h in floors:
        after = next((r for r in rows if r["t"] + 1 >= h["t"]), None)
        if after is not None:
            after["controller_floor_heap_mib"] = h["heapInUse"] / 1048576.0
    heap = [h for h in heap if h.get("kind") == "heap"]
    for r in rows:
        before = [h for h in heap if h["t"] <= r["t"] + 1]
        if before and isinstance(before[-1].get("heapInUse"), (int, float)):
            r["controller_heap_mib"] = before[-1]["heapInUse"] / 1048576.0
        last = None
        for f in figures:
            if f["t"] <= r["t"] + 1:
                last = f
        if last:
            h = last.get("home") or {}
            r["controller_sessions"] = h.get("secureSessions")
            r["controller_subscriptions"] = h.get("subscriptions")
            r["controller_homes"] = h.get("homesAlive")
            r["controller_operations"] = last.get("operations")
            r["controller_failures"] = last.get("failures")


def fitted_ends(rows, key, t0):
    """The least-squares line through KEY's samples from t0 on: its values at the first and
    the last of them (None with fewer than three). Memory churns with every reopening (the
    controller's heap moved 10.4 to 15.4 MiB from one minute's mean to another in a flat
    30-minute run), so two single minutes compare noise; the line's rise over the judged
    span is the growth a leak makes."""
    pts = [(r["t"], r[key]) for r in rows if r["t"] > t0 and isinstance(r.get(key), (int, float))]
    if len(pts) < 3:
        return None
    n = len(pts)
    mx = sum(p[0] for p in pts) / n
    my = sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    if sxx == 0:
        return None
    slope = sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx
    return my + slope * (pts[0][0] - mx), my + slope * (pts[-1][0] - mx)


def minute_means(rows, minutes, peak=False):
    """Each metric over each minute's samples (minute m covers (60(m-1), 60m]): the mean,
    or with `peak` the highest."""
    out = []
    for m in range(1, minutes + 1):
        bucket = [r for r in rows if 60 * (m - 1) < r["t"] <= 60 * m + 5]
        if not bucket:
            continue
        mean = {"minute": m}
        for key in {k for r in bucket for k in r}:
            values = [r[key] for r in bucket if isinstance(r.get(key), (int, float))]
            if values and key != "t":
                mean[key] = max(values) if peak else sum(values) / len(values)
        out.append(mean)
    return out


COLUMNS = [
    ("home_rss_mib", "home MiB", "%.1f"), ("home_heap_mib", "home heap MiB", "%.1f"), ("home_fds", "home fds", "%.0f"),
    ("home_sessions", "home sess", "%.0f"), ("home_subscriptions", "home subs", "%.0f"),
    ("relay_rss_mib", "relay MiB", "%.1f"), ("relay_fds", "relay fds", "%.0f"),
    ("relay_device_connections", "relay dev conns", "%.0f"),
    ("controller_rss_mib", "ctl MiB", "%.1f"), ("controller_heap_mib", "ctl heap MiB", "%.1f"),
    ("controller_floor_heap_mib", "ctl floor MiB", "%.1f"),
    ("controller_fds", "ctl fds", "%.0f"),
    ("controller_sessions", "ctl sess", "%.0f"), ("controller_subscriptions", "ctl subs", "%.0f"),
    ("controller_homes", "ctl homes", "%.0f"), ("controller_operations", "ops", "%.0f"), ("controller_failures", "failed", "%.0f"),
]
GROWTH_KEYS = [
    "home_heap_mib", "home_fds", "relay_rss_mib", "relay_fds", "relay_device_connections",
    "controller_floor_heap_mib", "controller_fds",
]
# The home's and the controller's memory are judged by their heap in use (glibc's mallinfo2:
# the home's from its /api/figures, the controller's from its own lines), not their resident
# size: RSS rises in steps that heaptrack showed are pages the allocator keeps after a burst
# (a reopening subscribes to every device at once), not live data (30 minutes at 200 nodes:
# controller RSS +11 % with a peak heap of 19.5 MiB; the home's RSS flat for 14 minutes, then
# 8 MiB in 90 s). A leak grows the heap. The RSS is still shown, with its growth.
# The controller's heap is judged where it has no home open (homectl soak measures it between
# each close and the next open): with a home open it swings 8 to 20 MiB with the phase of the
# reopening cycle, so a fitted line over 19 minutes of it moved ±0.7 MiB on noise alone,
# more than 5 % of its 12 MiB; its floor is what a leak raises. Its live heap is shown.
SHOWN_KEYS = ["home_rss_mib", "controller_rss_mib", "controller_heap_mib"]
# Sessions and subscriptions churn by design: each reopening replaces them all, the route
# policy the controller picks at random (the relay only, or both) halves or doubles them, and
# a closed controller's subscriptions through the relay last until their next report fails
# (at most a MaxInterval). They are judged against a bound instead of by growth: at most two
# openings' worth (the current one and the one before) of one per node and route, and one
# session per node and opening. A leak crosses it; churn does not.
ROUTES = 2  # the LAN and the relay
BOUNDS = {
    "home_sessions": lambda nodes: 2 * nodes,
    "home_subscriptions": lambda nodes: 2 * ROUTES * nodes,
    "controller_sessions": lambda nodes: nodes,
    "controller_subscriptions": lambda nodes: ROUTES * nodes,
    # Homes alive in the controller: the open one, and the one just closed while its last
    # tasks end. More means a closed home is held (its reports and state with it).
    "controller_homes": lambda nodes: 2,
}


def fmt(row, key, form):
    v = row.get(key)
    return form % v if isinstance(v, (int, float)) else "-"


def print_table(means):
    header = ["min"] + [c[1] for c in COLUMNS]
    rows = [[str(m["minute"])] + [fmt(m, k, f) for k, _, f in COLUMNS] for m in means]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


def faults(state):
    spans, open_ = [], {}
    try:
        for line in open(os.path.join(state, "faults.log")):
            t, what, fault, node = line.split(" ", 3)
            node = node.strip()
            if what == "start":
                open_[node] = (float(t), fault)
            elif node in open_:
                start, fault = open_.pop(node)
                spans.append((node, fault, start, float(t)))
    except OSError:
        pass
    for node, (start, fault) in open_.items():
        spans.append((node, fault, start, float("inf")))
    return spans


def explain(errors, spans, started):
    """Splits the controller's failures into those a fault on that node explains and the rest."""
    explained, unexplained = [], []
    for e in errors:
        at = started + e.get("t", 0)
        cause = next((s for s in spans if s[0] == e.get("device") and s[2] - 2 <= at <= s[3] + FAULT_GRACE), None)
        (explained if cause else unexplained).append((e, cause))
    return explained, unexplained


def plot(rows, path):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("soak: no matplotlib here; no plot (scripts/setup.sh installs it)")
        return
    t = [r["t"] / 60 for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(12, 8), sharex=True)
    for ax, title, keys in [
        (axes[0][0], "memory (MiB): resident, and the heap in use",
         ["home_rss_mib", "home_heap_mib", "relay_rss_mib", "controller_rss_mib", "controller_heap_mib",
          "controller_floor_heap_mib"]),
        (axes[0][1], "open file descriptors", ["home_fds", "relay_fds", "controller_fds"]),
        (axes[1][0], "sessions and subscriptions",
         ["home_sessions", "home_subscriptions", "controller_sessions", "controller_subscriptions",
          "relay_device_connections"]),
        (axes[1][1], "controller operations and failures", ["controller_operations", "controller_failures"]),
    ]:
        for key in keys:
            points = [(x, r.get(key)) for x, r in zip(t, rows) if isinstance(r.get(key), (int, float))]
            if points:
                ax.plot([p[0] for p in points], [p[1] for p in points], label=key.replace("_", " "))
        ax.set_title(title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    for ax in axes[1]:
        ax.set_xlabel("minutes")
    fig.suptitle("soak: %d samples" % len(rows))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print("soak: plot written to %s" % path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["row", "final"])
    ap.add_argument("state")
    ap.add_argument("--out")
    ap.add_argument("--minutes", type=int, default=3)
    ap.add_argument("--nodes", type=int, default=0)
    ap.add_argument("--controller-exit", type=int, default=0)
    ap.add_argument("--alive", default="")
    a = ap.parse_args()
    rows = samples(a.state)
    figures, errors, heap, closed = controller_lines(a.state)
    attach_controller(rows, figures, heap)
    if a.mode == "row":
        if rows:
            minute = int(rows[-1]["t"] // 60)
            means = minute_means(rows, max(minute, 1))
            if means:
                m = means[-1]
                print("soak: minute %d: " % m["minute"] + ", ".join(
                    "%s %s" % (label, fmt(m, key, form)) for key, label, form in COLUMNS))
        return 0

    means = minute_means(rows, a.minutes)
    print("soak: %d minutes, %d nodes, %d samples (every 10 s); per-minute means:" % (a.minutes, a.nodes, len(rows)))
    print_table(means)
    problems = []
    # The warm-up (the first third, at least a minute) fills caches, journals and session
    # tables; growth is judged from there to the end, by the least-squares line through the
    # samples (fitted_ends): memory, descriptors and the relay's connections. Sessions and
    # subscriptions rise and fall with each reopening and with the route the controller
    # picked (the relay only, or both): they are held to bounds instead (BOUNDS).
    warm = max(1, a.minutes // 3)
    peaks = minute_means(rows, a.minutes, peak=True)
    base = next((m for m in means if m["minute"] == warm + 1), None)
    base_peak = next((m for m in peaks if m["minute"] == warm + 1), None)
    last = means[-1] if means else None
    last_peak = peaks[-1] if peaks else None
    if base is None or last is None or last["minute"] <= warm + 1:
        problems.append("too few samples to judge growth (warm-up %d minute(s))" % warm)
    else:
        for key in GROWTH_KEYS + SHOWN_KEYS:
            memory = key.endswith("_mib")
            b, l = (base if memory else base_peak).get(key), (last if memory else last_peak).get(key)
            t0 = 60 * warm
            ends = None
            if key == "home_heap_mib":
                # The nodes' traffic logs (NodeTrafficLog.kept entries each, ~11 MiB at 200
                # nodes) fill with use: the home's heap is judged once they are (all but 5 %:
                # a node whose power was cut starts an empty one) full.
                full = next((r["t"] for r in rows if r.get("home_traffic_capacity")
                             and r.get("home_traffic_entries", 0) >= 0.95 * r["home_traffic_capacity"]), None)
                entries = next((r for r in reversed(rows) if r.get("home_traffic_capacity")), {})
                t0 = max(t0, full or 0)
                ends = fitted_ends(rows, key, t0) if full is not None else None
                if ends is None:
                    print("soak: growth %-26s not judged: the nodes' traffic logs %s (%s of %s entries at the end)" % (
                        key, "filled too late to judge after" if full else "never filled", entries.get("home_traffic_entries", "?"),
                        entries.get("home_traffic_capacity", "?")))
                    continue
            # The fitted line over the judged span; the two minutes' means (memory) or peaks
            # (counts) shown beside it. A count's peak catches the instant of a reopening,
            # when the old home's descriptors are not all closed yet.
            ends = ends or fitted_ends(rows, key, t0)
            if ends is None:
                if key in GROWTH_KEYS:
                    problems.append("too few %s samples after minute %d to judge its growth" % (key, int(t0 // 60)))
                continue
            minutes_text = ""
            if isinstance(b, (int, float)) and isinstance(l, (int, float)):
                minutes_text = "  (minute %s %.1f -> %.1f)" % ("means" if memory else "peaks", b, l)
            b, l = ends
            growth = (l - b) / b if b else (0 if l == 0 else float("inf"))
            slack = 0.5 if memory else COUNT_SLACK
            verdict = "ok"
            if key in SHOWN_KEYS:
                verdict = "shown, not judged"
            elif growth > GROWTH_LIMIT and l - b > slack:
                verdict = "GROWTH"
                problems.append("%s grew %.1f %% (%.1f -> %.1f) from minute %d to %d" % (key, growth * 100, b, l, int(t0 // 60) + 1, last["minute"]))
            print("soak: growth %-26s fit minute %d %8.1f -> minute %d %8.1f  %+6.1f %%  %s%s" % (
                key, int(t0 // 60) + 1, b, last["minute"], l, growth * 100, verdict, minutes_text))
    for key, bound in BOUNDS.items():
        ceiling = bound(a.nodes) + (0 if key == "controller_homes" else COUNT_SLACK)
        highest = max((r[key] for r in rows if isinstance(r.get(key), (int, float))), default=None)
        if highest is None:
            continue
        verdict = "ok" if highest <= ceiling else "OVER"
        print("soak: bound  %-26s highest %6.0f of at most %d  %s" % (key, highest, ceiling, verdict))
        if highest > ceiling:
            problems.append("%s reached %.0f, over its bound %d" % (key, highest, ceiling))
    try:
        started = float(open(os.path.join(a.state, "started")).read())
    except (OSError, ValueError):
        started = 0.0
    spans = faults(a.state)
    explained, unexplained = explain(errors, spans, started)
    ops = figures[-1].get("operations", 0) if figures else 0
    print("soak: controller: %d operations, %d failed: %d explained by %d faults (LAN, cloud, power), %d unexplained" % (
        ops, len(errors), len(explained), len(spans), len(unexplained)))
    for e, _ in unexplained[:10]:
        print("soak:   unexplained: t=%.1f s %s %s: %s" % (e.get("t", 0), e.get("op"), e.get("device"), e.get("error")))
    if unexplained:
        problems.append("%d controller failures no fault explains" % len(unexplained))
    if rows:
        for role in ("home", "relay"):
            n = rows[-1].get(role + "_error_lines", 0)
            print("soak: %s: %d error-level log lines" % (role, n))
            if n:
                problems.append("%s logged %d error-level lines" % (role, n))
    if not heap:
        problems.append("no heap figures from the controller (homectl soak's \"heap\" lines)")
    if not any(isinstance(r.get("home_heap_mib"), (int, float)) for r in rows):
        problems.append("no heap figures from the home (heapInUse in its /api/figures)")
    if closed is not None:
        held = closed.get("earlierHomesAlive", 0)
        print("soak: controller: %d of the homes it closed before the last still alive at the end" % held)
        if held:
            problems.append("%d closed homes were never freed in the controller" % held)
    if a.controller_exit != 0:
        problems.append("homectl soak exited with %d" % a.controller_exit)
    if "DEAD" in a.alive:
        problems.append("a process died: %s" % a.alive)
    if a.out:
        with open(os.path.join(a.out, "table.txt"), "w") as f:
            saved = sys.stdout
            sys.stdout = f
            print_table(means)
            sys.stdout = saved
        plot(rows, os.path.join(a.out, "soak.png"))
    if problems:
        for p in problems:
            print("soak: FAIL: " + p)
        return 1
    print("soak: PASS: no growth over %d %% after the warm-up, sessions and subscriptions within their bounds, "
          "no unexplained error, every process up" % int(GROWTH_LIMIT * 100))
    return 0


if __name__ == "__main__":
    sys.exit(main())
