"""Prints a check's report (checks.report's format, as reference_check.py and ohf_check.py
write it) as one line per step without its timings, so that two runs of the same check can be
compared with diff.

    python3 scripts/interop/steps.py REPORT.json
"""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "checks"))
from checks.report import load_steps  # noqa: E402 (the shared package, found above)

# Values that measure time, not behaviour (and process IDs), differ from run to run.
VARYING = {"ms", "followedMs", "reconnectMs", "p50_ms", "p99_ms", "oldPid", "newPid", "trace"}


def stable(value):
    """The value without what varies, at any depth (a step of several moves holds each one's)."""
    if isinstance(value, dict):
        return {key: stable(v) for key, v in value.items() if key not in VARYING}
    return value


try:
    steps = load_steps(sys.argv[1])
except (OSError, ValueError, IndexError, KeyError) as error:
    steps = [{"step": "report", "ok": False, "error": f"no report ({error})"}]
for step in steps:
    print("PASS" if step.get("ok") else "FAIL", json.dumps(stable(step), sort_keys=True))
