"""Which of connectedhomeip's Python certification cases apply to a device, and how to run them.

    python3 plan.py CHIP_DIR PICS_FILE [REGEX]

PICS_FILE is pics.py's output, beside it its map of picsCode -> endpoints. The YAML cases
(src/app/tests/suites/certification/Test_TC_*.yaml, run by yaml_cases.py) are planned alike,
their file's top-level PICS standing for a pics_ method, with file `yaml_cases.py`: those with
an automated step only (a case all of whose steps are disabled, operator prompts, logs or the
commissioning wait is a manual one), and not those a Python case of the same name replaced. A case
TC_<CODE>_x_y applies when the device serves the cluster whose picsCode is CODE (it runs against
the first endpoint that serves it, an application endpoint before the root), or when CODE names
the node as a whole (CORE, against endpoint 0). The case's own guards (its PICS and
run_if_endpoint_matches) decide the rest: a case whose pics_ list (the PICS the test harness
selects it by) names a code the device does not declare is not applicable; the others run. PIXITs come from the case's CI arguments
(the `--int-arg`, `--bool-arg`, ... of the CI run that lists it), except those that name a part
of the device (pics.py reads them from it: the CI values name connectedhomeip's example app). Prints one run per line, tab
separated: file, endpoint, the cases (comma separated), the PIXIT arguments (JSON list, first
"qr" where the case commissions by setup code, before it "nocommission" where the case's CI run
does not commission first); TC_pics_checker once per endpoint; and one
`n/a` line per case whose cluster the device does not serve.
"""
import glob
import json
import os
import re
import shlex
import sys

import yaml

# Cases about the node as a whole rather than one cluster: interaction model, device
# attestation, secure channel, device types, system model, access control enforcement,
# resource requirements.
CORE = {"IDM", "DA", "SC", "DT", "SM", "ACE", "RR"}
# Cluster PICS codes the test plans spell differently from the data model XML.
ALIASES = {"WebRTCProvider": "WEBRTCP", "WebRTCRequestor": "WEBRTCR"}
# Cases whose script (at the checkout's commit) has no pics_ method though every step exercises
# one optional element: the PICS that element's conformance gives (the TH selects by it).
# TC-ACL-2.3/2.5/2.7 write and read only the Extension attribute and its event, mandatory only
# with feature EXTS (Core 9.10.4.1); connectedhomeip later gave TC_ACL_2_5 exactly this pics_.
PLAN_PICS = {"TC_ACL_2_3": ["ACL.S.A0001"], "TC_ACL_2_5": ["ACL.S.A0001"], "TC_ACL_2_7": ["ACL.S.A0001"]}
PIXIT_OPTIONS = {"--int-arg", "--bool-arg", "--float-arg", "--string-arg", "--json-arg", "--hex-arg"}
PICS_CODE = re.compile(r"""["']([A-Z][A-Za-z0-9]*\.[A-Za-z0-9.]+)["']""")
CASE = re.compile(r"^\s+(?:async\s+)?def (test_TC_([A-Za-z]+)_\w+)\(", re.M)


def display_name(method: str) -> str:
    """test_TC_CADMIN_1_22 -> TC-CADMIN-1.22, as the test plans name cases."""
    code, _, number = method[len("test_TC_"):].partition("_")
    return f"TC-{code}-{number.replace('_', '.')}"


def ci_runs(text: str) -> list[list[str]]:
    """The script-args of each CI run in the file's `CI TEST ARGUMENTS` block, split."""
    block = re.search(r"=== BEGIN CI TEST ARGUMENTS ===(.*?)=== END CI TEST ARGUMENTS ===", text, re.S)
    if not block:
        return []
    lines = [line[1:] if line.startswith("#") else line for line in block.group(1).splitlines()]
    runs, current, collecting = [], None, False
    for line in lines:
        if re.match(r"^\s+script-args:", line):
            current, collecting = [], True
            runs.append(current)
            rest = line.split(":", 1)[1].strip()
            if rest and rest not in (">", "|"):
                current.extend(shlex.split(rest))
                collecting = False
            continue
        if collecting:
            if re.match(r"^\s+[a-z-]+:", line) and not line.strip().startswith("--"):
                collecting = False
            elif line.strip():
                current.extend(shlex.split(line.strip()))
    return runs


def pixits(args: list[str]) -> tuple[list[str], list[str]]:
    """(the PIXIT options, and "qr" when the run commissions by setup code, then the --test-case
    names) of one CI run."""
    out, cases, i = [], [], 0
    while i < len(args):
        if args[i] in PIXIT_OPTIONS:
            j = i + 1
            while j < len(args) and not args[j].startswith("--"):
                out += [args[i], args[j]]
                j += 1
            i = j
        elif args[i] in ("--test-case", "--tests"):
            j = i + 1
            while j < len(args) and not args[j].startswith("--"):
                cases.append(args[j])
                j += 1
            i = j
        else:
            i += 1
    # The all-clusters app's own test event trigger key means nothing to another device.
    out = [a for a in out if "enableKey:" not in a] if "--hex-arg" in out else out
    # A case that wants the setup code (TC-SC-7.1 reads it) gets the device's own QR code.
    if "--qr-code" in args or "--manual-code" in args:
        out = ["qr"] + out
        # A case whose CI run does not commission first (TC-SC-7.1) commissions by itself.
        if "--commissioning-method" not in args:
            out = ["nocommission"] + out
    return out, cases


def required_pics(text: str, case: str) -> list[str]:
    """The PICS codes in the body of the case's pics_<case> method."""
    body = re.search(rf"def pics_{case}\(self\)[^:]*:(.*?)(?=\n    (?:@|def |async def )|\Z)", text, re.S)
    return PICS_CODE.findall(body.group(1)) if body else PLAN_PICS.get(case, [])


# YAML steps that are no automated check: an operator's prompt, a log line, the commissioning wait.
MANUAL_STEPS = {"UserPrompt", "WaitForCommissionee", "Log"}


def yaml_cases(chip: str, python_methods: set[str]) -> list[tuple[str, str, list[str], list[str]]]:
    """(method, code, top-level PICS, config names) of each automated YAML case no Python case replaced."""
    cases = []
    for path in sorted(glob.glob(os.path.join(chip, "src", "app", "tests", "suites", "certification", "Test_TC_*.yaml"))):
        method = "test_" + os.path.basename(path)[len("Test_"):-len(".yaml")]
        match = re.match(r"test_TC_([A-Za-z]+)_\w+$", method)
        if not match or method in python_methods:
            continue
        try:
            doc = yaml.safe_load(open(path)) or {}
        except yaml.YAMLError:
            continue
        steps = [t for t in doc.get("tests") or [] if isinstance(t, dict)]
        automated = [
            t for t in steps
            if not t.get("disabled") and t.get("command") not in MANUAL_STEPS
            and not str(t.get("PICS") or "").strip().startswith("PICS_USER_PROMPT")
        ]
        if automated:
            top = doc.get("PICS") or []
            config = list((doc.get("config") or {}).keys())
            cases.append((method, ALIASES.get(match.group(1), match.group(1)), [top] if isinstance(top, str) else list(top), config))
    return cases


def main() -> None:
    chip, pics_file = sys.argv[1], sys.argv[2]
    only = re.compile(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else None
    declared_map = json.load(open(pics_file + ".endpoints.json"))
    served, device_pixits = declared_map["endpoints"], declared_map.get("pixits", {})
    declared = {line.split("=")[0] for line in open(pics_file) if line.strip().endswith("=1")}
    testing = os.path.join(chip, "src", "python_testing")
    python_methods = set()
    for name in sorted(os.listdir(testing)):
        if name.startswith("TC_") and name.endswith(".py"):
            python_methods.update(m for m, _ in CASE.findall(open(os.path.join(testing, name)).read()))
    for method, code, top_pics, config in yaml_cases(chip, python_methods):
        if only and not only.search(method[len("test_"):]):
            continue
        if code in served:
            endpoint = next((e for e in served[code] if e != 0), served[code][0])
        elif code in CORE:
            endpoint = 0
        else:
            print(f"n/a\tyaml_cases.py\t{display_name(method)}\tthe device serves no {code} cluster")
            continue
        missing = [p for p in top_pics if p not in declared]
        if missing:
            print(f"n/a\tyaml_cases.py\t{display_name(method)}\tthe device declares no {', '.join(missing)}")
            continue
        # A config variable that names the endpoint of a cluster (Groups.Endpoint, PIXIT.G.ENDPOINT):
        # the device's first application endpoint that serves it.
        args = [x for name in config if name.endswith(".Endpoint") and name in device_pixits
                for x in ("--int-arg", f"{name}:{device_pixits[name]}")]
        print(f"run\tyaml_cases.py\t{endpoint}\t{method}\t{json.dumps(args)}")
    for name in sorted(os.listdir(testing)):
        if not (name.startswith("TC_") and name.endswith(".py")):
            continue
        text = open(os.path.join(testing, name)).read()
        runs = [pixits(r) for r in ci_runs(text)]
        groups: dict[tuple, list[str]] = {}
        for method, code in CASE.findall(text):
            case = method[len("test_"):]
            if only and not only.search(case):
                continue
            code = ALIASES.get(code, code)
            if code in served:
                eps = served[code]
                endpoint = next((e for e in eps if e != 0), eps[0])
            elif code in CORE:
                endpoint = 0
            else:
                print(f"n/a\t{name}\t{display_name(method)}\tthe device serves no {code} cluster")
                continue
            if name == "TC_pics_checker.py":
                # The PICS checker compares one endpoint with that endpoint's PICS: every endpoint.
                for e in sorted({e for eps in served.values() for e in eps}):
                    groups.setdefault((e, json.dumps([])), []).append(method)
                continue
            missing = [p for p in required_pics(text, case) if p not in declared]
            if missing:
                print(f"n/a\t{name}\t{display_name(method)}\tthe device declares no {', '.join(missing)}")
                continue
            args = next((p for p, cases in runs if method in cases), None)
            if args is None:
                args = next((p for p, cases in runs if not cases), runs[0][0] if runs else [])
            args = [f"{a.split(':')[0]}:{device_pixits[a.split(':')[0]]}" if a.split(":")[0] in device_pixits else a for a in args]
            groups.setdefault((endpoint, json.dumps(args)), []).append(method)
        for (endpoint, args), methods in groups.items():
            print(f"run\t{name}\t{endpoint}\t{','.join(methods)}\t{args}")


if __name__ == "__main__":
    main()
