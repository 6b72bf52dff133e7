"""Wildcard read with the reference controller, for scripts/dm-conformance.sh.

Runs as the checker of scripts/interop/run.sh (--checker): commissions the device like
reference_check.py, reads every attribute of every endpoint in one wildcard read, and writes
what it read to wildcard.json in its --workdir in the shape the data-model validator's log
parser makes of a chip-tool wildcard log (esp-matter-dm-validator, dmv_tool/parsers/
wildcard_logs.py: endpoints, each with clusters keyed "0x%04X", split into attributes,
features, revisions and commands, the global attributes under their names). The steps go to
--report as usual. A node that fails the wildcard read itself (CircuitMatter cannot send a
report split over several messages) is read again cluster by cluster, and the step says so
(wildcardError).
"""

import asyncio
import json
import os

from reference_check import NODE_ID, Check, main

# The wildcard read of a small node takes a second or two.
WILDCARD_TIMEOUT_S = 30
DESCRIPTOR = 0x001D
BASIC_INFORMATION = 0x0028
# Global attributes: where the validator's parser files them, and under which name.
GLOBAL = {
    0xFFFC: ("features", "FeatureMap"),
    0xFFFD: ("revisions", "ClusterRevision"),
    0xFFF8: ("commands", "GeneratedCommandList"),
    0xFFF9: ("commands", "AcceptedCommandList"),
    0xFFFA: ("events", "EventList"),
    0xFFFB: ("attributes", "AttributeList"),
}
# The attributes the validator reads by name (the names chip-tool prints).
NAMED = {
    (DESCRIPTOR, 0x0000): "DeviceTypeList",
    (DESCRIPTOR, 0x0001): "ServerList",
    (DESCRIPTOR, 0x0002): "ClientList",
    (DESCRIPTOR, 0x0003): "PartsList",
    (BASIC_INFORMATION, 0x0000): "DataModelRevision",
    (BASIC_INFORMATION, 0x0015): "SpecificationVersion",
}


def hex_id(value):
    return f"0x{value:04X}"


def plain(value):
    """A TLV value as JSON: structures keep their context tags as keys, bytes become hex."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def attribute_value(cluster, attribute, value):
    """The value as the validator's parser leaves it for the attributes it looks into."""
    if cluster == DESCRIPTOR and attribute == 0x0000:
        return [{"DeviceType": hex_id(entry[0]), "Revision": entry[1]} for entry in value]
    if cluster == DESCRIPTOR and attribute in (0x0001, 0x0002):
        return [{"id": hex_id(entry)} for entry in value]
    if attribute in GLOBAL and isinstance(value, list):
        return [hex_id(entry) for entry in value]
    return plain(value)


def validator_shape(tlv):
    """tlvAttributes (endpoint → cluster → attribute → value) in the parser's JSON shape."""
    endpoints = []
    for endpoint in sorted(tlv):
        clusters = {}
        for cluster in sorted(tlv[endpoint]):
            shaped = {"attributes": {}, "events": {}, "commands": {}, "features": {}, "revisions": {}}
            for attribute in sorted(tlv[endpoint][cluster]):
                value = attribute_value(cluster, attribute, tlv[endpoint][cluster][attribute])
                if attribute in GLOBAL:
                    category, name = GLOBAL[attribute]
                    shaped[category][name] = {name: value}
                else:
                    name = NAMED.get((cluster, attribute), f"Attribute{hex_id(attribute)}")
                    shaped["attributes"][hex_id(attribute)] = {name: value}
            clusters[hex_id(cluster)] = shaped
        endpoints.append({"id": endpoint, "clusters": clusters})
    return {"endpoints": endpoints}


class WildcardRead(Check):
    async def read_per_cluster(self):
        """The same attributes, one cluster at a time (Descriptor first): for a node that
        cannot answer the wildcard read (a report split over several messages)."""
        from chip.clusters.Attribute import AttributePath
        tlv = {}

        async def read(endpoint, cluster):
            response = await self.controller.Read(
                NODE_ID, attributes=[AttributePath(EndpointId=endpoint, ClusterId=cluster)])
            tlv.setdefault(endpoint, {}).update(response.tlvAttributes.get(endpoint, {}))

        await read(0, DESCRIPTOR)
        for endpoint in [0] + list(tlv[0][DESCRIPTOR].get(0x0003, [])):
            if endpoint != 0:
                await read(endpoint, DESCRIPTOR)
            for cluster in tlv[endpoint][DESCRIPTOR].get(0x0001, []):
                if cluster != DESCRIPTOR:
                    await read(endpoint, cluster)
        return tlv

    async def wildcard(self):
        values = {}
        try:
            response = await asyncio.wait_for(self.controller.Read(NODE_ID, attributes=[()]), WILDCARD_TIMEOUT_S)
            tlv = response.tlvAttributes
        except (Exception, asyncio.TimeoutError) as error:
            # Reported in the step (and so by dm-conformance.sh): the node failed the wildcard
            # read itself, its attributes were then read cluster by cluster.
            values["wildcardError"] = f"{type(error).__name__}: {error}"
            tlv = await self.read_per_cluster()
        shaped = validator_shape(tlv)
        path = os.path.join(self.args.workdir, "wildcard.json")
        with open(path, "w") as out:
            json.dump(shaped, out, indent=1)
        values["clustersPerEndpoint"] = {str(e["id"]): len(e["clusters"]) for e in shaped["endpoints"]}
        return bool(shaped["endpoints"]), values

    async def run(self):
        self.start_controller()
        if not await self.commission():
            return
        await self.step("wildcard read", self.wildcard())


if __name__ == "__main__":
    main(WildcardRead, label="wildcard-read")
