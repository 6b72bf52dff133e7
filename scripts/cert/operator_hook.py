"""The operator at the device for a case's prompts: a chip.testing case that asks for a hand at
the device ("Manually put the device in …", MatterBaseTest.wait_for_user_input) first calls
the hook a test harness offers for it, TestRunnerHooks.show_prompt (what a harness's UI shows
the operator). This runs a case file as its __main__ with that hook doing the prompt on the
device, on its control socket as `matter-sim act` does (app_pipe.send), before the case goes on:

    python operator_hook.py CASE.py ARGS...      (env CERT_CONTROL_SOCKET: the node's control socket)

The case then reads its stdin, at end of file, as without the hook. A prompt the table does
not know is logged and left undone, as before (the case then fails and says why).
"""
import logging
import os
import re
import runpy
import sys

from app_pipe import send

# (prompt, the act that does it): only what the device really has (its buttons, a person's
# hands). The prompts are the cases' own words at connectedhomeip 162df095e2.
ACTS = [
    # TC-RVCOPSTATE-2.3 step 2: a state Pause is accepted in, a run (Running).
    (re.compile(r"state where it can receive a Pause command"), ("vacuum", "start")),
    # TC-RVCCLEANM-2.2 step 2: RVC Run Mode in a mode without the Idle tag (Cleaning).
    (re.compile(r"CurrentMode attribute is set to a mode without the Idle mode tag"), ("vacuum", "start")),
    # TC-RVCRUNM-2.2 step 2: a mode with the Idle tag, from which a run can start (on its dock).
    (re.compile(r"mode with the Idle\(0x4000\) mode tag and in a device state that allows changing"), ("vacuum", "dock")),
    # TC-RVCRUNM-2.2 step 9: Stopped, Paused, Charging or Docked after Idle sent it home.
    (re.compile(r"one of Stopped\(0x00\), Paused\(0x02\), Charging\(0x41\) or Docked\(0x42\)"), ("vacuum", "dock")),
]


def act_for(prompt: str) -> tuple[str, str] | None:
    """The act a prompt asks for, or None."""
    return next((what for pattern, what in ACTS if pattern.search(prompt)), None)


def show_prompt(self, msg: str, placeholder: str | None = None, default_value: str | None = None) -> None:
    what = act_for(msg)
    if what is None:
        logging.info(f"operator: no act for the prompt {msg.strip()!r}; left undone")
        return
    control = os.environ.get("CERT_CONTROL_SOCKET", "")
    try:
        answer = send(control, *what)
    except OSError as error:
        answer = f"control socket {control}: {error}"
    logging.info(f"operator: act {' '.join(what)}: {answer}")


def main() -> None:
    case = sys.argv[1]
    from chip.testing import matter_testing
    matter_testing.InternalTestRunnerHooks.show_prompt = show_prompt
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(case))
    runpy.run_path(case, run_name="__main__")


if __name__ == "__main__":
    main()
