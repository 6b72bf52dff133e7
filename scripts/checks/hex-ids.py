#!/usr/bin/env python3
"""Classifies the hex literals (0x…) in the Swift code of Sources/ outside generated files.

    scripts/checks/hex-ids.py                  the count per class, and per class and file
    scripts/checks/hex-ids.py --list           also each literal: file:line, class, rule
    scripts/checks/hex-ids.py --rules          the rules, in the order they are tried
    scripts/checks/hex-ids.py --max-ids N      exit 1 when more than N are class a
    scripts/checks/hex-ids.py --max-protocol N exit 1 when more than N are class b
    scripts/checks/hex-ids.py --max-other N    exit 1 when more than N are class c

Each literal gets the class of the first rule (RULES, below) that matches it:

  a  a data-model ID or constant written by hand: a cluster, attribute, command, event,
     device type or field ID, a status code, a model enum's value. These come from the
     generated layer (Sources/MatterModel/Generated: `Clusters.OnOff.Attribute.onOff`,
     `StatusCode.invalidCommand`), never a literal: the target is 0.
  b  a protocol identifier that is not a data-model ID: an opcode, a protocol ID, a
     message/exchange flag value, a vendor/product/node ID, a TLV tag the protocol fixes, an
     address prefix. Each is written once, by name; where pinned data carries a table (the
     model's status codes, test-event triggers, ID ranges) it is generated instead.
  c  not an identifier: a mask, a width bound, a byte of an encoding (the TLV control
     octet, DER/ASN.1, WebSocket framing, JSON/YAML text), an algorithm's published constant
     (FNV-1a, SplitMix64), test data. (The TLV control octet's codes are generated from the
     SDK's chip.tlv, the status codes from chip.interaction_model.)

A literal no rule matches is counted as class b: only what a rule proves is not an
identifier leaves the protocol count. Comments and string literals are not code, and linked
files (the guides' code) are not ours to change: neither is counted. Standard library only.
"""

import argparse
import json
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SOURCES = os.path.join(ROOT, "Sources")
MODEL = os.path.join(ROOT, "Sources/MatterModel/Resources/matter-model.json")
LIT = r"0x[0-9A-Fa-f][0-9A-Fa-f_]*"
HEX = re.compile(r"(?<![\w.])" + LIT)
CLASSES = {"a": "data-model IDs", "b": "protocol identifiers", "c": "not identifiers"}

# The all-ones values of 4..64 bits and those less one (a nullable field's maximum).
ALL_ONES = {(1 << n) - 1 for n in range(4, 65)} | {(1 << n) - 2 for n in range(8, 65, 8)}
# FNV-1a 64's offset basis and prime; SplitMix64's increment and multipliers.
PUBLISHED = {0xCBF29CE484222325, 0x100000001B3, 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB}


def value(literal):
    return int(literal.replace("_", ""), 16)


def model_constants():
    """{lower-case name: {values}} of every element of the model a literal could stand for."""
    model = json.load(open(MODEL))
    names = {}

    def add(name, number):
        key = re.sub(r"[^a-z0-9]", "", name.lower())
        names.setdefault(key, set()).add(int(number, 16) if isinstance(number, str) else int(number))

    for row in model["globalAttributes"] + model["retiredGlobalAttributes"] + model["globalFields"]:
        add(row["name"], row["id"])
    for code, name in model["statusCodes"]:
        add(name, code)
    for d in model["deviceTypes"]:
        add(d["name"], d["id"])
    for c in model["clusters"]:
        add(c["name"], c["id"])
        for kind in ("attributes", "commands", "events"):
            for row in c.get(kind, []):
                add(row["name"], row["id"])
        for e in c.get("enums", []):
            for number, name in e["values"]:
                if number >= 16:  # small values (0, 1, 2…) name too many things to tell
                    add(name, number)
    return names


MODEL_NAMES = model_constants()


def names_model_constant(line, literal):
    """The literal sits next to (within 3 words of) a name of a model element with its value."""
    v = value(literal)
    at = line.find(literal)
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line[:at])[-3:] + re.findall(r"[A-Za-z_][A-Za-z0-9_]*", line[at + len(literal):])[:1]
    keys = [w.lower().replace("_", "") for w in words]
    keys += [re.sub(r"(tag|id|code|value)$", "", k) for k in keys]  # fabricIndexTag, eventListID
    return any(v in MODEL_NAMES.get(k, ()) for k in keys)


def operand(pattern):
    """A line test: the literal stands as `pattern` says (LIT is the literal)."""
    return lambda line, literal: re.search(pattern.replace("LIT", re.escape(literal)), line) is not None


# (class, rule, why, path (regex on the path under Sources/) or None, test(line, literal)).
# Tried in order; the first whose path and test match gives the class.
RULES = [
    # -- a: data-model IDs. Generic: these hold in every file.
    ("a", "id-position", "in an ID type's initializer or after an ID's argument label",
     None, operand(r"\b(?:(?:Cluster|Attribute|Command|Event|DeviceType)ID\(\s*(?:rawValue:\s*)?"
                   r"|\b(?:cluster|attribute|command|event|deviceType|clusterID|attributeID|commandID|eventID|deviceTypeID):\s*)LIT")),
    ("a", "model-name", "next to the name of a model element (cluster, attribute, command, event, device type, status code, "
     "enum value >= 0x10) whose value it is", None, names_model_constant),

    # -- c: not identifiers. Generic.
    ("c", "mask", "an operand of & (selecting bits)", None, operand(r"&=?\s*\(?LIT\b|\bLIT\s*\)?\s*&(?![&*+])")),
    ("c", "named-mask", "a constant whose name says it is a mask", None, operand(r"\b(?:let|var)\s+(?:\w*Mask|mask)\s*(?::\s*\w+\s*)?=\s*LIT\b")),
    ("c", "published-constant", "FNV-1a 64's offset basis and prime, SplitMix64's constants",
     None, lambda line, literal: value(literal) in PUBLISHED),
    ("c", "width-bound", "an all-ones value (or one less) bounding a field's width: compared, clamped, a range's end",
     None, lambda line, literal: value(literal) in ALL_ONES
     and operand(r"(?:<=?|>=?)\s*LIT\b|\bLIT\s*(?:<=?|>=?|\.\.\.|\.\.<)|\b(?:min|max)\(.*LIT\b|\.\.\.\s*LIT\b")(line, literal)),
    ("c", "all-ones-sentinel", "an all-ones value (or one less) named as a sentinel or a maximum",
     None, lambda line, literal: value(literal) in ALL_ONES
     and re.search(r"\b(?:let|var)\s+\w*(?:[Mm]ax|[Nn]o[A-Z]\w*|all)\w*\s*(?::\s*\w+\s*)?=\s*" + re.escape(literal), line) is not None),
    ("c", "hex-digit", "a nibble's mask when writing a byte as hex digits", None, operand(r"digits\[Int\([^]]*LIT")),

    # -- b: protocol identifiers, each named once. By file, so a new kind shows up unclassified.
    ("b", "opcode", "a protocol's message opcodes (Core spec 4.11.1, 10.2.1)",
     r"^MatterProtocol/(SecureChannel/SecureChannelOpcode|InteractionModel/InformationBlock)\.swift$", operand(r"case \w+ = LIT")),
    ("b", "protocol-id", "protocol IDs (Core spec Appendix A, Table 'Protocol IDs')",
     r"^MatterProtocol/Messages/ProtocolID\.swift$", lambda line, literal: True),
    ("b", "header-flag", "message and exchange header flag values (Core spec 4.4.1, 4.4.3)",
     r"^MatterProtocol/Messages/(MessageHeader|ProtocolHeader)\.swift$", lambda line, literal: True),
    ("b", "im-tag", "a tag the Interaction Model fixes (InteractionModelRevision, 0xFF)",
     r"^MatterProtocol/InteractionModel/InformationBlock\.swift$", operand(r"Tag: UInt8 = LIT")),
    # -- b: identifiers by what the line names them, before the encodings' file rules.
    ("b", "vendor-product", "vendor and product IDs: the test vendor, a test product, the end of the test vendors",
     None, operand(r"(?:[Vv]endor\w*|[Pp]roduct\w*)(?::\s*\w+)?\s*(?:=|<=)\s*LIT\b")),
    ("b", "node-id", "node, fabric and subject IDs: operational ranges, CASE Authenticated Tag prefix, defaults",
     None, operand(r"(?:[Nn]ode\w*|[Ss]ubject\w*|[Ff]abric\w*|id|catSubjectPrefix|NodeID)\s*(?::\s*\w+\??)?\s*(?:=|<=|==)\s*\(?LIT\b"
                   r"|\b(?:subject|fabric\w*|\w*[Nn]odeID):\s*LIT\b|>> 32 == LIT|NodeID \{ LIT")),
    ("b", "spec-version", "the Matter specification version (BasicInformation SpecificationVersion, 1.4)",
     None, operand(r"[Ss]pecificationVersion(?::\s*\w+)?\s*[=:]\s*LIT")),

    # -- c: encodings, by file: bytes the format fixes, none of them an identifier.
    ("c", "der", "DER/ASN.1 and X.509 encoding: tags, bit strings, key usage bits, point format",
     r"^MatterCrypto/(Certificates/|FabricKeys\.swift)", lambda line, literal: True),
    ("c", "ccm-counter", "AES-CTR's counter block flags and initial counter (Core spec 3.7.1)",
     r"^MatterCrypto/AESCTR\.swift$", lambda line, literal: True),
    ("c", "text", "characters and code points of JSON/YAML text: whitespace, escapes, surrogates, printable ranges",
     r"^DeviceProfile/Clone/(DumpJSON|ProfileYAML|DumpValueDecoder)\.swift$", lambda line, literal: True),
    ("c", "newline", "a line feed written to the output", r"^dnssd-probe/main\.swift$", operand(r"append\(LIT\)")),
    ("c", "wait-status", "the POSIX wait status layout (WTERMSIG, WEXITSTATUS)",
     r"^matter-sim/DeviceProcessLauncher\.swift$", lambda line, literal: True),
    ("c", "mac-bits", "a generated MAC address's locally administered and unicast bits (IEEE 802)",
     r"^MatterDNSSD/MatterHost\.swift$", operand(r"\|\s*LIT\b|\bLIT\)\s*&")),
    ("c", "test-data", "test data: a default MAC address, a bench's frame mask key, a probe's default fabric ID, "
     "the test CD's version number",
     r"^(MatterDevice/Commissioning/CommissioningConfiguration|matter-relay/BenchFlood|dnssd-probe/main"
     r"|MatterCrypto/Attestation/DeviceAttestationCredentials)\.swift$", operand(r"hardwareAddress|key:|\?\? LIT|versionNumber")),

    ("c", "address-fields", "a group address's reserved octets (0x00) and prefix length (0x40: 64 bits) (RFC 3306)",
     r"^MatterProtocol/Sessions/GroupSessions\.swift$", lambda line, literal: value(literal) in (0x00, 0x40)),
    ("b", "group-address", "the IPv6 multicast prefix of a group (Core spec 2.5.6.2: FF35:0040:FD…, RFC 3306)",
     r"^MatterProtocol/Sessions/GroupSessions\.swift$", lambda line, literal: True),
    ("b", "websocket", "WebSocket header flags and opcodes (RFC 6455 5.2: FIN, MASK, binary, close, control)",
     r"^CloudRelay/WebSocketFrame\.swift$", lambda line, literal: True),
    ("b", "first-node-id", "the first node ID a home's fabric hands out (HomeStore's nextNodeID)",
     r"^HomeAPI/Store/HomeStore\.swift$", lambda line, literal: True),
    ("b", "link-local", "the IPv6 link-local prefix fe80::/10",
     r"^MatterDNSSD/DNSSDResolvedService\.swift$", lambda line, literal: True),
]


# What the rules must say of sample lines (path under Sources/, line, class, rule): checked on
# every run, so a rule edited out of shape fails here before it miscounts.
SAMPLES = [
    ("MatterProtocol/X.swift", "case AttributeID(0xFFFA): return", "a", "id-position"),
    ("DeviceProfile/X.swift", "static let eventList: UInt32 = 0xFFFA", "a", "model-name"),
    ("MatterModel/X.swift", "public static let fabricIndexTag: UInt8 = 0xFE", "a", "model-name"),
    ("MatterDevice/X.swift", "case occupied = 3, resourceExhausted = 0x89", "a", "model-name"),
    ("MatterDevice/X.swift", "let low = trigger & 0xFFFF", "c", "mask"),
    ("MatterDNSSD/X.swift", "guard discriminator <= 0xFFF else {", "c", "width-bound"),
    ("MatterDNSSD/X.swift", "case .ipv6: bytes[0] == 0xFE", "b", "unclassified"),
    ("MatterDevice/X.swift", "static let testVendorID: UInt16 = 0xFFF1", "b", "vendor-product"),
    ("MatterProtocol/SecureChannel/SecureChannelOpcode.swift", "case sigma1 = 0x30", "b", "opcode"),
    ("MatterTLV/TLVControl.swift", "static let structure: UInt8 = 0x15", "b", "unclassified"),  # generated from chip.tlv
    ("MatterDevice/X.swift", "case 0x005C_0000_0000_0090: .alarm(.smoke(.warning))", "b", "unclassified"),
]


def rule_for(path, line, literal):
    for rule in RULES:
        cls, name, _, where, test = rule
        if where is not None and not re.search(where, path):
            continue
        if test(line, literal):
            return cls, name
    return "b", "unclassified"


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


def literals():
    """(path relative to Sources/, line number, literal, class, rule) for every hex literal."""
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
            relative = os.path.relpath(path, SOURCES)
            for number, line in enumerate(code.split("\n"), 1):
                for match in HEX.finditer(line):
                    cls, rule = rule_for(relative, line, match.group(0))
                    found.append((relative, number, match.group(0), cls, rule))
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--list", action="store_true", help="list each literal with file:line, class and rule")
    parser.add_argument("--rules", action="store_true", help="print the rules in the order they are tried")
    parser.add_argument("--max-ids", type=int, help="fail when more than this are class a (data-model IDs)")
    parser.add_argument("--max-protocol", type=int, help="fail when more than this are class b (protocol identifiers)")
    parser.add_argument("--max-other", type=int, help="fail when more than this are class c (not identifiers)")
    args = parser.parse_args()
    if args.rules:
        for cls, name, why, where, _ in RULES:
            print("%s  %-20s %s%s" % (cls, name, why, "" if where is None else "  [files: %s]" % where))
        print("b  %-20s a literal no rule matches" % "unclassified")
        return
    for path, line, cls, rule in SAMPLES:
        got = rule_for(path, line, HEX.search(line).group(0))
        if got != (cls, rule):
            sys.exit("hex-ids: the rules take %r as %s %s, not %s %s" % (line, got[0], got[1], cls, rule))
    found = literals()
    if args.list:
        for path, line, literal, cls, rule in found:
            print("Sources/%s:%d: %s  %s %s" % (path, line, literal, cls, rule))
    else:
        for cls in CLASSES:
            per_file = {}
            for path, _, _, c, _ in found:
                if c == cls:
                    per_file[path] = per_file.get(path, 0) + 1
            for path, count in sorted(per_file.items(), key=lambda item: (-item[1], item[0])):
                print("%s %4d  Sources/%s" % (cls, count, path))
    limits = {"a": args.max_ids, "b": args.max_protocol, "c": args.max_other}
    failed = False
    for cls, what in CLASSES.items():
        count = sum(1 for f in found if f[3] == cls)
        limit = limits[cls]
        print("hex-ids: class %s (%s): %d%s" % (cls, what, count, "" if limit is None else " (limit %d)" % limit))
        if limit is not None and count > limit:
            failed = True
            advice = {"a": "write data-model IDs through the generated layer (Clusters.…, DeviceTypes.…, StatusCode.…)",
                      "b": "name a protocol identifier once and use the name; generate it where pinned data carries it",
                      "c": "see --list: a new literal no rule explains is class b; a new rule must say why it is not an identifier"}
            print("hex-ids: class %s above the limit: %s" % (cls, advice[cls]), file=sys.stderr)
    print("hex-ids: %d hex literals in Sources/ outside generated files" % len(found))
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
