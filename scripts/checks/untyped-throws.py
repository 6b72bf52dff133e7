#!/usr/bin/env python3
"""Counts HomeAPI's public functions that throw untyped errors.

    scripts/checks/untyped-throws.py            print the count and each function's file:line
    scripts/checks/untyped-throws.py --max N    exit 1 when the count is above N

Every public function, initializer and subscript of HomeAPI (hand-written and generated)
throws `HomeError` by type, `throws(HomeError)`, as the Google Home APIs' calls do: an app
catches `catch let error as HomeError`, or with a typed `do throws(HomeError)`, never a
controller's or the relay's own error. Counted: a `public`/`open` declaration, or a member of a
`public protocol` (its requirements are public too), whose effects after the parameter list
say `throws` or `rethrows` without `(HomeError)`. Throwing closures among the parameters are
the caller's own and not counted. A declaration marked by a comment `// untyped-throws: WHY`
in the three lines above it is listed as an exception, with its reason, and not counted.
Standard library only.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOMEAPI = os.path.join(ROOT, "Sources", "HomeAPI")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
code_only = __import__("hex-ids").code_only

DECLARATION = re.compile(r"\b(func|init|subscript)\b")
PUBLIC = re.compile(r"\b(?:public|open)\b[^\n{};]*$")
PUBLIC_PROTOCOL = re.compile(r"\bpublic\s+protocol\s+\w+[^{]*\{")


def closing(text, start, opener, closer):
    """Index just past the bracket closing the one at `start`."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == opener:
            depth += 1
        elif text[i] == closer:
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def effects(text, start):
    """The words between a declaration's parameter list and its result, body or next line."""
    paren = text.find("(", start)
    if paren < 0:
        return ""
    end = closing(text, paren, "(", ")")
    stop = re.compile(r"->|\{|\bwhere\b|\n\s*(?:[@}]|\b(?:public|func|var|let|init|static|///))")
    match = stop.search(text, end)
    return text[end:match.start() if match else len(text)]


def protocol_bodies(text):
    spans = []
    for match in PUBLIC_PROTOCOL.finditer(text):
        spans.append((match.end(), closing(text, match.end() - 1, "{", "}")))
    return spans


def exception(raw_lines, line):
    """The reason given above the declaration at `line` (1-based), or None."""
    for above in raw_lines[max(0, line - 4):line - 1]:
        if "// untyped-throws:" in above:
            return above.split("// untyped-throws:", 1)[1].strip()
    return None


def untyped(path, exceptions=None):
    raw = open(path, encoding="utf-8").read()
    text = code_only(raw)
    raw_lines = raw.splitlines()
    in_protocol = protocol_bodies(text)
    found = []
    for match in DECLARATION.finditer(text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        public = PUBLIC.search(text[line_start:match.start()]) is not None
        public = public or any(a <= match.start() < b for a, b in in_protocol)
        if not public:
            continue
        said = effects(text, match.end())
        if re.search(r"\b(?:re)?throws\b(?!\s*\(\s*HomeError\s*\))", said):
            line = text.count("\n", 0, match.start()) + 1
            why = exception(raw_lines, line)
            if why is None:
                found.append(line)
            elif exceptions is not None:
                exceptions.append((line, why))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max", type=int, help="exit 1 when more than this many are found")
    args = parser.parse_args()
    found, excepted = [], []
    for root, _, files in sorted(os.walk(HOMEAPI)):
        for name in sorted(files):
            if name.endswith(".swift"):
                path = os.path.join(root, name)
                exceptions = []
                found += [(os.path.relpath(path, ROOT), line) for line in untyped(path, exceptions)]
                excepted += [(os.path.relpath(path, ROOT), line, why) for line, why in exceptions]
    for path, line, why in excepted:
        print(f"{path}:{line}: untyped by exception: {why}")
    for path, line in found:
        print(f"{path}:{line}: public, throws untyped errors (want throws(HomeError))")
    print(f"untyped-throws: {len(found)} public HomeAPI function(s) without throws(HomeError)"
          f" ({len(excepted)} marked exception(s))")
    return 1 if args.max is not None and len(found) > args.max else 0


if __name__ == "__main__":
    sys.exit(main())
