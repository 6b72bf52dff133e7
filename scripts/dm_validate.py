"""Feeds one node's wildcard read (scripts/interop/wildcard_read.py's wildcard.json) to the
data-model validator (esp-matter-dm-validator, run in its venv by scripts/dm-conformance.sh)
and prints its findings, one line each, with the documented exceptions marked.

    dm_validate.py WILDCARD.json --label NAME --exceptions FILE [--report FILE]

The spec version is the one the node reports (BasicInformation SpecificationVersion), mapped
by the validator's own rule to the versions it has data for. A finding is one of: a required
cluster, attribute, command, feature or feature element missing; a revision that differs
(cluster or device type); an element listed twice; a device type the validator has no
requirements for; an endpoint without DeviceTypeList. Extra clusters (beyond the device
types') are printed as notes; event notes stay in the validator's report (a read has no events
to show, and the validator counts neither against compliance).

Exceptions (FILE): one per line, `LABEL-GLOB<TAB>FINDING-KEY<TAB>reason`, # comments. A finding
whose key (printed in brackets) matches is reported as an exception, not a violation. With
--all-exceptions-used, a rule for this label that matched nothing (stale) is a violation.

Exit 0 when no violation is left; the last line is `NAME: N violations, M exceptions`.
"""

import argparse
import fnmatch
import json
import logging
import sys

import importlib.resources
import inspect

from dmv_tool.configs.constants import SUPPORTED_SPEC_VERSIONS
from dmv_tool.validators import conformance_checker, convert_specification_version
from dmv_tool.validators.reporting import generate_conformance_report

# The validator's correction (issue #21): in validate_cluster, `found` is set only inside the
# loop over the device's command lists, so a cluster whose AcceptedCommandList and
# GeneratedCommandList are both empty keeps the value left by the previous element and passes
# with every required command missing. The one-line fix: reset it before that loop. Applied to
# the module as loaded, so an upgrade that fixes (or moves) the line stops this script loudly.
BUGGY_LOOP = "        for actual_cmd in actual_on_device_commands:\n"
FIXED_LOOP = "        found = False  # matter-sim: an empty command list finds nothing\n" + BUGGY_LOOP


def corrected_validator():
    source = inspect.getsource(conformance_checker)
    if source.count(BUGGY_LOOP) != 1:
        sys.exit("dm_validate: the validator's command loop is not where 1.0.5 has it; review the correction")
    exec(compile(source.replace(BUGGY_LOOP, FIXED_LOOP), conformance_checker.__file__, "exec"), conformance_checker.__dict__)
    return conformance_checker.validate_device_conformance


validate_device_conformance = corrected_validator()


def spec_version(parsed):
    """The version the node reports, or 1.5 (the validator's default) when it reports none."""
    for endpoint in parsed["endpoints"]:
        if endpoint["id"] != 0:
            continue
        attribute = endpoint["clusters"].get("0x0028", {}).get("attributes", {}).get("0x0015", {})
        value = attribute.get("SpecificationVersion")
        if isinstance(value, int) and value:
            version = convert_specification_version(value)
            if version in SUPPORTED_SPEC_VERSIONS:
                return version, value
            return "1.5", value
    return "1.5", None


def findings(results):
    """(key, text) for every failing element of the validator's results."""
    out = []
    for endpoint in results["endpoints"]:
        ep = endpoint["endpoint"]
        for device_type in endpoint["device_types"]:
            if "error" in device_type:
                out.append((f"ep{ep}/descriptor", device_type["error"]))
                continue
            if device_type.get("skipped"):
                if device_type.get("device_type_name") != "vendor_specific":
                    out.append((f"ep{ep}/device-type/{device_type['device_type_id']}", device_type["reason"]))
                continue
            dt = f"{device_type['device_type_id']:#06x}" if isinstance(device_type["device_type_id"], int) \
                else str(device_type["device_type_id"])
            dt_name = device_type.get("device_type_name", "?")
            for issue in device_type.get("revision_issues", []):
                if issue.get("item_type") == "cluster":
                    key = f"ep{ep}/{dt_name}/{issue['item_name']}/revision"
                elif issue.get("item_type") == "device_type":
                    key = f"ep{ep}/{dt_name}/revision"
                else:
                    key = f"ep{ep}/{dt_name}/revision-error"
                out.append((key, issue["message"]))
            for element in device_type.get("missing_elements", []):
                if element.get("type") == "info":
                    continue
                cluster = element.get("cluster_name", "?")
                if element["type"] == "cluster":
                    key = f"ep{ep}/{dt_name}/{cluster}"
                else:
                    key = f"ep{ep}/{dt_name}/{cluster}/{element['type']}/{element.get('name', element.get('id'))}"
                out.append((key, element.get("message") or f"{element['type']} missing"))
            for element in device_type.get("duplicate_elements", []):
                key = f"ep{ep}/{dt_name}/{element.get('cluster_name', '?')}/duplicate/{element.get('name')}"
                out.append((key, f"{element.get('name')} ({element.get('id')}) appears {element.get('count')} times"))
            if not device_type.get("is_compliant", True) and not any(k.startswith(f"ep{ep}/{dt_name}") for k, _ in out):
                out.append((f"ep{ep}/{dt_name}", f"device type {dt} ({dt_name}) not compliant"))
    # One finding per key (a cluster shared by two device types is checked twice).
    unique = {}
    for key, text in out:
        unique.setdefault(key, text)
    return list(unique.items())


def command_direction_findings(parsed, version):
    """The validator checks a required command against the union of AcceptedCommandList and
    GeneratedCommandList. Here each list on its own: a response (named *_response in the
    validator's data, as every Matter response command is) must be generated, any other
    command accepted."""
    data = json.loads(importlib.resources.files("dmv_tool.data").joinpath(f"validation_data_{version}.json").read_text())
    by_type = {int(entry["id"], 16): entry for entry in data}
    out = []
    for endpoint in parsed["endpoints"]:
        clusters = endpoint["clusters"]
        descriptor = clusters.get("0x001D", {}).get("attributes", {}).get("0x0000", {}).get("DeviceTypeList", [])
        for device_type in descriptor:
            entry = by_type.get(int(str(device_type.get("DeviceType")), 16))
            if not entry:
                continue
            for required in entry["clusters"]:
                if required.get("type") != "server" or not required.get("required"):
                    continue
                actual = clusters.get(required["id"].upper().replace("0X", "0x"))
                if actual is None:
                    continue  # a missing cluster is the validator's finding
                lists = actual.get("commands", {})
                accepted = {int(str(c), 16) if isinstance(c, str) else c
                            for c in lists.get("AcceptedCommandList", {}).get("AcceptedCommandList", [])}
                generated = {int(str(c), 16) if isinstance(c, str) else c
                             for c in lists.get("GeneratedCommandList", {}).get("GeneratedCommandList", [])}
                for command in required.get("commands", []):
                    response = command["name"].endswith("_response")
                    present = generated if response else accepted
                    if int(command["id"], 16) not in present:
                        which = "GeneratedCommandList" if response else "AcceptedCommandList"
                        key = f"ep{endpoint['id']}/{entry['name']}/{required['name']}/{which}/{command['name']}"
                        out.append((key, f"required command {command['name']} ({command['id']}) is not in {which}"))
    return out


def notes(results):
    out = []
    for endpoint in results["endpoints"]:
        for extra in endpoint.get("extra_clusters", []):
            out.append(f"ep{endpoint['endpoint']}: extra {extra.get('cluster_type')} cluster "
                       f"{extra.get('cluster_id')} ({extra.get('name', extra.get('cluster_name', '?'))})")
    return sorted(set(out))


def load_exceptions(path):
    rules = []
    with open(path) as source:
        for number, line in enumerate(source, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 3 or not parts[2].strip():
                sys.exit(f"{path}:{number}: expected LABEL-GLOB<TAB>FINDING-KEY<TAB>reason")
            rules.append({"label": parts[0], "key": parts[1], "reason": parts[2].strip(), "used": False})
    return rules


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wildcard")
    parser.add_argument("--label", required=True)
    parser.add_argument("--exceptions", required=True)
    parser.add_argument("--report", help="the validator's own report (text)")
    parser.add_argument("--all-exceptions-used", action="store_true",
                        help="a rule for this label that matched nothing fails the run")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)  # the validator logs every finding itself

    with open(args.wildcard) as source:
        parsed = json.load(source)
    version, reported = spec_version(parsed)
    results = validate_device_conformance(parsed, version)
    if args.report:
        with open(args.report, "w") as report:
            report.write(generate_conformance_report(results, version))

    rules = [rule for rule in load_exceptions(args.exceptions) if fnmatch.fnmatchcase(args.label, rule["label"])]
    label = args.label
    shown = f"{reported:#010x}" if reported is not None else "none"
    print(f"{label}: spec {version} (SpecificationVersion {shown}), "
          f"{len(parsed['endpoints'])} endpoints")
    violations = exceptions = 0
    every = dict(findings(results))
    for key, text in command_direction_findings(parsed, version):
        every.setdefault(key, text)
    for key, text in every.items():
        rule = next((r for r in rules if fnmatch.fnmatchcase(key, r["key"])), None)
        if rule:
            rule["used"] = True
            exceptions += 1
            print(f"  exception [{key}] {text} -- {rule['reason']}")
        else:
            violations += 1
            print(f"  VIOLATION [{key}] {text}")
    for note in notes(results):
        print(f"  note {note}")
    if args.all_exceptions_used:
        for rule in rules:
            if not rule["used"]:
                violations += 1
                print(f"  VIOLATION [stale exception] {rule['key']} matched nothing on {label}")
    print(f"{label}: {violations} violations, {exceptions} exceptions")
    sys.exit(1 if violations else 0)


if __name__ == "__main__":
    main()
