"""Prints a check's report (the JSON that reference_check.py writes) as one line per step
without its timings, so that two runs of the same check can be compared with diff.

    python3 scripts/interop/steps.py REPORT.json
"""

import json
import sys

# Values that measure time, not behaviour (and process IDs), differ from run to run.
VARYING = {"ms", "reconnectMs", "p50_ms", "p99_ms", "oldPid", "newPid", "trace"}

try:
    with open(sys.argv[1]) as report:
        steps = json.load(report)
except (OSError, ValueError, IndexError) as error:
    steps = [{"step": "report", "ok": False, "error": f"no report ({error})"}]
for step in steps:
    stable = {key: value for key, value in step.items() if key not in VARYING}
    print("PASS" if step.get("ok") else "FAIL", json.dumps(stable, sort_keys=True))
