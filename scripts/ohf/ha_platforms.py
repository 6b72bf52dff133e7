"""The entity platform Home Assistant gives each Matter device type, and whether the node the
Matter server interviewed lets it: one table, read by ohf_check.py's "entity platform" step.

Home Assistant core's Matter integration (homeassistant/components/matter/, its
DISCOVERY_SCHEMAS and discovery.py) makes an endpoint's main entity when the endpoint has the
device type and every required attribute, and, unless the schema allows None
(`allow_none_value`), none of them is null. The server does not name platforms itself; this
table carries that rule per device type: (platform, required (cluster, attribute) IDs,
allow_none). A platform of None: HA makes no entity of its own for the device type (a node's
root, a bridge, a client-only switch; a battery or an electrical sensor is a sensor of its
device). A required entry that is a tuple of pairs is met by any one of them (a CO-only alarm
has COState, not SmokeState). Real devices' dumps (clone-roundtrip.sh --real) bring the
utility device types of their root endpoints (OTA Requestor, Electrical Sensor, …).

Standard library only.
"""

ON_OFF = ((0x0006, 0x0000),)
BOOLEAN_STATE = ((0x0045, 0x0000),)


def measured(cluster):
    return ((cluster, 0x0000),)


# device type ID: (name, platform, required attributes, allow_none)
PLATFORMS = {
    0x0016: ("RootNode", None, (), False),
    0x0011: ("PowerSource", None, (), False),
    0x0012: ("OtaRequestor", None, (), False),
    0x0014: ("OtaProvider", None, (), False),
    0x0510: ("ElectricalSensor", None, (), False),
    0x050D: ("DeviceEnergyManagement", None, (), False),
    0x000E: ("Aggregator", None, (), False),
    0x0013: ("BridgedNode", None, (), False),
    0x0103: ("OnOffLightSwitch", None, (), False),      # client clusters: it sends, HA shows nothing
    0x0104: ("DimmerSwitch", None, (), False),
    0x0100: ("OnOffLight", "light", ON_OFF, False),
    0x0101: ("DimmableLight", "light", ON_OFF, False),
    0x010C: ("ColorTemperatureLight", "light", ON_OFF, False),
    0x010D: ("ExtendedColorLight", "light", ON_OFF, False),
    0x010B: ("DimmablePlugInUnit", "light", ON_OFF, False),
    0x010A: ("OnOffPlugInUnit", "switch", ON_OFF, False),
    0x0022: ("Speaker", "switch", ON_OFF, False),         # its mute toggle
    0x0303: ("Pump", "switch", ON_OFF, False),            # its power toggle
    0x0202: ("WindowCovering", "cover", ((0x0102, 0x000A),), False),   # OperationalStatus
    0x0015: ("ContactSensor", "binary_sensor", BOOLEAN_STATE, False),
    0x0043: ("WaterLeakDetector", "binary_sensor", BOOLEAN_STATE, False),
    0x0107: ("OccupancySensor", "binary_sensor", measured(0x0406), False),
    0x0076: ("SmokeCoAlarm", "binary_sensor", (((0x005C, 0x0001), (0x005C, 0x0002)),), False),   # SmokeState or COState
    0x0302: ("TemperatureSensor", "sensor", measured(0x0402), False),
    0x0307: ("HumiditySensor", "sensor", measured(0x0405), False),
    0x0106: ("LightSensor", "sensor", measured(0x0400), False),
    0x0305: ("PressureSensor", "sensor", measured(0x0403), False),
    0x0306: ("FlowSensor", "sensor", measured(0x0404), False),
    0x002C: ("AirQualitySensor", "sensor", measured(0x005B), False),
    0x000F: ("GenericSwitch", "event", ((0x003B, 0x0001),), False),          # CurrentPosition
    0x000A: ("DoorLock", "lock", ((0x0101, 0x0000),), False),                # LockState
    0x0301: ("Thermostat", "climate", ((0x0201, 0x0000),), False),           # LocalTemperature
    0x002B: ("Fan", "fan", ((0x0202, 0x0000),), False),                      # FanMode
    0x002D: ("AirPurifier", "fan", ((0x0202, 0x0000),), False),
    # CurrentState and TargetState; TargetState is null at rest (spec 4.6.6), which the valve
    # schema allows (allow_none_value; home-assistant/core#177129 cites it).
    0x0042: ("WaterValve", "valve", ((0x0081, 0x0004), (0x0081, 0x0005)), True),
    # RvcRunMode CurrentMode and RvcOperationalState OperationalState (allow_none_value).
    0x0074: ("RoboticVacuumCleaner", "vacuum", ((0x0054, 0x0001), (0x0061, 0x0004)), True),
}


def platforms(attributes, endpoint, device_types):
    """(platforms, problems) of one endpoint: the platform each of its device types gets from
    the interviewed attributes ("ep/cluster/attribute" keys, as the server keeps them)."""
    found, problems = [], []
    for device_type in device_types:
        entry = PLATFORMS.get(device_type)
        if entry is None:
            problems.append(f"endpoint {endpoint}: device type {device_type:#06x} has no row in ha_platforms.PLATFORMS")
            continue
        name, platform, required, allow_none = entry
        if platform is None:
            continue
        missing, null = [], []
        for requirement in required:
            options = requirement if isinstance(requirement[0], tuple) else (requirement,)
            paths = [f"{endpoint}/{cluster}/{attribute}" for cluster, attribute in options]
            present = [p for p in paths if p in attributes]
            if not present:
                missing.append(" or ".join(paths))
            elif not allow_none and all(attributes[p] is None for p in present):
                null.append(" or ".join(present))
        if missing or null:
            problems.append(f"endpoint {endpoint} {name}: no {platform} entity (" +
                            ", ".join([f"{p} missing" for p in missing] + [f"{p} null" for p in null]) + ")")
        else:
            found.append(f"{endpoint}:{platform}")
    return found, problems
