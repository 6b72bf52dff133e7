#!/usr/bin/env python3
"""Counts the hex literals (0x…) in the Swift code of Sources/ outside generated files.

    scripts/checks/hex-ids.py                 print the count and the count per file
    scripts/checks/hex-ids.py --list          also each literal with file:line
    scripts/checks/hex-ids.py --max N         exit 1 when the count is above N
    scripts/checks/hex-ids.py --max-ids N     exit 1 when more than N of them stand where a
                                              data-model ID goes (`ClusterID(0x…)`, `attribute: 0x…`)

Data-model IDs (cluster, attribute, command, event, device type) come from the generated
layer (Sources/MatterModel/Generated, `Clusters.OnOff.Attribute.onOff`), never a literal;
what this counts is what is left: protocol constants (status codes, opcodes, TLV tags,
masks) and the few IDs not moved yet. Comments and string literals are not code, and linked
files (the guides' code) are not ours to change: neither is counted. Standard library only.
"""

import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "Sources")
HEX = re.compile(r"(?<![\w.])0x[0-9A-Fa-f][0-9A-Fa-f_]*")
# A literal in an ID type's initializer or after an ID's argument label: a data-model ID
# written by hand, never a protocol constant.
ID_SHAPED = re.compile(r"(?:\b(?:Cluster|Attribute|Command|Event|DeviceType)ID\(\s*(?:rawValue:\s*)?"
                       r"|\b(?:cluster|attribute|command|event|deviceType|clusterID|attributeID|commandID|eventID|deviceTypeID):\s*)"
                       r"(0x[0-9A-Fa-f][0-9A-Fa-f_]*)")


def code_only(text):
    """The text with comments and string literals blanked (newlines kept, so lines still count)."""
    out, i, n = [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text.startswith('"""', i):
            end = text.find('"""', i + 3)
            end = n if end < 0 else end + 3
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif text[i] == '"':
            # A one-line string; its interpolations `\(…)` hold no literals worth counting.
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def literals(pattern=HEX):
    """(path relative to the repository, line, literal) for every hex literal counted (or every
    one `pattern`'s first group, else its whole match, finds)."""
    found = []
    for directory, dirs, files in os.walk(SOURCES):
        dirs[:] = sorted(d for d in dirs if d != "Generated")
        for name in sorted(files):
            path = os.path.join(directory, name)
            # Links (GuideCode/) are the guides' own code, kept as the guides print it.
            if not name.endswith(".swift") or os.path.islink(path):
                continue
            with open(path, encoding="utf-8") as f:
                code = code_only(f.read())
            for number, line in enumerate(code.split("\n"), 1):
                for match in pattern.finditer(line):
                    found.append((os.path.relpath(path, ROOT), number, match.group(match.lastindex or 0)))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="list each literal with file:line")
    parser.add_argument("--max", type=int, help="fail when the count is above this")
    parser.add_argument("--max-ids", type=int, help="fail when more ID-shaped literals than this remain")
    args = parser.parse_args()
    found = literals()
    ids = literals(ID_SHAPED)
    per_file = {}
    for path, _, _ in found:
        per_file[path] = per_file.get(path, 0) + 1
    if args.list:
        for path, line, literal in found:
            print("%s:%d: %s" % (path, line, literal))
    else:
        for path, count in sorted(per_file.items(), key=lambda item: (-item[1], item[0])):
            print("%5d  %s" % (count, path))
    print("hex-ids: %d hex literals in Sources/ outside generated files%s" % (
        len(found), "" if args.max is None else " (limit %d)" % args.max))
    for path, line, literal in ids:
        print("%s:%d: %s stands where a data-model ID goes" % (path, line, literal))
    print("hex-ids: %d of them where a data-model ID goes%s" % (
        len(ids), "" if args.max_ids is None else " (limit %d)" % args.max_ids))
    failed = False
    if args.max is not None and len(found) > args.max:
        print("hex-ids: above the limit: write data-model IDs through the generated layer (Clusters.…, DeviceTypes.…)",
              file=sys.stderr)
        failed = True
    if args.max_ids is not None and len(ids) > args.max_ids:
        print("hex-ids: data-model IDs written by hand: use the generated layer (Clusters.…, DeviceTypes.…)", file=sys.stderr)
        failed = True
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
