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

# (prompt, the acts that do it, in order): only what the device really has (its buttons, a
# person's hands; its battery's charge stands for waiting until it is charged or has run down).
# The prompts are the cases' own words at connectedhomeip 162df095e2, matched without case.
START, PAUSE, HOME, DOCK = ("vacuum", "start"), ("vacuum", "pause"), ("vacuum", "home"), ("vacuum", "dock")
HALF_CHARGED, CHARGED = ("battery", "50"), ("battery", "100")
RVC_ERRORS = {
    "failed to find dock": "failed-to-find-charging-dock", "stuck": "stuck", "dust bin missing": "dust-bin-missing",
    "dust bin full": "dust-bin-full", "water tank empty": "water-tank-empty", "water tank missing": "water-tank-missing",
    "water tank lid open": "water-tank-lid-open", "mop cleaning pad missing": "mop-cleaning-pad-missing",
}
ACTS = [
    # TC-RVCOPSTATE-2.3 step 2: a state Pause is accepted in, a run (Running).
    (r"state where it can receive a Pause command", [START]),
    # TC-RVCCLEANM-2.2 step 2: RVC Run Mode in a mode without the Idle tag (Cleaning).
    (r"CurrentMode attribute is set to a mode without the Idle mode tag", [START]),
    # TC-RVCRUNM-2.2 step 2: a mode with the Idle tag, from which a run can start (on its dock).
    (r"mode with the Idle\(0x4000\) mode tag and in a device state that allows changing", [DOCK]),
    # TC-RVCRUNM-2.2 step 9: Stopped, Paused, Charging or Docked after Idle sent it home.
    (r"one of Stopped\(0x00\), Paused\(0x02\), Charging\(0x41\) or Docked\(0x42\)", [DOCK]),
    # TC-RVCRUNM-2.1 / TC-RVCCLEANM-2.1 step 9: a state the change to MODE_CHANGE_OK succeeds from
    # (on its dock, Run Mode Idle: any run or clean mode may follow).
    (r"state from which it will SUCCESSFULLY transition to mode", [DOCK]),
    # The RVC Operational State cases' states (TC-RVCOPSTATE-2.1 step 6, 2.3 steps 16-43, 2.4).
    (r"in the running state", [START]),
    (r"in the paused state", [PAUSE]),
    (r"in the (error|Error\(0x03\)) (operational )?state", [("vacuum", "stuck")]),
    (r"in the (seeking charger|SeekingCharger\(0x40\)) (operational )?state", [DOCK, START, HOME]),
    (r"in the charging(\(0x41\))? (operational )?state", [HALF_CHARGED, DOCK]),
    (r"in the docked(\(0x42\))? (operational )?state", [CHARGED, DOCK]),
    (r"pause running due to an error, and be able to resume", [("vacuum", "stuck")]),
    (r"Manually clear the error", [("vacuum", "clear")]),
    # TC-RVCOPSTATE-2.1 step 7: its errors, and none (a person frees it and puts it on its dock).
    (r"in the no error state", [DOCK]),
] + [(rf"in the {words} error state", [("vacuum", act)]) for words, act in RVC_ERRORS.items()]
ACTS = [(re.compile(pattern, re.I), acts) for pattern, acts in ACTS]


def acts_for(prompt: str) -> list[tuple[str, str]] | None:
    """The acts a prompt asks for, or None."""
    return next((acts for pattern, acts in ACTS if pattern.search(prompt)), None)


def show_prompt(self, msg: str, placeholder: str | None = None, default_value: str | None = None) -> None:
    acts = acts_for(msg)
    if acts is None:
        logging.info(f"operator: no act for the prompt {msg.strip()!r}; left undone")
        return
    control = os.environ.get("CERT_CONTROL_SOCKET", "")
    for action, value in acts:
        try:
            answer = send(control, action, value)
        except OSError as error:
            answer = f"control socket {control}: {error}"
        logging.info(f"operator: act {action} {value}: {answer}")


def main() -> None:
    case = sys.argv[1]
    from chip.testing import matter_testing
    matter_testing.InternalTestRunnerHooks.show_prompt = show_prompt
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(case))
    runpy.run_path(case, run_name="__main__")


if __name__ == "__main__":
    main()
