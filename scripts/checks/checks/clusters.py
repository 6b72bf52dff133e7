"""Each cluster's steps, written once for every controller: what is sent to a node (a command,
an attribute write, or what a person does at the device) and what must follow.

A Move is data: what is sent and the attribute value that must follow (and any others that
follow with it). `follow(driver, endpoint, move)` sends it through a driver and waits, and the
functions below give each cluster's moves for a node's current state. A checker names its own
steps (its report's vocabulary) and groups moves into them; the moves are the same whichever
controller sends them.

A driver speaks for one controller to one node, in Matter's IDs (cluster, attribute) and the
spec's command and field names; it maps them to its controller's (the reference controller's
Clusters objects, Home Assistant's server's WebSocket commands):

    await driver.read(endpoint, cluster, attribute)             the value (the one it keeps)
    await driver.command(endpoint, cluster, name, fields, timed_ms)
    await driver.write(endpoint, cluster, attribute, value)     the status (0: SUCCESS)
    driver.act(action, value)                                   `matter-sim act` at the device
    await driver.before(endpoint, move)                         ready to see what follows
    await driver.wait_for(endpoint, cluster, attribute, predicate, timeout_s, events)
                                                                (ok, the last value seen)
    driver.within(pace)                                         seconds it gives a pace

Standard library only: both sides' Python environments import it.
"""

import time
from dataclasses import dataclass, field

# Clusters (Matter Application Cluster Specification IDs).
ON_OFF, LEVEL_CONTROL, COLOR_CONTROL, WINDOW_COVERING = 0x0006, 0x0008, 0x0300, 0x0102
BOOLEAN_STATE, SWITCH, OCCUPANCY_SENSING, TEMPERATURE_MEASUREMENT = 0x0045, 0x003B, 0x0406, 0x0402
DOOR_LOCK, THERMOSTAT = 0x0101, 0x0201
FAN_CONTROL, AIR_QUALITY, HEPA_FILTER_MONITORING = 0x0202, 0x005B, 0x0071
RELATIVE_HUMIDITY, ILLUMINANCE, PRESSURE, FLOW = 0x0405, 0x0400, 0x0403, 0x0404
CO2_CONCENTRATION, PM25_CONCENTRATION = 0x040D, 0x042A
SMOKE_CO_ALARM, BOOLEAN_STATE_CONFIGURATION, POWER_SOURCE = 0x005C, 0x0080, 0x002F
BRIDGED_DEVICE_BASIC_INFORMATION = 0x0039
VALVE_CONFIGURATION_AND_CONTROL = 0x0081
RVC_RUN_MODE, RVC_CLEAN_MODE, RVC_OPERATIONAL_STATE = 0x0054, 0x0055, 0x0061
PUMP_CONFIGURATION_AND_CONTROL = 0x0200
FEATURE_MAP = 0xFFFC

NAMES = {ON_OFF: "OnOff", LEVEL_CONTROL: "LevelControl", COLOR_CONTROL: "ColorControl",
         WINDOW_COVERING: "WindowCovering", BOOLEAN_STATE: "BooleanState", SWITCH: "Switch",
         OCCUPANCY_SENSING: "OccupancySensing", TEMPERATURE_MEASUREMENT: "TemperatureMeasurement",
         DOOR_LOCK: "DoorLock", THERMOSTAT: "Thermostat", FAN_CONTROL: "FanControl", AIR_QUALITY: "AirQuality",
         HEPA_FILTER_MONITORING: "HepaFilterMonitoring", RELATIVE_HUMIDITY: "RelativeHumidityMeasurement",
         ILLUMINANCE: "IlluminanceMeasurement", PRESSURE: "PressureMeasurement", FLOW: "FlowMeasurement",
         CO2_CONCENTRATION: "CarbonDioxideConcentrationMeasurement", PM25_CONCENTRATION: "Pm25ConcentrationMeasurement",
         DOOR_LOCK: "DoorLock", THERMOSTAT: "Thermostat", SMOKE_CO_ALARM: "SmokeCoAlarm",
         BOOLEAN_STATE_CONFIGURATION: "BooleanStateConfiguration", POWER_SOURCE: "PowerSource",
         BRIDGED_DEVICE_BASIC_INFORMATION: "BridgedDeviceBasicInformation",
         VALVE_CONFIGURATION_AND_CONTROL: "ValveConfigurationAndControl", RVC_RUN_MODE: "RvcRunMode",
         RVC_CLEAN_MODE: "RvcCleanMode", RVC_OPERATIONAL_STATE: "RvcOperationalState",
         PUMP_CONFIGURATION_AND_CONTROL: "PumpConfigurationAndControl"}

# How soon what follows a move is there (each driver says how long that is for it).
AT_ONCE = "at once"                 # the command sets it
BEHIND_REPORTS = "behind reports"   # at once, but the node's own reports may go first
TRANSITION = "transition"           # over the command's transitionTime
MOVEMENT = "movement"               # a covering travelling
ACT = "act"                         # a person at the device: a report (and events) to see

FLIPPED = "the opposite of its value before"   # a Move's wanted: a toggle


class AtLeast:
    """A wanted value that is a lower bound (a setpoint the deadband pushes)."""

    def __init__(self, bound):
        self.bound = bound

    def __call__(self, value):
        return isinstance(value, (int, float)) and value >= self.bound

    def __repr__(self):
        return f">= {self.bound}"


class Bits:
    """A wanted bitmap: the mask's bits all set (or all clear)."""

    def __init__(self, mask, clear=False):
        self.mask, self.clear = mask, clear

    def __call__(self, value):
        return isinstance(value, int) and (value & self.mask == 0 if self.clear else value & self.mask == self.mask)

    def __repr__(self):
        return f"bits {self.mask:#x} {'clear' if self.clear else 'set'}"


class OneOf:
    """A wanted value among several (a vacuum put on its dock charges, or is full)."""

    def __init__(self, *values):
        self.values = values

    def __call__(self, value):
        return value in self.values

    def __repr__(self):
        return f"one of {list(self.values)}"


@dataclass(frozen=True)
class Move:
    """One thing sent and what must follow. Exactly one of command, write, act is given.

    title: the move as step names say it (after the cluster's name, or "act");
    attribute/wanted: what must follow (wanted: a value, a predicate or FLIPPED);
    also: (name, attribute, wanted, pace) that follow with it (ColorMode, a pushed setpoint,
    a covering's position once it has moved);
    events: the cluster's event IDs an act raises, in order (for a driver that sees events
    beside values; the reference controller's sensors check reads them in its own steps)."""
    title: str
    cluster: int
    attribute: int
    wanted: object
    command: str = None
    fields: dict = field(default_factory=dict)
    timed_ms: int = None
    write: tuple = None
    act: tuple = None
    also: tuple = ()
    events: tuple = ()
    pace: str = AT_ONCE

    def sent(self):
        if self.command:
            return f"{NAMES[self.cluster]} {self.command}" + (f" {self.fields}" if self.fields else "")
        if self.write:
            return f"write {NAMES[self.cluster]} attribute {self.write[0]} = {self.write[1]}"
        return "act " + " ".join(str(v) for v in self.act if v is not None)


def matcher(wanted):
    return wanted if callable(wanted) else (lambda value: value == wanted)


def shown(wanted):
    return repr(wanted) if callable(wanted) else wanted


def plain(value):
    """A value as a report holds it (JSON): numbers, strings and booleans as they are."""
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value if value is None or isinstance(value, (bool, int, float, str)) else str(value)


async def follow(driver, endpoint, move):
    """Sends `move` and waits for what must follow; (ok, values) for a step."""
    wanted = move.wanted
    if wanted is FLIPPED:
        wanted = not await driver.read(endpoint, move.cluster, move.attribute)
    await driver.before(endpoint, move)
    start = time.monotonic()
    status = None
    if move.command:
        await driver.command(endpoint, move.cluster, move.command, move.fields, move.timed_ms)
    elif move.write:
        status = await driver.write(endpoint, move.cluster, *move.write)
    else:
        driver.act(*move.act)
    # The pace's time counts from the sending: a slow answer uses it up too.
    left = max(0.0, start + driver.within(move.pace) - time.monotonic())
    ok, value = await driver.wait_for(endpoint, move.cluster, move.attribute, matcher(wanted), left, move.events)
    values = {"sent": move.sent(), "wanted": shown(wanted), "value": plain(value)}
    if status is not None:
        values["writeStatus"] = status
        ok = ok and status == 0
    for name, attribute, also, pace in move.also:
        also_ok, also_value = await driver.wait_for(endpoint, move.cluster, attribute, matcher(also), driver.within(pace), ())
        values[name] = plain(also_value)
        ok = ok and also_ok
    values["followedMs"] = round((time.monotonic() - start) * 1000)
    return ok, values


async def follow_all(driver, endpoint, moves):
    """Several moves as one step: all must follow; each one's values under its title."""
    ok, seen = True, {}
    for move in moves:
        move_ok, seen[move.title] = await follow(driver, endpoint, move)
        ok = ok and move_ok
    return ok, seen


# --- OnOff ----------------------------------------------------------------------------------

ON = Move("On", ON_OFF, 0x0000, True, command="On")
OFF = Move("Off", ON_OFF, 0x0000, False, command="Off")
TOGGLE = Move("Toggle", ON_OFF, 0x0000, FLIPPED, command="Toggle")


async def on_off(driver, endpoint):
    """On and Off, in the order that changes the value first, then Toggle."""
    is_on = await driver.read(endpoint, ON_OFF, 0x0000)
    return [OFF, ON, TOGGLE] if is_on is True else [ON, OFF, TOGGLE]


# --- LevelControl ---------------------------------------------------------------------------

OPTIONS = {"optionsMask": 0, "optionsOverride": 0}


def to_level(level, command="MoveToLevelWithOnOff", tenths=0, pace=AT_ONCE):
    return Move(command, LEVEL_CONTROL, 0x0000, level, command=command,
                fields={"level": level, "transitionTime": tenths, **OPTIONS}, pace=pace)


async def level_control(driver, endpoint):
    """MoveToLevelWithOnOff to a level other than the current one, at once."""
    level = await driver.read(endpoint, LEVEL_CONTROL, 0x0000)
    return [to_level(100 if level != 100 else 150)]


# transitionTime is in tenths of a second: CurrentLevel arrives at 60 after 1 s.
LEVEL_TRANSITION = to_level(60, "MoveToLevel", tenths=10, pace=TRANSITION)


# --- ColorControl ---------------------------------------------------------------------------

COLOR_MODE = 0x0008


def color_move(command, fields, attribute, wanted, mode, also=(), tenths=0, pace=AT_ONCE):
    return Move(f"{command} (and ColorMode)", COLOR_CONTROL, attribute, wanted, command=command,
                fields={**fields, "transitionTime": tenths, **OPTIONS},
                also=(*also, ("colorMode", COLOR_MODE, mode, BEHIND_REPORTS)), pace=pace)


async def color_control(driver, endpoint):
    """Each colour space the FeatureMap declares (CT, XY, HS): a value other than the current
    one, with ColorMode following (2, 1, 0)."""
    features = await driver.read(endpoint, COLOR_CONTROL, FEATURE_MAP) or 0
    current = lambda attribute: driver.read(endpoint, COLOR_CONTROL, attribute)
    moves = []
    if features & 0x10:
        mireds = 300 if await current(0x0007) != 300 else 350
        moves.append(color_move("MoveToColorTemperature", {"colorTemperatureMireds": mireds}, 0x0007, mireds, 2))
    if features & 0x08:
        x = 20000 if await current(0x0003) != 20000 else 22000
        moves.append(color_move("MoveToColor", {"colorX": x, "colorY": 30000}, 0x0003, x, 1,
                                also=(("y", 0x0004, 30000, AT_ONCE),)))
    if features & 0x01:
        hue = 120 if await current(0x0000) != 120 else 60
        moves.append(color_move("MoveToHueAndSaturation", {"hue": hue, "saturation": 200}, 0x0000, hue, 0,
                                also=(("saturation", 0x0001, 200, AT_ONCE),)))
    return moves


async def color_temperature_transition(driver, endpoint):
    """ColorTemperatureMireds over a 1 s transition, to a value other than the current one."""
    mireds = 350 if await driver.read(endpoint, COLOR_CONTROL, 0x0007) != 350 else 300
    return color_move("MoveToColorTemperature", {"colorTemperatureMireds": mireds}, 0x0007, mireds, 2, tenths=10,
                      pace=TRANSITION)


# --- WindowCovering -------------------------------------------------------------------------

TARGET_LIFT, CURRENT_LIFT = 0x000B, 0x000E   # ...PositionLiftPercent100ths


def covering_move(command, fields, lift):
    """TargetPositionLiftPercent100ths follows at once; the current position arrives after
    the movement."""
    return Move(command, WINDOW_COVERING, TARGET_LIFT, lift, command=command, fields=fields,
                also=(("arrived", CURRENT_LIFT, lift, MOVEMENT),), pace=AT_ONCE)


async def window_covering(driver, endpoint):
    """GoToLiftPercentage, UpOrOpen, DownOrClose; none without position-aware lift (features
    LF and PA_LF: no lift target to follow)."""
    features = await driver.read(endpoint, WINDOW_COVERING, FEATURE_MAP) or 0
    if not (features & 0x1 and features & 0x4):
        return []
    lift = 2500 if await driver.read(endpoint, WINDOW_COVERING, TARGET_LIFT) != 2500 else 7500
    return [covering_move("GoToLiftPercentage", {"liftPercent100thsValue": lift}, lift),
            covering_move("UpOrOpen", {}, 0), covering_move("DownOrClose", {}, 10000)]


# --- Thermostat -----------------------------------------------------------------------------

LOCAL_TEMPERATURE, COOLING_SETPOINT, HEATING_SETPOINT = 0x0000, 0x0011, 0x0012

# From the profile's 20/26 °C: 24 °C is within the 2.5 °C deadband of cooling, pushed to 26.5.
# The room reports on its own every 30 s (LocalTemperature), so the reports of a write or a
# command may wait behind one of those.
THERMOSTAT_MOVES = [
    Move("write OccupiedHeatingSetpoint (deadband pushes cooling)", THERMOSTAT, HEATING_SETPOINT, 2400,
         write=(HEATING_SETPOINT, 2400), also=(("cooling", COOLING_SETPOINT, AtLeast(2650), BEHIND_REPORTS),), pace=BEHIND_REPORTS),
    Move("SetpointRaiseLower", THERMOSTAT, HEATING_SETPOINT, 2300, command="SetpointRaiseLower",
         fields={"mode": 0, "amount": -10}, pace=BEHIND_REPORTS),
]


# --- DoorLock -------------------------------------------------------------------------------

LOCK_STATE, LOCKED, UNLOCKED = 0x0000, 1, 2
LOCK_OPERATION = 2   # the event
UNLOCK_DOOR = Move("UnlockDoor (timed)", DOOR_LOCK, LOCK_STATE, UNLOCKED, command="UnlockDoor", timed_ms=5000)
LOCK_DOOR = Move("LockDoor (timed)", DOOR_LOCK, LOCK_STATE, LOCKED, command="LockDoor", timed_ms=5000)
KEY_UNLOCK = Move("unlock (key): LockOperation event and LockState", DOOR_LOCK, LOCK_STATE, UNLOCKED,
                  act=("unlock", None), events=(LOCK_OPERATION,), pace=ACT)
KEY_LOCK = Move("lock (key): LockOperation event and LockState", DOOR_LOCK, LOCK_STATE, LOCKED, act=("lock", None),
                events=(LOCK_OPERATION,), pace=ACT)
DOOR_LOCK_MOVES = [UNLOCK_DOOR, LOCK_DOOR, KEY_UNLOCK, KEY_LOCK]


# --- FanControl (a fan, a purifier) --------------------------------------------------------

FAN_MODE, PERCENT_SETTING, PERCENT_CURRENT, SPEED_SETTING = 0x0000, 0x0002, 0x0003, 0x0005
HIGH, MEDIUM = 3, 2

# FanMode, PercentSetting and SpeedSetting follow each other (spec 4.4.6): High is 100 %, 40 % is
# Medium; with SpeedMax 10, 40 % is speed 4 and Step down makes it 3. The motor (PercentCurrent)
# gets there at once, or within a second where a profile gives it inertia (fan.acceleration).
FAN_MOVES = [
    Move("write FanMode High (PercentSetting follows, the motor spins up)", FAN_CONTROL, PERCENT_SETTING, 100,
         write=(FAN_MODE, HIGH), also=(("percentCurrent", PERCENT_CURRENT, 100, MOVEMENT),), pace=BEHIND_REPORTS),
    Move("write PercentSetting 40 (FanMode Medium)", FAN_CONTROL, FAN_MODE, MEDIUM, write=(PERCENT_SETTING, 40),
         also=(("speedSetting", SPEED_SETTING, 4, BEHIND_REPORTS),), pace=BEHIND_REPORTS),
    Move("Step down (SpeedSetting 3)", FAN_CONTROL, SPEED_SETTING, 3, command="Step", fields={"direction": 1},
         pace=BEHIND_REPORTS),
    Move("fan off (the remote): FanMode Off, the motor stops", FAN_CONTROL, FAN_MODE, 0, act=("fan", "off"),
         also=(("percentCurrent", PERCENT_CURRENT, 0, MOVEMENT),), pace=ACT),
]


# --- a purifier's filter --------------------------------------------------------------------

RESET_CONDITION = Move("ResetCondition: Condition 100", HEPA_FILTER_MONITORING, 0x0000, 100, command="ResetCondition",
                       pace=BEHIND_REPORTS)


# --- a water valve --------------------------------------------------------------------------

VALVE_CURRENT_STATE, VALVE_CURRENT_LEVEL, VALVE_FAULT = 0x0004, 0x0006, 0x0009
VALVE_OPEN, VALVE_CLOSED, VALVE_FAULT_EVENT, LEAKING = 1, 0, 0x01, 0x04

# Open goes through Transitioning to Open at DefaultOpenLevel (100 %) in half a second; a fault
# at the valve (act) is ValveFault with its event, and clearing it is another.
VALVE_MOVES = [
    Move("Open: CurrentState Open at DefaultOpenLevel", VALVE_CONFIGURATION_AND_CONTROL, VALVE_CURRENT_STATE, VALVE_OPEN,
         command="Open", also=(("currentLevel", VALVE_CURRENT_LEVEL, 100, MOVEMENT),), pace=MOVEMENT),
    Move("Close: CurrentState Closed, level 0", VALVE_CONFIGURATION_AND_CONTROL, VALVE_CURRENT_STATE, VALVE_CLOSED,
         command="Close", also=(("currentLevel", VALVE_CURRENT_LEVEL, 0, MOVEMENT),), pace=MOVEMENT),
    Move("fault leaking: ValveFault event and ValveFault", VALVE_CONFIGURATION_AND_CONTROL, VALVE_FAULT, LEAKING,
         act=("fault", "leaking"), events=(VALVE_FAULT_EVENT,), pace=ACT),
    Move("fault none: ValveFault event and ValveFault", VALVE_CONFIGURATION_AND_CONTROL, VALVE_FAULT, 0,
         act=("fault", "none"), events=(VALVE_FAULT_EVENT,), pace=ACT),
]


# --- a robot vacuum --------------------------------------------------------------------------

CURRENT_MODE, OPERATIONAL_STATE = 0x0001, 0x0004
CLEANING_MODE, DEEP_CLEAN_MODE = 1, 1   # the profile's Run Mode Cleaning and Clean Mode "Deep clean"
RUNNING, PAUSED, ERROR, SEEKING_CHARGER, CHARGING, DOCKED = 1, 2, 3, 0x40, 0x41, 0x42
OPERATIONAL_ERROR_EVENT, OPERATION_COMPLETION_EVENT = 0x00, 0x01

# On its dock: a clean mode (only while idle), a clean run, Pause / Resume, a problem at it
# (Error with its OperationalError event) freed by a person (Paused), GoHome, and put on its
# dock: the run's OperationCompletion, Charging or (full) Docked.
RVC_CLEAN_MODE_MOVES = [
    Move("ChangeToMode Deep clean: CurrentMode", RVC_CLEAN_MODE, CURRENT_MODE, DEEP_CLEAN_MODE, command="ChangeToMode",
         fields={"newMode": DEEP_CLEAN_MODE}, pace=BEHIND_REPORTS)]
RVC_RUN_MODE_MOVES = [
    # A fresh battery first: the Power Source's own step left it at 15 %, where a run is refused (BatteryLow).
    Move("battery 100: BatPercentRemaining (a run needs more than 15 %)", POWER_SOURCE, 0x000C, 200, act=("battery", "100"),
         pace=ACT),
    Move("ChangeToMode Cleaning: CurrentMode", RVC_RUN_MODE, CURRENT_MODE, CLEANING_MODE, command="ChangeToMode",
         fields={"newMode": CLEANING_MODE}, pace=BEHIND_REPORTS)]
RVC_OPERATIONAL_STATE_MOVES = [
    Move("Pause: OperationalState Paused", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE, PAUSED, command="Pause",
         pace=BEHIND_REPORTS),
    Move("Resume: OperationalState Running", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE, RUNNING, command="Resume",
         pace=BEHIND_REPORTS),
    Move("vacuum stuck: OperationalError event and OperationalState Error", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE,
         ERROR, act=("vacuum", "stuck"), events=(OPERATIONAL_ERROR_EVENT,), pace=ACT),
    Move("vacuum clear: OperationalState Paused", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE, PAUSED,
         act=("vacuum", "clear"), pace=ACT),
    Move("GoHome: OperationalState SeekingCharger", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE, SEEKING_CHARGER,
         command="GoHome", pace=BEHIND_REPORTS),
    Move("vacuum dock: OperationCompletion event, Charging or Docked", RVC_OPERATIONAL_STATE, OPERATIONAL_STATE,
         OneOf(CHARGING, DOCKED), act=("vacuum", "dock"), events=(OPERATION_COMPLETION_EVENT,), pace=ACT),
]


# --- a pump ---------------------------------------------------------------------------------

PUMP_STATUS, EFFECTIVE_OPERATION_MODE, EFFECTIVE_CONTROL_MODE, PUMP_SPEED, OPERATION_MODE = 0x0010, 0x0011, 0x0012, 0x0014, 0x0020
DEVICE_FAULT, PUMP_BLOCKED_EVENT = 0x0001, 0x09
NORMAL, MAXIMUM, CONSTANT_SPEED, CONSTANT_PRESSURE = 0, 2, 0, 1

# A jammed impeller first (PumpBlocked, DeviceFault): the pump stops and stays still, so its
# pressure and flow sensors' own steps (SENSOR_ACTS, after these) are not overtaken by its ramp.
# Maximum runs at constant speed; Normal goes back to the profile's ConstantPressure. The fault is
# cleared last of all the node's steps (PUMP_CLEAR, at the end of STEPS).
PUMP_MOVES = [
    Move("pump blocked: PumpBlocked event, DeviceFault, the pump stops", PUMP_CONFIGURATION_AND_CONTROL, PUMP_STATUS,
         Bits(DEVICE_FAULT), act=("pump", "blocked"), events=(PUMP_BLOCKED_EVENT,),
         also=(("speed", PUMP_SPEED, 0, MOVEMENT),), pace=ACT),
    Move("write OperationMode Maximum: effective modes Maximum, ConstantSpeed", PUMP_CONFIGURATION_AND_CONTROL,
         EFFECTIVE_OPERATION_MODE, MAXIMUM, write=(OPERATION_MODE, MAXIMUM),
         also=(("effectiveControlMode", EFFECTIVE_CONTROL_MODE, CONSTANT_SPEED, BEHIND_REPORTS),), pace=BEHIND_REPORTS),
    Move("write OperationMode Normal: effective modes Normal, ConstantPressure", PUMP_CONFIGURATION_AND_CONTROL,
         EFFECTIVE_OPERATION_MODE, NORMAL, write=(OPERATION_MODE, NORMAL),
         also=(("effectiveControlMode", EFFECTIVE_CONTROL_MODE, CONSTANT_PRESSURE, BEHIND_REPORTS),), pace=BEHIND_REPORTS),
]
PUMP_CLEAR = Move("pump clear: DeviceFault cleared", PUMP_CONFIGURATION_AND_CONTROL, PUMP_STATUS, Bits(DEVICE_FAULT, clear=True),
                  act=("pump", "clear"), pace=ACT)


# --- what a person does at a sensor or a switch ---------------------------------------------

SENSOR_ACTS = {
    BOOLEAN_STATE: [  # StateChange (0) with the new StateValue
        Move("open: StateChange event and StateValue", BOOLEAN_STATE, 0x0000, False, act=("open", None),
             events=(0,), pace=ACT),
        Move("close: StateChange event and StateValue", BOOLEAN_STATE, 0x0000, True, act=("close", None),
             events=(0,), pace=ACT)],
    SWITCH: [  # InitialPress, ShortRelease, MultiPressComplete; CurrentPosition back to 0
        Move("press single: InitialPress, ShortRelease, MultiPressComplete", SWITCH, 0x0001, 0,
             act=("press", "single"), events=(1, 3, 6), pace=ACT)],
    OCCUPANCY_SENSING: [
        Move("occupied: OccupancyChanged event and Occupancy", OCCUPANCY_SENSING, 0x0000, 1, act=("occupied", None),
             events=(0,), pace=ACT)],
    TEMPERATURE_MEASUREMENT: [
        Move("temperature 22.75: MeasuredValue", TEMPERATURE_MEASUREMENT, 0x0000, 2275, act=("temperature", "22.75"),
             pace=ACT)],
    RELATIVE_HUMIDITY: [Move("humidity 55.5: MeasuredValue", RELATIVE_HUMIDITY, 0x0000, 5550, act=("humidity", "55.5"), pace=ACT)],
    # 10,000 × log10(300) + 1
    ILLUMINANCE: [Move("light 300 lx: MeasuredValue", ILLUMINANCE, 0x0000, 24772, act=("light", "300"), pace=ACT)],
    PRESSURE: [Move("pressure 99.5 kPa: MeasuredValue", PRESSURE, 0x0000, 995, act=("pressure", "99.5"), pace=ACT)],
    FLOW: [Move("flow 1.5 m3/h: MeasuredValue", FLOW, 0x0000, 15, act=("flow", "1.5"), pace=ACT)],
    CO2_CONCENTRATION: [Move("co2 1500 ppm: MeasuredValue", CO2_CONCENTRATION, 0x0000, 1500, act=("co2", "1500"), pace=ACT)],
    # PM2.5 at 60 µg/m³ is Very Poor air (5), worse than any other reading of the shipped profiles' walks.
    AIR_QUALITY: [Move("pm25 60: AirQuality very poor", AIR_QUALITY, 0x0000, 5, act=("pm25", "60"), pace=ACT)],
    SMOKE_CO_ALARM: [  # ExpressedState (0): SmokeAlarm (1) with the SmokeAlarm event (0); Normal with AllClear (0x0A)
        Move("smoke: SmokeAlarm event and ExpressedState", SMOKE_CO_ALARM, 0x0000, 1, act=("smoke", "critical"),
             events=(0x00,), pace=ACT),
        Move("clear: AllClear event and ExpressedState", SMOKE_CO_ALARM, 0x0000, 0, act=("clear", None),
             events=(0x0A,), pace=ACT)],
    BOOLEAN_STATE_CONFIGURATION: [  # AlarmsActive (3): every enabled mode while wet; AlarmsStateChanged (0)
        Move("leak: AlarmsStateChanged event and AlarmsActive", BOOLEAN_STATE_CONFIGURATION, 0x0003, 3,
             act=("leak", None), events=(0x00,), pace=ACT),
        Move("dry: AlarmsStateChanged event and AlarmsActive", BOOLEAN_STATE_CONFIGURATION, 0x0003, 0,
             act=("dry", None), events=(0x00,), pace=ACT)],
    POWER_SOURCE: [  # BatPercentRemaining (0x0C) in half-percent units
        Move("battery 15: BatPercentRemaining", POWER_SOURCE, 0x000C, 30, act=("battery", "15"), pace=ACT)],
}


async def boolean_state(driver, endpoint):
    """Open and close, in the order that changes the value first (a leak detector starts dry:
    StateValue false)."""
    open_move, close_move = SENSOR_ACTS[BOOLEAN_STATE]
    is_true = await driver.read(endpoint, BOOLEAN_STATE, 0x0000)
    return [close_move, open_move] if is_true is False else [open_move, close_move]


REACHABLE, REACHABLE_CHANGED = 0x0011, 0x03


async def bridged(driver, endpoint):
    """The device behind a bridge's endpoint unplugged, then plugged back in: Reachable with
    ReachableChanged each time."""
    return [Move(f"unplug {endpoint}: ReachableChanged event and Reachable", BRIDGED_DEVICE_BASIC_INFORMATION, REACHABLE,
                 False, act=("unplug", str(endpoint)), events=(REACHABLE_CHANGED,), pace=ACT),
            Move(f"plug {endpoint}: ReachableChanged event and Reachable", BRIDGED_DEVICE_BASIC_INFORMATION, REACHABLE,
                 True, act=("plug", str(endpoint)), events=(REACHABLE_CHANGED,), pace=ACT)]


# --- what a person does at a light, a blind and a thermostat ---------------------------------

BUTTON = Move("button", ON_OFF, 0x0000, FLIPPED, act=("button", None), pace=ACT)
DIM = Move("dim", LEVEL_CONTROL, 0x0000, 127, act=("dim", "50"), pace=ACT)   # 50 % of 254
CORD_CLOSE = Move("cord close", WINDOW_COVERING, TARGET_LIFT, 10000, act=("cord", "close"), pace=ACT)
CORD_OPEN = Move("cord open", WINDOW_COVERING, TARGET_LIFT, 0, act=("cord", "open"), pace=ACT)
DIAL = Move("dial", THERMOSTAT, HEATING_SETPOINT, 2250, act=("dial", "22.5"), pace=ACT)   # heating mode
DEVICE_ACTS = {ON_OFF: [BUTTON], LEVEL_CONTROL: [DIM], WINDOW_COVERING: [CORD_CLOSE, CORD_OPEN], THERMOSTAT: [DIAL]}


# --- a node's steps, cluster by cluster -----------------------------------------------------

def listed(moves):
    """Moves that do not depend on the node's state."""
    async def of(driver, endpoint):
        return list(moves)
    return of


# Each cluster's moves for a node's current state, in the order a node's checks run them.
STEPS = [(ON_OFF, on_off), (PUMP_CONFIGURATION_AND_CONTROL, listed(PUMP_MOVES)),
         (LEVEL_CONTROL, level_control), (COLOR_CONTROL, color_control),
         (WINDOW_COVERING, window_covering),
         *((cluster, boolean_state if cluster == BOOLEAN_STATE else listed(moves)) for cluster, moves in SENSOR_ACTS.items()),
         (DOOR_LOCK, listed(DOOR_LOCK_MOVES)), (THERMOSTAT, listed(THERMOSTAT_MOVES)), (FAN_CONTROL, listed(FAN_MOVES)),
         (HEPA_FILTER_MONITORING, listed([RESET_CONDITION])), (BRIDGED_DEVICE_BASIC_INFORMATION, bridged),
         (VALVE_CONFIGURATION_AND_CONTROL, listed(VALVE_MOVES)),
         (RVC_CLEAN_MODE, listed(RVC_CLEAN_MODE_MOVES)), (RVC_RUN_MODE, listed(RVC_RUN_MODE_MOVES)),
         (RVC_OPERATIONAL_STATE, listed(RVC_OPERATIONAL_STATE_MOVES)),
         (PUMP_CONFIGURATION_AND_CONTROL, listed([PUMP_CLEAR]))]
