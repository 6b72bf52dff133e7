"""One step/report format for every checker.

A step is a JSON object {"step": NAME, "ok": BOOL, ...its values}; a checker that covers many
devices adds "device". Each step prints one line, `PASS …` or `FAIL …`, and a run closes with
`LABEL: N passed, M failed` (the line scripts/test.sh and the shell checks grep). The report
file is the list of steps, or {"steps": [...], …} when a run adds more (Home Assistant's
events); load_steps() reads either.
"""

import asyncio
import json
import time
import traceback


def elapsed_ms(start):
    return round((time.monotonic() - start) * 1000, 1)


def json_line(entry):
    """`PASS {"step": …}`: the whole step as JSON (the reference controller's checkers)."""
    return json.dumps(entry)


def device_line(entry):
    """`PASS Kitchen Light: ep1 OnOff On (key=value …)`: many devices in one run."""
    values = {k: v for k, v in entry.items() if k not in ("device", "step", "ok", "trace")}
    detail = " ".join(f"{k}={json.dumps(v)}" for k, v in values.items())
    return f"{entry.get('device')}: {entry['step']}" + (f" ({detail})" if detail else "")


class Report:
    """Records steps, prints a line per step and the closing line, writes the report.

    path: where write() puts it; write_each: written after every step too, so a run that is
    killed still leaves what it did. line: how a step is printed (json_line or device_line)."""

    def __init__(self, label, path=None, line=json_line, write_each=False):
        self.label = label
        self.path = path
        self.line = line
        self.write_each = write_each
        self.steps = []

    def record(self, step, ok, device=None, **values):
        entry = {"device": device} if device is not None else {}
        entry.update({"step": step, "ok": bool(ok), **values})
        self.steps.append(entry)
        print(("PASS " if ok else "FAIL ") + self.line(entry), flush=True)
        if self.write_each:
            self.write()
        return bool(ok)

    async def step(self, step, body, device=None, timeout_s=None):
        """Runs body (a coroutine, or a function giving one) that returns (ok, values) as a
        step with its "ms"; a raise or running out of timeout_s is a failed step."""
        start = time.monotonic()
        try:
            coroutine = body() if callable(body) else body
            ok, values = await (asyncio.wait_for(coroutine, timeout_s) if timeout_s else coroutine)
        except (Exception, asyncio.TimeoutError) as error:  # a step's failure, not the run's
            return self.record(step, False, device, error=f"{type(error).__name__}: {error}", ms=elapsed_ms(start),
                               trace=traceback.format_exc(limit=3))
        return self.record(step, ok, device, **{"ms": elapsed_ms(start), **values})

    def passed(self):
        return sum(entry["ok"] for entry in self.steps)

    def failed(self):
        return len(self.steps) - self.passed()

    def all_passed(self):
        return bool(self.steps) and self.failed() == 0

    def summary(self):
        print(f"{self.label}: {self.passed()} passed, {self.failed()} failed", flush=True)

    def write(self, **extra):
        """The list of steps, or {"steps": …, **extra} when there is more to say."""
        if self.path:
            with open(self.path, "w") as out:
                json.dump({"steps": self.steps, **extra} if extra else self.steps, out, indent=1)


def load_steps(path):
    """The steps of a report written by Report.write (either shape)."""
    with open(path) as report:
        data = json.load(report)
    return data["steps"] if isinstance(data, dict) else data
