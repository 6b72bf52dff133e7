"""connectedhomeip's YAML certification cases as chip.testing cases: one test method per
src/app/tests/suites/certification/Test_TC_*.yaml of the checkout in $CHIP_DIR, named as the
Python cases are (Test_TC_OO_2_1.yaml -> test_TC_OO_2_1), so cert.sh runs, logs and counts
them alike:

    python3 yaml_cases.py --tests test_TC_OO_2_1 --endpoint 1 --PICS pics.txt ... (chip.testing's options)

Each step goes through connectedhomeip's own YAML machinery, as its chip-repl CI runner does
it: matter.yamltests parses the file against the cluster XML (zap-templates) and the device's
PICS, chip.yaml's ReplTestRunner sends the step with the case's commissioned controller and
the step's own checks judge the response. The file's nodeId and endpoint are overridden by the
commissioned node and --endpoint (chip-tool's own overrides); a step whose PICS the device does
not declare is skipped, as the YAML says, and so is an operator's prompt (LogCommands
UserPrompt), which SDK CI gates off by PICS too. SDK CI's reboot step (SystemCommands Reboot,
PICS_SDK_CI_ONLY) power-cycles the node through its control socket (`matter-sim fault`), the
socket cert.sh's device keeps beside the case's storage. A user parameter (--int-arg NAME:N)
overrides the file's config variable NAME, a PIXIT such as WNCV's fullMotionDuration.
"""
import glob
import logging
import os
import subprocess
import tempfile
import time

from chip.testing.matter_testing import MatterBaseTest, async_test_body, default_matter_test_main
from chip.yaml.runner import ReplTestRunner
from matter.yamltests.definitions import SpecDefinitionsFromPaths
from matter.yamltests.parser import PostProcessCheckStatus, TestParser, TestParserConfig
from matter.yamltests.pseudo_clusters.pseudo_clusters import get_default_pseudo_clusters
from mobly import asserts

CHIP_DIR = os.environ.get("CHIP_DIR", os.path.join(os.getcwd(), "..", ".."))
SUITE = os.path.join(CHIP_DIR, "src", "app", "tests", "suites", "certification")
CLUSTER_XML = os.path.join(CHIP_DIR, "src", "app", "zap-templates", "zcl", "data-model", "chip", "*.xml")
# SDK CI reboots its app between steps (SystemCommands Reboot); here the node is power-cycled
# through `matter-sim fault` on its control socket, which cert.sh keeps beside the case's
# storage (<work>/state/control.sock), with the matter-sim it runs.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MATTER_SIM = os.environ.get("MATTERSIM_BIN", os.path.join(ROOT, ".build", "debug")) + "/matter-sim"


def is_reboot(step) -> bool:
    return step.cluster == "SystemCommands" and step.command == "Reboot"


def reboot(control: str) -> None:
    """Power-cycles the node: it boots again from its kept state, as a reboot does."""
    for action in ("power-off", "power-on"):
        subprocess.run([MATTER_SIM, "fault", "--control", control, "all", action], check=True, timeout=30,
                       stdout=subprocess.DEVNULL)
        time.sleep(1)


class YamlCases(MatterBaseTest):
    @property
    def default_timeout(self) -> int:
        # A YAML case waits as its steps say (DelayCommands); cert.sh bounds the whole run.
        return 900

    async def run_yaml(self, path: str) -> None:
        definitions = SpecDefinitionsFromPaths([CLUSTER_XML], get_default_pseudo_clusters())
        with tempfile.NamedTemporaryFile("w", suffix=".pics", delete=False) as pics:
            pics.writelines(f"{code}={1 if value else 0}\n" for code, value in self.matter_test_config.pics.items())
        # A PIXIT given as a user parameter (--int-arg fullMotionDuration:N) sets the config
        # variable of that name, as chip-tool's --NAME does; the file's default stands otherwise.
        overrides = {**self.matter_test_config.global_test_params, "nodeId": self.dut_node_id, "endpoint": self.matter_test_config.endpoint}
        parsed = TestParser(path, TestParserConfig(pics.name, definitions, overrides))
        os.unlink(pics.name)
        runner = ReplTestRunner(definitions, self.certificate_authority_manager, self.default_controller)
        control = os.path.join(os.path.dirname(os.path.abspath(self.matter_test_config.storage_path)), "state", "control.sock")
        try:
            for number, step in enumerate(parsed.tests, start=1):
                if is_reboot(step) and os.path.exists(control) and step.pics == "PICS_SDK_CI_ONLY":
                    # SDK CI's own reboot step (its app control): the harness has one too.
                    logging.info(f"YAML step {number}: {step.label}: power-cycling the node")
                    reboot(control)
                    continue
                if not step.is_pics_enabled:
                    logging.info(f"YAML step {number}: {step.label}: skipped (PICS {step.pics})")
                    continue
                if step.command == "UserPrompt":
                    # An operator's check (a prompt): SDK CI gates these off by PICS; nobody answers here.
                    logging.info(f"YAML step {number}: {step.label}: operator prompt, skipped")
                    continue
                logging.info(f"YAML step {number}: {step.label}")
                action = runner.encode(step)
                asserts.assert_is_not_none(action, f"YAML step {number} ({step.label}): the harness cannot encode it")
                decoded = runner.decode(await runner.execute(action))
                result = step.post_process_response(decoded)
                if not result.is_success():
                    problems = [f"{e.state}: {e.message}" for e in result.entries if e.state != PostProcessCheckStatus.SUCCESS]
                    for problem in problems:
                        logging.error(f"YAML step {number} ({step.label}): {problem}")
                    # What the device answered: the checks above name no values.
                    logging.error(f"YAML step {number} ({step.label}): the response was {decoded}")
                    asserts.fail(f"YAML step {number} ({step.label}) failed: {'; '.join(problems)}")
        finally:
            runner.shutdown()


def _case(path: str):
    async def case(self):
        await self.run_yaml(path)
    return async_test_body(case)


for _path in sorted(glob.glob(os.path.join(SUITE, "Test_TC_*.yaml"))):
    setattr(YamlCases, "test_" + os.path.basename(_path)[len("Test_"):-len(".yaml")], _case(_path))

if __name__ == "__main__":
    default_matter_test_main()
