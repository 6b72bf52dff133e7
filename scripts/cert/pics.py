"""The device's PICS, from what it declares: a chip.testing case (run by scripts/cert.sh) that
commissions the device, reads every attribute once (a wildcard read) and writes, for each server
cluster on any endpoint, the PICS codes of the certification test plans:

    <code>.S=1  <code>.S.A<attr>=1  <code>.S.C<cmd>.Rsp=1  <code>.S.C<cmd>.Tx=1  <code>.S.F<bit>=1

(<code> is the cluster's picsCode in connectedhomeip's data_model XML), <code>.C=1 for each
client cluster in a Descriptor's ClientList, MCORE.ROLE.COMMISSIONEE=1, and the few manual
PICS (.M.) that state matter-sim's behaviour where the spec leaves a choice (MANUAL). Nothing is
added or left out to pass or skip a case. Also writes each endpoint's own PICS (FILE.ep<N>)
and, beside them, a JSON map of picsCode -> endpoints and the PIXITs that name a part of the device (TC-ACE-1.4's application endpoint, its device type, a
cluster and an attribute of it; TC-RVCRUNM-2.2's two run modes), read from the device as the rest.

    python pics.py --string-arg out:FILE --string-arg data_model:DIR <chip.testing options>
"""
import glob
import json
import os
import xml.etree.ElementTree as ET

from chip.clusters.ClusterObjects import ALL_ATTRIBUTES, ALL_CLUSTERS
from chip.testing.matter_testing import MatterBaseTest, async_test_body, default_matter_test_main

# Manual PICS (.M.) state how the device behaves where the data model leaves a choice; the
# vendor declares them. matter-sim's behaviour, when the device has the element named:
# the Door Lock's AutoRelockTime, WrongCodeEntryLimit, UserCodeTemporaryDisableTime and
# RequirePINforRemoteOperation accept writes (RW VA, as the spec's access has it), and so does
# its OperatingMode (R[W] VM: writable at the vendor's choice; a remote lock or unlock obeys it).
# A robot vacuum's RVC Run Mode can be changed by hand at the device (CAN_MANUALLY_CONTROLLED:
# its clean button starts a run, Cleaning; its home button or a person carrying it to the dock
# makes it Idle), and its RVC Operational State can be brought by hand into each state it has
# but Stopped (it never stops outside its dock), and each of its RVC errors of Matter 1.4 or none
# (`matter-sim act NODE vacuum start|pause|home|dock|stuck|…|clear`; its battery for Charging or
# Docked: `act NODE battery PERCENT`), and it resumes after an error is cleared
# (scripts/cert/operator_hook.py does the cases' prompts for these).
RVC_STATES = ("RUNNING", "PAUSED", "ERROR", "SEEKING_CHARGER", "CHARGING", "DOCKED")
RVC_ERRORS = ("NO_ERROR", "FAILED_TO_FIND_CHARGING_DOCK", "STUCK", "DUST_BIN_MISSING", "DUST_BIN_FULL",
              "WATER_TANK_EMPTY", "WATER_TANK_MISSING", "WATER_TANK_LID_OPEN", "MOP_CLEANING_PAD_MISSING")
MANUAL = {
    ("RVCRUNM", 0x0001): ("RVCRUNM.S.M.CAN_MANUALLY_CONTROLLED",),
    ("RVCOPSTATE", 0x0004): tuple(f"RVCOPSTATE.S.M.ST_{s}" for s in RVC_STATES) + ("RVCOPSTATE.S.M.RESUME_AFTER_ERR",),
    ("RVCOPSTATE", 0x0005): tuple(f"RVCOPSTATE.S.M.ERR_{e}" for e in RVC_ERRORS),
    ("DRLK", 0x0025): ("DRLK.S.M.OperatingModeAttributeWritable",),
    ("DRLK", 0x0023): ("DRLK.S.M.AutoRelockTimeAttributeWritable",),
    ("DRLK", 0x0030): ("DRLK.S.M.WrongCodeEntryLimitAttributeWritable",),
    ("DRLK", 0x0031): ("DRLK.S.M.UserCodedTemporaryDisableTimeAttributeWritable",),
    ("DRLK", 0x0033): ("DRLK.S.M.RequirePINForRemoteOperationAttributeWritable",),
}
DESCRIPTOR, DEVICE_TYPE_LIST, CLIENT_LIST = 0x001D, 0x0000, 0x0002
# Clusters every endpoint may carry (Identify, Groups, Descriptor, Binding, labels): not what
# an application endpoint is about.
INFRASTRUCTURE = {0x0003, 0x0004, 0x001D, 0x001E, 0x0040, 0x0041}
FEATURE_MAP, ATTRIBUTE_LIST, ACCEPTED, GENERATED = 0xFFFC, 0xFFFB, 0xFFF9, 0xFFF8
RVC_RUN_MODE, SUPPORTED_MODES, IDLE_TAG = 0x0054, 0x0000, 0x4000


def pics_codes(data_model_dir: str) -> dict[int, str]:
    """Cluster id -> picsCode, from the spec's cluster XML files."""
    codes = {}
    for path in glob.glob(os.path.join(data_model_dir, "clusters", "*.xml")):
        root = ET.parse(path).getroot()
        classification = root.find("classification")
        code = classification.get("picsCode") if classification is not None else None
        ids = [root.get("id")] + [c.get("id") for c in root.findall("clusterIds/clusterId")]
        for cid in ids:
            if cid and code:
                codes.setdefault(int(cid, 16), code)
    return codes


class CertPics(MatterBaseTest):
    @async_test_body
    async def test_pics(self):
        out = self.user_params["out"]
        codes = pics_codes(self.user_params["data_model"])
        read = await self.default_controller.Read(self.dut_node_id, [()])
        pics = {"MCORE.ROLE.COMMISSIONEE": True}
        per_endpoint: dict[int, dict[str, bool]] = {}
        endpoints: dict[str, list[int]] = {}
        unknown = []
        for endpoint, clusters in sorted(read.tlvAttributes.items()):
            for cluster_id, attributes in sorted(clusters.items()):
                code = codes.get(cluster_id)
                if code is None:
                    unknown.append(f"ep{endpoint}/0x{cluster_id:04X}")
                    continue
                endpoints.setdefault(code, []).append(endpoint)
                here = per_endpoint.setdefault(endpoint, {"MCORE.ROLE.COMMISSIONEE": True})
                keys = [f"{code}.S"]
                keys += [f"{code}.S.A{attribute:04x}" for attribute in attributes.get(ATTRIBUTE_LIST, [])]
                keys += [f"{code}.S.C{command:02x}.Rsp" for command in attributes.get(ACCEPTED, [])]
                keys += [f"{code}.S.C{command:02x}.Tx" for command in attributes.get(GENERATED, [])]
                feature_map = attributes.get(FEATURE_MAP, 0)
                keys += [f"{code}.S.F{bit:02x}" for bit in range(32) if feature_map & (1 << bit)]
                keys += [m for a in attributes.get(ATTRIBUTE_LIST, []) for m in MANUAL.get((code, a), ())]
                if cluster_id == DESCRIPTOR:
                    keys += [f"{codes[client]}.C" for client in attributes.get(CLIENT_LIST, []) if client in codes]
                for key in keys:
                    pics[key] = here[key] = True
        # The whole device's, and each endpoint's (what TC_pics_checker compares one endpoint with).
        for path, codes_here in [(out, pics)] + [(f"{out}.ep{e}", p) for e, p in per_endpoint.items()]:
            with open(path, "w") as f:
                f.writelines(f"{key}=1\n" for key in sorted(codes_here))
        with open(out + ".endpoints.json", "w") as f:
            json.dump({"endpoints": endpoints, "unknown": unknown, "pixits": self.pixits(read.tlvAttributes)}, f, indent=1)
        print(f"pics: {len(pics)} codes, {len(endpoints)} clusters with a PICS code; unknown: {unknown}")

    @staticmethod
    def pixits(attributes: dict) -> dict[str, str]:
        """The first application endpoint, its first device type, and the first attribute of
        its first application cluster, as TC-ACE-1.4's PIXIT.ACE.APP* name them; and for each
        cluster the first application endpoint that serves it, as the YAML cases' config names
        it (`Groups.Endpoint`, PIXIT.G.ENDPOINT: TC-ACE-1.6, TC-SC-5.1 on a bridge's light)."""
        endpoints = {}
        for endpoint in sorted(e for e in attributes if e != 0):
            for cluster_id in attributes[endpoint]:
                if cluster_id in ALL_CLUSTERS:
                    endpoints.setdefault(f"{ALL_CLUSTERS[cluster_id].__name__}.Endpoint", str(endpoint))
        return {**endpoints, **CertPics.application(attributes), **CertPics.rvc_run_modes(attributes)}

    @staticmethod
    def rvc_run_modes(attributes: dict) -> dict[str, str]:
        """TC-RVCRUNM-2.2's PIXIT.RVCRUNM.MODE_A and MODE_B: the first two RVC Run Modes without
        the Idle tag in SupportedModes (ModeOptionStruct: 1 Mode, 2 ModeTags of {1: Value})."""
        for endpoint in sorted(attributes):
            modes = attributes[endpoint].get(RVC_RUN_MODE, {}).get(SUPPORTED_MODES) or []
            busy = [m[1] for m in modes if not any(tag.get(1) == IDLE_TAG for tag in m.get(2, []))]
            if len(busy) >= 2:
                return {"PIXIT.RVCRUNM.MODE_A": str(busy[0]), "PIXIT.RVCRUNM.MODE_B": str(busy[1])}
        return {}

    @staticmethod
    def application(attributes: dict) -> dict[str, str]:
        """TC-ACE-1.4's PIXIT.ACE.APP*."""
        for endpoint in sorted(e for e in attributes if e != 0):
            clusters = attributes[endpoint]
            device_types = clusters.get(DESCRIPTOR, {}).get(DEVICE_TYPE_LIST, [])
            for cluster_id in sorted(c for c in clusters if c not in INFRASTRUCTURE and c in ALL_CLUSTERS):
                ids = sorted(a for a in clusters[cluster_id].get(ATTRIBUTE_LIST, []) if a in ALL_ATTRIBUTES.get(cluster_id, {}))
                if device_types and ids:
                    return {
                        "PIXIT.ACE.APPENDPOINT": str(endpoint),
                        "PIXIT.ACE.APPDEVTYPEID": str(device_types[0][0]),
                        "PIXIT.ACE.APPCLUSTER": ALL_CLUSTERS[cluster_id].__name__,
                        "PIXIT.ACE.APPATTRIBUTE": ALL_ATTRIBUTES[cluster_id][ids[0]].__name__,
                    }
        return {}


if __name__ == "__main__":
    default_matter_test_main()
