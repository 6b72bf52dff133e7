"""The results of one chip.testing run, one case a line: `TC-X-n.m<TAB>pass|FAIL|n/a|harness`.

    python3 result.py results LOGS_DIR RUN_LOG METHODS LIMITS_TSV
    python3 result.py name test_TC_X_n_m

mobly's test_summary.yaml under LOGS_DIR gives each case's result (PASS, FAIL, ERROR, SKIP);
a case the run never reached (the script crashed, commissioning failed, the time ran out)
fails. A failure is a harness limit only when LIMITS_TSV (case, regex, why) lists the case and
its regex matches a line of RUN_LOG: the evidence is in the log, not in a list of names.
"""
import glob
import os
import re
import sys

import yaml

from plan import display_name


def summary(logs: str) -> dict[str, str]:
    results = {}
    for path in glob.glob(os.path.join(logs, "**", "test_summary.yaml"), recursive=True):
        with open(path) as f:
            for doc in yaml.safe_load_all(f):
                if isinstance(doc, dict) and doc.get("Type") == "Record" and doc.get("Test Name"):
                    results[doc["Test Name"]] = doc.get("Result", "ERROR")
    return results


def from_log(text: str) -> dict[str, str]:
    """The results the run log names (`[Test] test_X PASS`), where mobly left no summary."""
    return dict(re.findall(r"INFO \[Test\] (test_\w+) (PASS|FAIL|SKIP|ERROR)\b", text))


def limits(path: str) -> list[tuple[str, re.Pattern, str]]:
    rows = []
    if os.path.exists(path):
        for line in open(path):
            if line.strip() and not line.startswith("#"):
                case, regex, why = line.rstrip("\n").split("\t")[:3]
                rows.append((case, re.compile(regex), why))
    return rows


def main() -> None:
    if sys.argv[1] == "name":
        print(display_name(sys.argv[2]))
        return
    logs, run_log, methods, limits_file = sys.argv[2:6]
    text = open(run_log, errors="replace").read() if os.path.exists(run_log) else ""
    found = summary(logs) or from_log(text)
    for method in methods.split(","):
        case = display_name(method)
        raw = found.get(method)
        result = {"PASS": "pass", "SKIP": "n/a"}.get(raw or "", "FAIL")
        if result == "FAIL":
            for limit_case, regex, _ in limits(limits_file):
                if limit_case == case and regex.search(text):
                    result = "harness"
        print(f"{case}\t{result}")


if __name__ == "__main__":
    main()
