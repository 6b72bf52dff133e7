#!/usr/bin/env python3
"""Checks that Package.swift declares exactly the modules each target imports.

    scripts/checks/package-deps.py            runs `swift package dump-package`
    scripts/checks/package-deps.py FILE       reads that JSON from FILE (- for stdin)

For every library, executable and test target, the modules its Swift files import
(the toolchain's own left out) must be its declared dependencies (targets and products),
and every declared dependency must be imported somewhere in it (a test target may also declare
the executables it runs from the build folder). A module reached only through
another one's imports builds by luck of the build order; one declared but never imported
costs every build of the target. The layer rule of docs/ARCHITECTURE.md holds too: every
target under Sources/ is a row of its layer table, and leans (declares a dependency) only on
this package's modules its row's "leans on" column names, or what those lean on in turn; a
target in LAYER_RULES reaches none of the modules listed for it, directly or through its
dependencies. Exit 1 naming each target and module otherwise.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Modules of the toolchain and the C library: imported, never declared.
TOOLCHAIN = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Musl",
             "Darwin", "Synchronization", "_Concurrency", "os", "XCTest", "Testing"}

IMPORT = re.compile(r"\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:public\s+|package\s+|internal\s+)?import\s+"
                    r"(?:struct\s+|class\s+|enum\s+|protocol\s+|func\s+|typealias\s+|var\s+|let\s+)?(\w+)")


# Modules a target must not reach, even through another dependency, and why.
LAYER_RULES = {
    "HomeAPI": {"RelayClients": "HomeAPI reaches the relay through its RelayControllerLink protocol; "
                                "the RelayClients implementation is HomeRelayLink's, given by the app"},
}


ARCHITECTURE = os.path.join(ROOT, "docs", "ARCHITECTURE.md")


def layer_table():
    """docs/ARCHITECTURE.md's layer table: each module of a row (first column) and the names
    its last column ("leans on") gives, parenthesized remarks left out."""
    rows, inside = {}, False
    with open(ARCHITECTURE, encoding="utf-8") as doc:
        for line in doc:
            if line.startswith("| module |") and "leans on" in line:
                inside = True
                continue
            if not inside:
                continue
            if not line.startswith("|"):
                break
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            if set(cells[0]) <= set("- :"):
                continue
            leans = re.sub(r"\([^()]*\)", "", cells[-1])
            names = set(re.findall(r"[\w-]+", leans)) - {"and", "nothing"}
            for module in re.findall(r"`([\w-]+)`", cells[0]):
                rows[module] = names
    return rows


def layer_problems(targets, sources):
    """Each target under Sources/ against its row of the layer table."""
    rows = layer_table()
    problems = []
    for name in sorted(sources):
        if name not in rows:
            problems.append(f"{name}: not a row of docs/ARCHITECTURE.md's layer table, so no layer rule covers it")
            continue
        allowed, stack = set(), [n for n in rows[name] if n in targets]
        while stack:
            current = stack.pop()
            if current not in allowed:
                allowed.add(current)
                stack.extend(n for n in rows.get(current, ()) if n in targets)
        modules = {t.replace("-", "_") for t in targets}
        for module in sorted(declared(targets[name]) & modules - {a.replace("-", "_") for a in allowed}):
            problems.append(f"{name}: depends on {module}, which docs/ARCHITECTURE.md's layer table does not let it "
                            f"lean on (its row: {', '.join(sorted(rows[name] & set(targets))) or 'nothing'}, and below)")
    return problems


def reachable(name, targets):
    """Every target `name` depends on, directly or through others (targets of this package only)."""
    seen, stack = set(), list(declared(targets[name]))
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        if current in targets:
            stack.extend(declared(targets[current]))
    return seen


def declared(target):
    names = set()
    for dependency in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                # An executable's module is imported with `_` for `-` (`@testable import matter_sim`).
                names.add(dependency[kind][0].replace("-", "_"))
    return names


def imported(directory):
    modules = set()
    for root, _, files in os.walk(directory):
        for name in files:
            if name.endswith(".swift"):
                with open(os.path.join(root, name), encoding="utf-8") as source:
                    for line in source:
                        match = IMPORT.match(line)
                        if match:
                            modules.add(match.group(1))
    return modules - TOOLCHAIN


def main():
    if len(sys.argv) > 1:
        text = sys.stdin.read() if sys.argv[1] == "-" else open(sys.argv[1]).read()
    else:
        text = subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
    package = json.loads(text)
    problems = []
    checked = 0
    executables = {t["name"].replace("-", "_") for t in package["targets"] if t["type"] == "executable"}
    for target in sorted(package["targets"], key=lambda t: t["name"]):
        if target["type"] not in ("regular", "executable", "test"):
            continue
        home = "Tests" if target["type"] == "test" else "Sources"
        directory = os.path.join(ROOT, target.get("path") or f"{home}/{target['name']}")
        if not os.path.isdir(directory):
            continue
        checked += 1
        uses, says = imported(directory), declared(target)
        if target["type"] == "test":
            # A test target declares the executables it runs from the build folder: built, not imported.
            says -= executables - uses
        # A system library target is declared by name and imported by name too.
        for module in sorted(uses - says):
            problems.append(f"{target['name']}: imports {module}, which Package.swift does not declare for it")
        for module in sorted(says - uses):
            problems.append(f"{target['name']}: declares {module}, which none of its files imports")
    targets = {t["name"]: t for t in package["targets"]}
    sources = [t["name"] for t in package["targets"] if t["type"] in ("regular", "executable") and not t.get("path")
               and os.path.isdir(os.path.join(ROOT, "Sources", t["name"]))]
    problems += layer_problems(targets, sources)
    for name, forbidden in sorted(LAYER_RULES.items()):
        if name not in targets:
            continue
        reached = reachable(name, targets) | imported(os.path.join(ROOT, targets[name].get("path") or f"Sources/{name}"))
        for module, why in sorted(forbidden.items()):
            if module in reached:
                problems.append(f"{name}: reaches {module}, against the layer rule: {why}")
    for problem in problems:
        print(problem)
    print(f"package-deps: {checked} targets, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
