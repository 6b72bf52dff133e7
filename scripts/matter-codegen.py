#!/usr/bin/env python3
"""Generates HomeAPI's typed traits, their events and device types from the data model.

    scripts/matter-codegen.py            rewrite Sources/HomeAPI/Generated/
    scripts/matter-codegen.py --check    exit 1 (naming the files) when they differ from the model

Also writes Sources/MatterTLV/Generated/ (the TLV control octet's codes, from the model's
`tlv`, which the import reads from the SDK's chip.tlv), and Sources/MatterModel/Generated/: for EVERY cluster of the model a namespace
`Clusters.<Name>` with its ID and its attribute, command, event and feature constants, its
enums and bitmaps, plus the global attributes (`Clusters.Global.Attribute`) and the device
type IDs (`DeviceTypes`). No other Swift file writes a data-model ID as a literal.

Reads Sources/MatterModel/Resources/matter-model.json, the same file the device and the
profile validator read, and writes for each cluster in TRAITS a `Matter.<Name>Trait` (its
attributes typed from the model, the Discovery field table, the cluster's bitmaps and
enums as typealiases of the ID layer's `Clusters.<Name>` types, and one `Event` type per
event with its payload), for each device type in
DEVICE_TYPES a `<Name>DeviceType`, and Registry.swift, which lists them for the engine and
adds the `matterTraits` accessors. Names follow the Google Home APIs' Swift reference:
`Matter.BooleanStateTrait.StateChangeEvent`, `ContactSensorDeviceType`, `stateValue`.

Every HomeAPI trait is generated; what a trait adds by hand goes in
Sources/HomeAPI/Traits/<Name>Trait+<what>.swift (WindowCovering's unlabelled
goToLiftPercentage). Adding a cluster: its overlay rows (scripts/model-overlay.json, then scripts/model-import.py), its name below, and (on the
device side) a server file in Sources/MatterDevice/Clusters/ for what differs from the model.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "Sources/MatterModel/Resources/matter-model.json")
OUT = os.path.join(ROOT, "Sources/HomeAPI/Generated")
# The ID layer every side uses: `Clusters.<Name>` per cluster, `DeviceTypes`.
MODEL_OUT = os.path.join(ROOT, "Sources/MatterModel/Generated")
# The device side's typed command handlers: `<Name>Handler` per cluster with commands.
DEVICE_OUT = os.path.join(ROOT, "Sources/MatterDevice/Generated")
# The TLV control octet's codes (the model's `tlv`, from the SDK's chip.tlv).
TLV_OUT = os.path.join(ROOT, "Sources/MatterTLV/Generated")

# Clusters whose traits are generated (hand-written additions go in Traits/<Name>Trait+*.swift).
# Clusters of the root endpoint that are neither automatable nor event sources (Discovery
# leaves them out; the engine reads them on endpoint 0).
ROOT_TRAITS = {"BasicInformation"}
TRAITS = ["OnOff", "LevelControl", "WindowCovering", "BasicInformation", "BooleanState", "Switch", "OccupancySensing", "TemperatureMeasurement", "DoorLock", "Thermostat", "ColorControl"]
TRAITS += ["FanControl", "RelativeHumidityMeasurement", "IlluminanceMeasurement", "PressureMeasurement", "FlowMeasurement", "AirQuality",
           "CarbonDioxideConcentrationMeasurement", "Pm25ConcentrationMeasurement", "Pm10ConcentrationMeasurement",
           "TotalVolatileOrganicCompoundsConcentrationMeasurement", "HepaFilterMonitoring", "ActivatedCarbonFilterMonitoring"]
# Issue #40, part B: smoke/CO alarms, leak detectors and the battery of battery devices.
TRAITS += ["SmokeCoAlarm", "BooleanStateConfiguration", "PowerSource", "BridgedDeviceBasicInformation"]
# Issue #38's closing cluster, added after the generated layer: the water valve.
TRAITS += ["ValveConfigurationAndControl"]
# Issue #40's last device types: the robot vacuum and the pump.
TRAITS += ["RvcRunMode", "RvcCleanMode", "RvcOperationalState", "PumpConfigurationAndControl"]
# Device types generated; `matterTraits` offers every generated trait.
DEVICE_TYPES = {
    "ContactSensor": "A Contact Sensor",
    "GenericSwitch": "A Generic Switch",
    "OccupancySensor": "An Occupancy Sensor",
    "TemperatureSensor": "A Temperature Sensor",
    "DoorLock": "A Door Lock",
    "Thermostat": "A Thermostat",
    "ColorTemperatureLight": "A Color Temperature Light",
    "ExtendedColorLight": "An Extended Color Light",
    "Fan": "A Fan",
    "AirPurifier": "An Air Purifier",
    "AirQualitySensor": "An Air Quality Sensor",
    "HumiditySensor": "A Humidity Sensor",
    "LightSensor": "A Light Sensor",
    "PressureSensor": "A Pressure Sensor",
    "FlowSensor": "A Flow Sensor",
}
DEVICE_TYPES.update({"SmokeCoAlarm": "A Smoke CO Alarm", "WaterLeakDetector": "A Water Leak Detector",
                     "OnOffLightSwitch": "An On/Off Light Switch", "DimmerSwitch": "A Dimmer Switch",
                     "Aggregator": "An Aggregator", "BridgedNode": "A Bridged Node"})
DEVICE_TYPES["WaterValve"] = "A Water Valve"
DEVICE_TYPES.update({"RoboticVacuumCleaner": "A Robotic Vacuum Cleaner", "Pump": "A Pump"})
# Issue #40, what was left: a plug-in dimmer and a speaker (On/Off as mute, Level Control as volume).
DEVICE_TYPES.update({"DimmablePlugInUnit": "A Dimmable Plug-In Unit", "Speaker": "A Speaker"})

HEADER = "// Generated by scripts/matter-codegen.py from matter-model.json: do not edit.\n"

UNSIGNED = {"uint8": "UInt8", "uint16": "UInt16", "uint24": "UInt32", "uint32": "UInt32", "uint64": "UInt64",
            "enum8": "UInt8", "enum16": "UInt16", "map8": "UInt8", "map16": "UInt16", "map32": "UInt32",
            "percent": "UInt8", "percent100ths": "UInt16", "epoch-s": "UInt32", "elapsed-s": "UInt32",
            "vendor-id": "UInt16", "status": "UInt8", "fabric-idx": "UInt8", "node-id": "UInt64"}
SIGNED = {"int8": "Int8", "int16": "Int16", "int32": "Int32", "int64": "Int64", "temperature": "Int16"}


def camel(name):
    """Lower camel case the SDK's way: a leading acronym is lowered whole (PIROccupied… →
    pirOccupied…, PIR → pir), else the first letter only."""
    upper = 0
    while upper < len(name) and name[upper].isupper():
        upper += 1
    if upper == len(name):
        return name.lower()
    if upper > 1:
        return name[:upper - 1].lower() + name[upper - 1:]
    return name[:1].lower() + name[1:]


def hex_id(value, width):
    return "0x" + format(value, "0%dX" % width)


def number(text):
    return int(text, 16) if isinstance(text, str) else int(text)


class Cluster:
    def __init__(self, row):
        self.row = row
        self.name = row["name"]
        self.id = number(row["id"])
        self.enums = {e["name"]: e for e in row.get("enums", [])}
        self.bitmaps = {b["name"]: b for b in row.get("bitmaps", [])}
        # Structs whose every field is typed here: generated, and usable in commands.
        self.structs = {}
        for st in row.get("structs", []):
            if all(self.swift_type(f["type"]) is not None or f["type"] == "octstr" for f in st["fields"]):
                self.structs[st["name"]] = st

    def swift_type(self, model_type):
        """(Swift type, how to read it from an accessor object `src` by tag/ID `key`), or None."""
        if model_type == "bool":
            return "Bool", "{src}.bool({key})"
        if model_type == "string":
            return "String", "{src}.string({key})"
        if model_type == "single":
            return "Float", "{src}.float({key})"
        if model_type in UNSIGNED:
            t = UNSIGNED[model_type]
            return t, "{src}.uint({key}, as: %s.self)" % t
        if model_type in SIGNED:
            t = SIGNED[model_type]
            return t, "{src}.int({key}, as: %s.self)" % t
        if model_type in self.enums:
            raw = UNSIGNED[self.enums[model_type]["type"]]
            return model_type, "{src}.uint({key}, as: %s.self).flatMap(%s.init(rawValue:))" % (raw, model_type)
        if model_type in self.bitmaps:
            raw = UNSIGNED[self.bitmaps[model_type]["type"]]
            return model_type, "{src}.uint({key}, as: %s.self).map(%s.init(rawValue:))" % (raw, model_type)
        return None

    def response_type(self, model_type):
        """(Swift type, read from a field reader `{src}` by tag `{key}`) of a response
        command's field or a struct's member, or None: scalars, octets, structs, lists of structs."""
        if model_type == "octstr":
            return "Data", "{src}.bytes({key})"
        if model_type in self.structs:
            return model_type, "{src}.value({key}).flatMap(%s.init(reading:))" % model_type
        if model_type.startswith("list[") and model_type[5:-1] in self.structs:
            inner = model_type[5:-1]
            return "[%s]" % inner, "{src}.list({key})?.compactMap(%s.init(reading:))" % inner
        return self.swift_type(model_type)

    def field_type(self, model_type):
        """(Swift type, TLV encoding of a value `{v}`, AutomationValue of it or None) of a
        command field, or None when the field cannot be passed (structs, lists)."""
        if model_type == "octstr":
            return "Data", ".bytes([UInt8]({v}))", None
        if model_type == "string":
            return "String", ".utf8({v})", ".string({v})"
        if model_type in self.structs:
            return model_type, "{v}.tlv", None
        typed = self.swift_type(model_type)
        if typed is None:
            return None
        t = typed[0]
        if t == "Bool":
            return t, ".bool({v})", ".bool({v})"
        if t == "Float":
            return t, ".float({v})", None
        if model_type in self.enums or model_type in self.bitmaps:
            return t, ".unsigned(UInt64({v}.rawValue))", ".uint(UInt64({v}.rawValue))"
        if t.startswith("Int"):
            return t, ".signed(Int64({v}))", ".int(Int64({v}))"
        return t, ".unsigned(UInt64({v}))", ".uint(UInt64({v}))"


def commands_of(c):
    """The cluster's request commands a trait can send: answered with a status (not a
    response command), every field passable. Returns (generated, skipped names)."""
    generated, skipped = [], []
    responses = {cmd["name"]: cmd for cmd in c.row.get("commands", []) if cmd.get("direction") == "response"}
    for cmd in c.row.get("commands", []):
        if cmd.get("direction") == "response":
            continue
        fields = []
        for f in cmd.get("fields", []):
            typed = c.field_type(f["type"])
            if typed is None:
                break
            nullable = "X" in f.get("quality", "")
            optional = not f["conformance"].startswith("M")
            fields.append((f, typed, nullable, optional))
        answer = cmd.get("response", "Y")
        response = responses.get(answer) if answer != "Y" else None
        readable = response is not None and all(c.response_type(f["type"]) is not None for f in response.get("fields", []))
        if (answer != "Y" and not readable) or len(fields) != len(cmd.get("fields", [])):
            skipped.append(cmd["name"])
            continue
        generated.append((cmd, fields, response))
    return generated, skipped


def command_members(c, trait):
    """The trait's command methods (instance) and descriptors with automation actions."""
    generated, skipped = commands_of(c)
    methods, descriptors = [], []
    for cmd, fields, response in generated:
        name = cmd["name"]
        method = camel(name)
        cid = hex_id(number(cmd["id"]), 2)
        params, encode = [], []
        for f, (t, enc, _), nullable, optional in fields:
            p = camel(f["name"])
            tag = f["id"]
            if nullable or optional:
                params.append("%s: %s? = nil" % (p, t))
            elif f["type"] in c.bitmaps and f.get("default") == 0:
                params.append("%s: %s = []" % (p, t))
            else:
                params.append("%s: %s" % (p, t))
            if nullable and not optional:
                encode.append("fields.append(.context(%d, %s.map { %s } ?? .null))" % (tag, p, enc.format(v="$0")))
            elif optional:
                encode.append("if let %s { fields.append(.context(%d, %s)) }" % (p, tag, enc.format(v=p)))
            else:
                encode.append("fields.append(.context(%d, %s))" % (tag, enc.format(v=p)))
        m = ["        /// %s (%s)%s%s.\n" % (name, cid, ", a Timed Invoke" if "T" in cmd.get("access", "").split() else "",
                                          ", answered with %s" % response["name"] if response else "")]
        returns = " -> %sCommand.Response" % name if response else ""
        m.append("        public func %s(%s) async throws(HomeError)%s {\n" % (method, ", ".join(params), returns))
        call = "try await context.invoke(%s, fields)" % cid if encode else "try await context.invoke(%s)" % cid
        if encode:
            m.append("            var fields: [TLVElement] = []\n")
            m.extend("            %s\n" % e for e in encode)
        if response:
            m.append("            return %sCommand.Response(EventFieldReader(%s))\n" % (name, call))
        else:
            m.append("            %s\n" % call)
        m.append("        }\n")
        methods.append("".join(m))
        # Descriptor and automation action (fields an automation can hold: no octets).
        d = ["    public enum %sCommand: CommandDescriptor {\n" % name]
        if fields:
            d.append("        public enum CommandRequestFields: UInt32, Field {\n")
            for f, _, _, _ in fields:
                d.append("            case %s = %d\n" % (camel(f["name"]), f["id"]))
            d.append("            public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .command(commandID))\n")
            d.append("        }\n")
        else:
            d.append("        public typealias CommandRequestFields = NoFields<%sCommand>\n" % name)
        d.append("        public static let traitIdentifier = identifier\n")
        d.append("        public static let commandID: UInt32 = %s\n" % cid)
        d.append("        public static let name = \"%s\"\n" % name)
        if response:
            # The response command's fields, each nil when the device left it out.
            rfields = [(f, c.response_type(f["type"])) for f in response.get("fields", [])]
            d.append("\n        /// %s (%s): what the device answered.\n" % (response["name"], hex_id(number(response["id"]), 2)))
            d.append("        public struct Response: Sendable, Hashable {\n")
            for f, (t, _) in rfields:
                d.append("            public let %s: %s?\n" % (camel(f["name"]), t))
            d.append("\n            init(_ fields: EventFieldReader) {\n")
            for f, (_, read) in rfields:
                d.append("                %s = %s\n" % (camel(f["name"]), read.format(src="fields", key=f["id"])))
            d.append("            }\n")
            d.append("        }\n")
        d.append("    }\n")
        storable = [(f, typed, nullable, optional) for f, typed, nullable, optional in fields if typed[2] is not None]
        if all(typed[2] is not None or optional for f, typed, nullable, optional in fields):
            args, values = [], []
            for f, (t, _, auto), nullable, optional in storable:
                p = camel(f["name"])
                if nullable or optional:
                    args.append("%s: %s? = nil" % (p, t))
                    if nullable and not optional:
                        values.append("(.%s, %s.map { %s } ?? .null)" % (p, p, auto.format(v="$0")))
                    else:
                        values.append("%s.map { (.%s, %s) }" % (p, p, auto.format(v="$0")))
                elif t.startswith("UInt") and f["type"] not in c.enums and f["type"] not in c.bitmaps:
                    args.append("%s: some BinaryInteger" % p)  # checked against the constraint, not truncated
                    values.append("(.%s, .integer(%s))" % (p, p))
                else:
                    args.append("%s: %s" % (p, t))
                    values.append("(.%s, %s)" % (p, auto.format(v=p)))
            d.append("\n    /// %s as an automation's action.\n" % name)
            d.append("    public static func %s(%s) -> CommandAction {\n" % (method, ", ".join(args)))
            if values:
                optional_values = [v for v in values if ".map { (." in v]
                fixed = [v for v in values if v not in optional_values]
                d.append("        let fields: [(%sCommand.CommandRequestFields, AutomationValue)?] = [%s]\n" % (
                    name, ", ".join(fixed + optional_values)))
                d.append("        return CommandAction(%sCommand.self, clusterID: clusterID, fields: fields.compactMap { $0 })\n" % name)
            else:
                d.append("        CommandAction(%sCommand.self, clusterID: clusterID)\n" % name)
            d.append("    }\n")
        descriptors.append("".join(d))
    return methods, descriptors, [cmd["name"] for cmd, _, _ in generated], skipped


def trait_file(cluster):
    c = cluster
    trait = c.name + "Trait"
    out = [HEADER, "import Foundation\nimport MatterController\nimport MatterModel\nimport MatterTLV\n\n"]
    out.append("extension Matter {\n")
    out.append("    /// The %s cluster (%s), revision %d.\n" % (c.name, hex_id(c.id, 4), c.row["revision"]))
    out.append("    @dynamicMemberLookup\n")
    out.append("    public struct %s: Trait, ClusterTrait {\n" % trait)
    out.append("        public static let identifier = traitIdentifier(cluster: %s)\n" % hex_id(c.id, 4))
    out.append("        static let clusterID = ClusterID(%s)\n\n" % hex_id(c.id, 4))
    attributes = []
    skipped = []
    for a in c.row["attributes"]:
        typed = c.swift_type(a["type"])
        if typed is None:
            skipped.append(a["name"])
            continue
        attributes.append((a, typed))
    out.append("        public struct Attributes: Sendable, Hashable {\n")
    for a, (t, _) in attributes:
        out.append("            public var %s: %s?\n" % (camel(a["name"]), t))
    out.append("        }\n\n")
    if skipped:
        out.append("        // Not typed here (structs and lists): %s.\n\n" % ", ".join(skipped))
    out.append("        let context: TraitContext\n")
    out.append("        public let attributes: Attributes\n")
    out.append("        public var metadata: TraitMetadata { context.metadata }\n\n")
    out.append("        public subscript<Value>(dynamicMember keyPath: KeyPath<Attributes, Value>) -> Value { attributes[keyPath: keyPath] }\n\n")
    out.append("        init(context: TraitContext) {\n")
    out.append("            self.context = context\n")
    out.append("            attributes = Attributes(\n")
    inits = ["                %s: %s" % (camel(a["name"]), read.format(src="context", key=hex_id(number(a["id"]), 4)))
             for a, (_, read) in attributes]
    out.append(",\n".join(inits) + ")\n")
    out.append("        }\n")
    methods, descriptors, command_names, skipped_commands = command_members(c, trait)
    requests = [cmd for cmd in c.row.get("commands", []) if cmd.get("direction") != "response"]
    if requests:
        out.append("\n")
    for cmd in requests:
        out.append("        /// Whether the device lists %s in its AcceptedCommandList.\n" % cmd["name"])
        out.append("        public var supports%sCommand: Bool { context.accepts(%s) }\n" % (cmd["name"], hex_id(number(cmd["id"]), 2)))
    for m in methods:
        out.append("\n" + m)
    # Writable attributes: a setter each (a Write Interaction; the device checks the value).
    for a, _ in attributes:
        access = a.get("access", "").split()
        passed = c.field_type(a["type"])
        if not access or "W" not in access[0] or passed is None:
            continue
        t, enc, _ = passed
        p = camel(a["name"])
        aid = hex_id(number(a["id"]), 4)
        setter = "set" + p[:1].upper() + p[1:]
        out.append("\n        /// Writes %s.\n" % a["name"])
        if "X" in a.get("quality", ""):
            out.append("        public func %s(_ value: %s?) async throws(HomeError) {\n" % (setter, t))
            out.append("            try await context.write(%s, value.map { %s } ?? .null)\n" % (aid, enc.format(v="$0")))
        else:
            out.append("        public func %s(_ value: %s) async throws(HomeError) {\n" % (setter, t))
            out.append("            try await context.write(%s, %s)\n" % (aid, enc.format(v="value")))
        out.append("        }\n")
    if skipped_commands:
        out.append("\n        // Not generated (a response command, or a struct or list field): %s.\n" % ", ".join(skipped_commands))
    for st in c.structs.values():
        out.append("\n" + struct_type(c, st))
    # The cluster's enums and bitmaps are MatterModel's (`Clusters.<Name>.<Type>`), one
    # definition for both sides: the SDK spells each type and case as the model does.
    types = sorted(list(c.bitmaps) + list(c.enums))
    if types:
        out.append("\n")
    for t in types:
        sdk_spelling(c, t)
        out.append("        public typealias %s = Clusters.%s.%s\n" % (t, c.name, t))
    for ev in ([] if c.name in ROOT_TRAITS else c.row.get("events", [])):
        out.append("\n" + event_type(c, trait, ev))
    out.append("    }\n}\n")
    if c.name in ROOT_TRAITS:
        return "".join(out)
    out.append("\n")
    # Discovery and automations.
    out.append("extension Matter.%s: AutomatableTrait {\n" % trait)
    out.append("    public enum Attribute: UInt32, Field, CaseIterable {\n")
    for a, _ in attributes:
        out.append("        case %s = %s\n" % (camel(a["name"]), hex_id(number(a["id"]), 4)))
    out.append("        public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .attribute)\n")
    out.append("    }\n\n")
    out.append("    static let commandTypes: [any CommandDescriptor.Type] = [%s]\n" % ", ".join(
        "%sCommand.self" % n for n in command_names))
    events = c.row.get("events", [])
    out.append("    static let eventTypes: [any MatterEvent.Type] = [%s]\n\n" % ", ".join(
        "%sEvent.self" % e["name"] for e in events))
    out.append("    static func attributeID(_ keyPath: PartialKeyPath<Attributes>) -> UInt32? {\n")
    out.append("        let table: [PartialKeyPath<Attributes>: Attribute] = [\n")
    for a, _ in attributes:
        out.append("            \\.%s: .%s,\n" % (camel(a["name"]), camel(a["name"])))
    out.append("        ]\n")
    out.append("        return table[keyPath]?.rawValue\n")
    out.append("    }\n")
    for d in descriptors:
        out.append("\n" + d)
    out.append("}\n")
    return "".join(out)


def sdk_spelling(c, type_name):
    """Stops when the Google Home SDK would spell one of the type's cases otherwise than the
    ID layer does (lower camel case the SDK's way, `_` before a leading digit): a typealias
    would then rename the SDK's case, and the type must be generated for HomeAPI on its own."""
    rows = c.enums[type_name]["values"] if type_name in c.enums else c.bitmaps[type_name]["fields"]
    for _, name in rows:
        sdk = "_" * camel(name)[:1].isdigit() + camel(name)
        if sdk != ident(name).strip("`"):
            sys.exit("matter-codegen: %s.%s.%s: the SDK spells it %s, the ID layer %s" % (c.name, type_name, name, sdk, ident(name)))


def struct_type(c, st):
    """A cluster struct: its members (optional where the model lets them be absent or null),
    its TLV for a command field, and a reading of it from a response."""
    i = "        "
    members = []
    for f in st["fields"]:
        passed = c.field_type(f["type"])
        read = c.response_type(f["type"])[1]
        optional = "X" in f.get("quality", "") or not f["conformance"].startswith("M")
        members.append((f, camel(f["name"]), passed[0], passed[1], read, optional))
    out = [i + "public struct %s: Sendable, Hashable {\n" % st["name"]]
    for f, p, t, _, _, optional in members:
        out.append(i + "    public var %s: %s%s\n" % (p, t, "?" if optional else ""))
    out.append("\n" + i + "    public init(%s) {\n" % ", ".join(
        "%s: %s%s" % (p, t, "? = nil" if optional else "") for f, p, t, _, _, optional in members))
    for f, p, _, _, _, _ in members:
        out.append(i + "        self.%s = %s\n" % (p, p))
    out.append(i + "    }\n\n")
    out.append(i + "    /// As a command field.\n")
    out.append(i + "    var tlv: TLVValue {\n")
    out.append(i + "        var fields: [TLVElement] = []\n")
    for f, p, _, enc, _, optional in members:
        if "X" in f.get("quality", ""):
            out.append(i + "        fields.append(.context(%d, %s.map { %s } ?? .null))\n" % (f["id"], p, enc.format(v="$0")))
        elif optional:
            out.append(i + "        if let %s { fields.append(.context(%d, %s)) }\n" % (p, f["id"], enc.format(v=p)))
        else:
            out.append(i + "        fields.append(.context(%d, %s))\n" % (f["id"], enc.format(v=p)))
    out.append(i + "        return .structure(fields)\n")
    out.append(i + "    }\n\n")
    out.append(i + "    /// From a response or a report; nil when a mandatory member is missing.\n")
    out.append(i + "    init?(reading value: TLVValue) {\n")
    out.append(i + "        let fields = EventFieldReader(value)\n")
    required = [(p, read.format(src="fields", key=f["id"])) for f, p, _, _, read, optional in members if not optional]
    if required:
        out.append(i + "        guard %s else { return nil }\n" % ", ".join("let %s = %s" % (p, r) for p, r in required))
    for f, p, _, _, read, optional in members:
        out.append(i + "        self.%s = %s\n" % (p, p if not optional else read.format(src="fields", key=f["id"])))
    out.append(i + "    }\n")
    out.append(i + "}\n")
    return "".join(out)


def event_type(c, trait, ev):
    name = ev["name"] + "Event"
    fields = []
    for f in ev.get("fields", []):
        typed = c.swift_type(f["type"])
        if typed is not None:
            fields.append((f, typed))
    i = "        "
    out = [i + "/// %s (%s, %s priority).\n" % (ev["name"], hex_id(number(ev["id"]), 2), ev["priority"])]
    out.append(i + "@dynamicMemberLookup\n")
    out.append(i + "public struct %s: MatterEvent {\n" % name)
    out.append(i + "    public static let traitIdentifier = identifier\n")
    out.append(i + "    public static let eventID: UInt32 = %s\n" % hex_id(number(ev["id"]), 2))
    out.append(i + "    public static let name = \"%s\"\n" % ev["name"])
    out.append(i + "    static let clusterID = %s.clusterID\n\n" % trait)
    if fields:
        out.append(i + "    public enum EventFields: UInt32, Field {\n")
        for f, _ in fields:
            out.append(i + "        case %s = %d\n" % (camel(f["name"]), f["id"]))
    else:
        # No field (AllClear), or none typed here: an enum without cases has no raw value.
        out.append(i + "    public enum EventFields: Field {\n")
        out.append(i + "        public var fieldID: UInt32 { switch self {} }\n")
        out.append(i + "        public var fieldName: String { switch self {} }\n")
    out.append(i + "        public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .event(eventID))\n")
    out.append(i + "    }\n\n")
    out.append(i + "    public struct Payload: Sendable, Hashable {\n")
    for f, (t, _) in fields:
        out.append(i + "        public let %s: %s?\n" % (camel(f["name"]), t))
    out.append(i + "    }\n\n")
    out.append(i + "    public let payload: Payload\n")
    out.append(i + "    let header: EventHeader\n\n")
    out.append(i + "    public subscript<Value>(dynamicMember keyPath: KeyPath<Payload, Value>) -> Value { payload[keyPath: keyPath] }\n\n")
    # Starter parameters: an event starter that fires only on these field values.
    for f, _ in fields:
        passed = c.field_type(f["type"])
        if passed is None or passed[2] is None:
            continue
        p = camel(f["name"])
        out.append(i + "    /// Starts an automation only when %s is `value`.\n" % p)
        out.append(i + "    public static func %s(_ value: %s) -> TypedParameter<Self> {\n" % (p, passed[0]))
        out.append(i + "        TypedParameter(field: AnyField(erasing: EventFields.%s), value: .eventField(tag: %d, name: \"%s\", value: %s))\n"
                   % (p, f["id"], p, passed[2].format(v="value")))
        out.append(i + "    }\n\n")
    out.append(i + "    init(report: EventReport) {\n")
    out.append(i + "        let fields = EventFieldReader(report.data)\n")
    args = ", ".join("%s: %s" % (camel(f["name"]), read.format(src="fields", key=f["id"])) for f, (_, read) in fields)
    out.append(i + "        payload = Payload(%s)\n" % args)
    out.append(i + "        header = EventHeader(report)\n")
    out.append(i + "    }\n")
    out.append(i + "}\n")
    return "".join(out)


def device_types_file(model):
    by_name = {d["name"]: d for d in model["deviceTypes"]}
    out = [HEADER, "import MatterModel\n"]
    for name, article in DEVICE_TYPES.items():
        d = by_name[name]
        did = number(d["id"])
        words = "".join(" " + ch if ch.isupper() and k else ch for k, ch in enumerate(name))
        out.append("\n/// %s (Matter device type %s, revision %d).\n" % (article.replace(article.split(" ", 1)[1], words), hex_id(did, 4), d["revision"]))
        out.append("public struct %sDeviceType: DeviceType, MatterDeviceType {\n" % name)
        out.append("    public static let identifier = \"home.matter.0000.types.%s\"\n" % format(did, "04x"))
        out.append("    static let matterDeviceTypeID: UInt32 = %s\n" % hex_id(did, 4))
        out.append("    let context: DeviceTypeContext\n")
        out.append("    init(context: DeviceTypeContext) { self.context = context }\n")
        out.append("    public var metadata: DeviceTypeMetadata { context.metadata }\n")
        out.append("    public var traits: TraitCollection { context.traits }\n")
        out.append("    public var matterTraits: MatterTraits { MatterTraits(collection: context.traits) }\n")
        out.append("    public var events: any EventController { context.events }\n")
        out.append("}\n")
    return "".join(out)


def registry_file(clusters):
    out = [HEADER, "\n"]
    traits = ["Matter.%sTrait.self" % c.name for c in clusters if c.name not in ROOT_TRAITS]
    roots = ["Matter.%sTrait.self" % c.name for c in clusters if c.name in ROOT_TRAITS]
    out.append("/// The generated traits, for the engine's lists.\n")
    out.append("let generatedTraitTypes: [any AutomatableTrait.Type] = [\n    %s,\n]\n\n" % ", ".join(traits))
    out.append("/// The generated traits of the root endpoint (read on endpoint 0, not automatable).\n")
    out.append("let generatedRootTraitTypes: [any ClusterTrait.Type] = [%s]\n\n" % ", ".join(roots))
    out.append("/// The generated device types.\n")
    out.append("let generatedDeviceTypeTypes: [any MatterDeviceType.Type] = [\n    %s,\n]\n\n" % ", ".join(
        "%sDeviceType.self" % n for n in DEVICE_TYPES))
    out.append("extension MatterTraits {\n")
    for c in clusters:
        out.append("    public var %sTrait: Matter.%sTrait? { collection[Matter.%sTrait.self] }\n" % (camel(c.name), c.name, c.name))
    out.append("}\n")
    return "".join(out)


SWIFT_KEYWORDS = {
    "associatedtype", "as", "break", "case", "catch", "class", "continue", "default", "defer", "deinit", "do",
    "else", "enum", "extension", "fallthrough", "false", "fileprivate", "for", "func", "guard", "if", "import",
    "in", "init", "inout", "internal", "is", "let", "nil", "open", "operator", "private", "protocol", "public",
    "repeat", "rethrows", "return", "self", "Self", "static", "struct", "subscript", "super", "switch", "throw",
    "throws", "true", "try", "typealias", "var", "where", "while", "Any", "Type", "Protocol",
}


def ident(name):
    """A Swift member name for a model name: lower camel case, `_` before a leading digit
    (WiFiBandEnum's 2G4), keywords in backticks (`default`)."""
    text = name.lower() if re.fullmatch(r"[A-Z]+s", name) else camel(name)  # NOCs → nocs
    if text[:1].isdigit():
        return "_" + text
    return "`%s`" % text if text in SWIFT_KEYWORDS else text


def id_table(kind, id_type, rows, width, indent):
    """`public enum <kind> { public static let <name> = <id_type>(0x…) … }`, sorted by ID."""
    pad = " " * indent
    out = [pad + "public enum %s {\n" % kind]
    for row in sorted(rows, key=lambda r: number(r["id"])):
        out.append(pad + "    public static let %s = %s(%s)\n" % (ident(row["name"]), id_type, hex_id(number(row["id"]), width)))
    out.append(pad + "}\n")
    return out


def cluster_ids_file(row):
    """Clusters.<Name>: the cluster's ID, attribute/command/event IDs, feature codes, enums, bitmaps."""
    name = row["name"]
    out = [HEADER, "\nimport Foundation\nimport MatterTLV\n\n", "extension Clusters {\n"]
    out.append("    /// %s (cluster %s, revision %d).\n" % (name, hex_id(number(row["id"]), 4), row["revision"]))
    out.append("    public enum %s {\n" % name)
    out.append("        public static let id = ClusterID(%s)\n" % hex_id(number(row["id"]), 4))
    out.append("        public static let revision: UInt16 = %d\n\n" % row["revision"])
    out += id_table("Attribute", "AttributeID", row.get("attributes", []), 4, 8)
    out += id_table("Command", "CommandID", row.get("commands", []), 2, 8)
    out += id_table("Event", "EventID", row.get("events", []), 2, 8)
    out.append("\n        /// Feature codes as the model and a server's `features` spell them.\n")
    out.append("        public enum Feature {\n")
    for f in sorted(row.get("features", []), key=lambda f: f["bit"]):
        out.append("            public static let %s = \"%s\"\n" % (ident(f["name"]), f["code"]))
    out.append("        }\n")
    for e in sorted(row.get("enums", []), key=lambda e: e["name"]):
        out.append("\n        public enum %s: %s, Sendable, Hashable, CaseIterable, TLVEnum {\n" % (e["name"], UNSIGNED[e["type"]]))
        for value, vname in e["values"]:
            out.append("            case %s = %d\n" % (ident(vname), value))
        out.append("        }\n")
    for b in sorted(row.get("bitmaps", []), key=lambda b: b["name"]):
        raw = UNSIGNED[b["type"]]
        out.append("\n        public struct %s: OptionSet, Sendable, Hashable, TLVBitmap {\n" % b["name"])
        out.append("            public let rawValue: %s\n" % raw)
        out.append("            public init(rawValue: %s) { self.rawValue = rawValue }\n" % raw)
        for bit, fname in b["fields"]:
            if isinstance(bit, str):  # a bit range "2..3": its mask
                low, high = (int(x) for x in bit.split(".."))
                out.append("            public static let %s = Self(rawValue: 0b%s << %d)\n" % (ident(fname), "1" * (high - low + 1), low))
            else:
                out.append("            public static let %s = Self(rawValue: 1 << %d)\n" % (ident(fname), bit))
        out.append("        }\n")
    out += test_event_triggers(row)
    out.append("    }\n}\n")
    out += cluster_types(row)
    return "".join(out)


def test_event_triggers(row):
    """`TestEventTrigger`: the General Diagnostics TestEventTrigger codes of the cluster's
    events (the overlay's `testEventTriggers`): the cluster ID in the top 16 bits, the event in
    the low ones, and where the table says so the same event in the older namespace."""
    table = row.get("testEventTriggers")
    if not table:
        return []
    cluster = number(row["id"]) << 48
    older = number(table["olderNamespace"]) << 32 if "olderNamespace" in table else None
    digits = lambda v: "0x" + "_".join(format(v, "016X")[i:i + 4] for i in range(0, 16, 4))
    out = ["\n        /// Test event triggers (General Diagnostics TestEventTrigger, Core spec 11.12.7.1): what a\n",
           "        /// certification case asks the device to act out.\n",
           "        public enum TestEventTrigger: Sendable, Hashable, CaseIterable {\n"]
    out += ["            case %s\n" % ident(name) for _, name in table["codes"]]
    out.append("\n            /// The codes that ask for it.\n")
    out.append("            public var codes: [UInt64] {\n                switch self {\n")
    for low, name in table["codes"]:
        codes = [cluster | number(low)] + ([older | number(low)] if older is not None else [])
        out.append("                case .%s: [%s]\n" % (ident(name), ", ".join(digits(c) for c in codes)))
    out.append("                }\n            }\n")
    out.append("\n            /// The trigger a code asks for, or nil when the code is none of the cluster's.\n")
    out.append("            public init?(code: UInt64) {\n")
    out.append("                guard let trigger = Self.allCases.first(where: { $0.codes.contains(code) }) else { return nil }\n")
    out.append("                self = trigger\n            }\n        }\n")
    return out


# The Swift type of each model type that is not the cluster's own (enums, bitmaps, structs):
# integers by width (semantic types by their base), octet strings and addresses as Data.
FIELD_TYPES = dict(UNSIGNED)
FIELD_TYPES.update(SIGNED)
FIELD_TYPES.update({
    "bool": "Bool", "string": "String", "octstr": "Data", "ipadr": "Data", "ipv4adr": "Data", "ipv6adr": "Data",
    "ipv6pre": "Data", "hwadr": "Data", "single": "Float", "double": "Double",
    "uint40": "UInt64", "uint48": "UInt64", "uint56": "UInt64", "int24": "Int32", "int40": "Int64", "int48": "Int64", "int56": "Int64",
    "map64": "UInt64", "tag": "UInt8", "namespace": "UInt8", "group-id": "UInt16", "endpoint-no": "UInt16",
    "cluster-id": "UInt32", "attrib-id": "UInt32", "field-id": "UInt32", "event-id": "UInt32", "command-id": "UInt32",
    "action-id": "UInt8", "trans-id": "UInt32", "devtype-id": "UInt32", "data-ver": "UInt32", "entry-idx": "UInt16",
    "fabric-id": "UInt64", "subject-id": "UInt64", "event-no": "UInt64", "epoch-us": "UInt64", "systime-us": "UInt64",
    "systime-ms": "UInt64", "posix-ms": "UInt64", "elapsed-s": "UInt32", "utc": "UInt32", "date": "UInt32",
    "tod": "UInt32", "amperage-mA": "Int64", "voltage-mV": "Int64", "power-mW": "Int64", "energy-mWh": "Int64",
    "money": "Int64", "priority": "UInt8", "status": "UInt8", "percent": "UInt8", "percent100ths": "UInt16",
})
# Names the generated types use unqualified: a cluster type of the same name would shadow them.
SUPPORT_NAMES = {"Data", "String", "Bool", "Float", "Double", "Nullable", "TLVValue", "ClusterFieldReader", "ClusterFieldWriter",
                 "TLVCodable", "ClusterCommand", "ClusterCommandWithResponse", "ClusterEvent", "ClusterID", "CommandID", "EventID", "EventPriority",
                 "Clusters", "Commands", "Events"}


class TypedField:
    """One field of a struct, command or event: its Swift member and how it is read and written."""

    def __init__(self, row, f, owner, kind):
        self.f = f
        self.tag = f["id"]
        self.name = f["name"]
        self.member = ident(f["name"])
        self.base = swift_type_of(row, f["type"], owner)
        self.nullable = "X" in f.get("quality", "").split()
        # A fabric-scoped struct's FabricIndex may be left out: the server fills it in (Core spec 7.13.7).
        self.mandatory = f["conformance"] == "M" and not (kind == "struct" and self.tag == 254)
        # Only a command's fields may be left out for their default (the node's field check agrees).
        self.decode_default = kind == "command"
        if self.mandatory:
            self.swift = self.base + ("?" if self.nullable else "")
            self.read = "nullable" if self.nullable else "mandatory"
            self.write = "nullable" if self.nullable else "mandatory"
        else:
            self.swift = ("Nullable<%s>?" if self.nullable else "%s?") % self.base
            self.read = "optionalNullable" if self.nullable else "optional"
            self.write = "optional"
        self.default_tlv, self.default_swift = self.defaults(row)

    def defaults(self, row):
        """(TLV a missing mandatory field decodes as, the init parameter's default) from the
        model's default, where it is a value of the field's type."""
        if not self.mandatory or "default" not in self.f:
            return None, None
        value, t = self.f["default"], self.f["type"]
        # A nullable field left out reads as null, as servers take it: "no change" or "the
        # default" by their own rules (SetUser's Modify keeps a left-out UserStatus).
        if self.nullable:
            return ".null", "nil"
        if value is None:
            return None, None
        enums = {e["name"]: e for e in row.get("enums", [])}
        bitmaps = {b["name"]: b for b in row.get("bitmaps", [])}
        if isinstance(value, bool):
            return (".bool(%s)" % str(value).lower(), str(value).lower()) if t == "bool" else (None, None)
        if isinstance(value, int):
            if t in enums:
                names = [n for v, n in enums[t]["values"] if v == value]
                return (".unsigned(%d)" % value, ".%s" % ident(names[0])) if names else (None, None)
            if t in bitmaps:
                return ".unsigned(%d)" % value, ("[]" if value == 0 else "%s(rawValue: %d)" % (self.base, value))
            if self.base.startswith("UInt") and value >= 0:
                return ".unsigned(%d)" % value, str(value)
            if self.base.startswith("Int"):
                return ".signed(%d)" % value, str(value)
            return None, None
        if isinstance(value, str) and t == "string":
            literal = json.dumps(value)
            return ".utf8(%s)" % literal, literal
        return None, None

    def parameter(self):
        if not self.mandatory:
            return "%s: %s = nil" % (self.member, self.swift)
        if self.default_swift is not None:
            return "%s: %s = %s" % (self.member, self.swift, self.default_swift)
        return "%s: %s" % (self.member, self.swift)

    def reading(self, label):
        default = ", default: %s" % self.default_tlv if self.default_tlv is not None and self.decode_default else ""
        return "%s = try r.%s(%d, %s%s)" % (self.member, self.read, self.tag, json.dumps(self.name), default)


def swift_type_of(row, model_type, owner):
    if model_type.startswith("list[") and model_type.endswith("]"):
        return "[%s]" % swift_type_of(row, model_type[5:-1], owner)
    local = {e["name"] for e in row.get("enums", [])} | {b["name"] for b in row.get("bitmaps", [])} | \
        {st["name"] for st in row.get("structs", [])}
    if model_type in local:
        return "Clusters.%s.%s" % (row["name"], model_type)
    if model_type in FIELD_TYPES:
        return FIELD_TYPES[model_type]
    sys.exit("matter-codegen: %s.%s: no Swift type for the model type %r" % (row["name"], owner, model_type))


def typed_struct(row, name, kind, fields, protocol, statics, indent, doc):
    """A generated struct (kind: struct, command or event) with its members, memberwise init and
    TLV conversions."""
    i = " " * indent
    typed = [TypedField(row, f, name, kind) for f in fields]
    members = [t.member for t in typed]
    if len(set(members)) != len(members):
        sys.exit("matter-codegen: %s.%s: two fields with one Swift name" % (row["name"], name))
    out = ["\n" + i + "/// %s\n" % doc, i + "public struct %s: %s {\n" % (name, protocol)]
    out += [i + "    " + line + "\n" for line in statics]
    if statics:
        out.append("\n")
    for t in typed:
        out.append(i + "    public var %s: %s\n" % (t.member, t.swift))
    if typed:
        out.append("\n")
    out.append(i + "    public init(%s) {\n" % ", ".join(t.parameter() for t in typed))
    for t in typed:
        out.append(i + "        self.%s = %s\n" % (t.member, t.member))
    out.append(i + "    }\n\n")
    label = "%s.%s" % (row["name"], name)
    out.append(i + "    public init(tlv: TLVValue) throws {\n")
    if typed:
        out.append(i + "        let r = try ClusterFieldReader(tlv, %s)\n" % json.dumps(label))
        for t in typed:
            out.append(i + "        " + t.reading(label) + "\n")
    else:
        out.append(i + "        _ = try ClusterFieldReader(tlv, %s)\n" % json.dumps(label))
    out.append(i + "    }\n\n")
    out.append(i + "    public var tlv: TLVValue {\n")
    if typed:
        out.append(i + "        var w = ClusterFieldWriter()\n")
        for t in typed:
            out.append(i + "        w.%s(%d, %s)\n" % (t.write, t.tag, t.member))
        out.append(i + "        return w.value\n")
    else:
        out.append(i + "        .structure([])\n")
    out.append(i + "    }\n")
    out.append(i + "}\n")
    return out


def cluster_types(row):
    """The cluster's structs, commands (requests and responses) and event payloads, typed."""
    name = row["name"]
    own = [e["name"] for e in row.get("enums", [])] + [b["name"] for b in row.get("bitmaps", [])] + \
        [st["name"] for st in row.get("structs", [])]
    clash = SUPPORT_NAMES.intersection(own)
    if clash:
        sys.exit("matter-codegen: %s defines %s, a name the generated types use" % (name, ", ".join(sorted(clash))))
    commands, events, structs = row.get("commands", []), row.get("events", []), row.get("structs", [])
    if not (commands or events or structs):
        return []
    out = ["\nextension Clusters.%s {" % name]
    for st in sorted(structs, key=lambda st: st["name"]):
        out += typed_struct(row, st["name"], "struct", st["fields"], "Sendable, Hashable, TLVCodable", [], 4,
                            "%s, a struct of the cluster." % st["name"])
    statics = lambda kind, id_table, element: [
        "public static let clusterID = Clusters.%s.id" % name,
        "public static let %sID = Clusters.%s.%s.%s" % (kind, name, id_table, ident(element["name"]))]
    if commands:
        out.append("\n    /// The cluster's commands: each request's and response's fields.\n")
        out.append("    public enum Commands {")
        for cmd in sorted(commands, key=lambda c: (number(c["id"]), c.get("direction", ""))):
            lines = statics("command", "Command", cmd)
            response = cmd.get("response", "Y")
            if cmd.get("direction") == "response":
                doc = "%s (%s), a response." % (cmd["name"], hex_id(number(cmd["id"]), 2))
            elif response != "Y":
                lines.append("public typealias Response = Clusters.%s.Commands.%s" % (name, response))
                doc = "%s (%s), answered with %s." % (cmd["name"], hex_id(number(cmd["id"]), 2), response)
            else:
                doc = "%s (%s), answered with a status." % (cmd["name"], hex_id(number(cmd["id"]), 2))
            protocol = "ClusterCommandWithResponse" if cmd.get("direction") != "response" and response != "Y" else "ClusterCommand"
            out += typed_struct(row, cmd["name"], "command", cmd.get("fields", []), protocol, lines, 8, doc)
        out.append("    }\n")
    if events:
        out.append("\n    /// The cluster's events: each one's payload.\n")
        out.append("    public enum Events {")
        for ev in sorted(events, key=lambda e: number(e["id"])):
            lines = statics("event", "Event", ev) + ["public static let priority = EventPriority.%s" % ev["priority"]]
            doc = "%s (%s, %s priority)." % (ev["name"], hex_id(number(ev["id"]), 2), ev["priority"])
            out += typed_struct(row, ev["name"], "event", ev.get("fields", []), "ClusterEvent", lines, 8, doc)
        out.append("    }\n")
    out.append("}\n")
    return out


def clusters_file(model):
    """The namespace and the global attributes."""
    out = [HEADER, "\n", "/// Every cluster of the model by name (`Clusters.OnOff.id`, `Clusters.OnOff.Attribute.onOff`).\n"]
    out.append("public enum Clusters {\n")
    out.append("    /// The global attributes every cluster has (Core spec 7.13).\n")
    out.append("    public enum Global {\n")
    out += id_table("Attribute", "AttributeID", model["globalAttributes"], 4, 8)
    out.append("\n        /// Global attributes of earlier releases: no cluster of the model serves them.\n")
    out += id_table("RetiredAttribute", "AttributeID", model["retiredGlobalAttributes"], 4, 8)
    out.append("\n        /// Fields every struct or event of a kind has (a fabric-scoped one's FabricIndex).\n")
    out.append("        public enum Field {\n")
    for f in model["globalFields"]:
        out.append("            public static let %s: UInt8 = %s\n" % (ident(f["name"]), hex_id(number(f["id"]), 2)))
    out.append("        }\n")
    out.append("    }\n}\n")
    return "".join(out)


def id_space_file(model):
    """`IDSpace`: the data model's ID ranges (the model's `idSpace`), and the specification
    version the model is (`specVersion`) as BasicInformation's SpecificationVersion encodes it."""
    space = model["idSpace"]
    out = [HEADER, "\n", "/// The data model's ID spaces: an ID's prefix (its high 16 bits) is the vendor that defines\n",
           "/// it, 0 for the standard; its suffix (the low 16 bits) says what kind of element it is.\n",
           "public enum IDSpace {"]
    rng = lambda pair: "%s...%s" % (hex_id(number(pair[0]), 4), hex_id(number(pair[1]), 4))
    for key, v in space.items():
        if key == "about":
            continue
        if isinstance(v, list):
            out.append("\n    public static let %s: ClosedRange<UInt16> = %s\n" % (key, rng(v)))
            continue
        kind = key[:1].upper() + (key[1:-2] if key.endswith("xes") else key[1:-1])
        out.append("\n    public enum %s {\n" % kind)
        for name, pair in v.items():
            out.append("        public static let %s: ClosedRange<UInt16> = %s\n" % (ident(name), rng(pair)))
        out.append("    }\n")
    out.append("}\n\n")
    major, minor, dot = (list(int(x) for x in model["specVersion"].split(".")) + [0, 0])[:3]
    out.append("/// The Matter specification the model is.\n")
    out.append("public enum MatterSpecification {\n")
    out.append("    public static let version = %s\n" % json.dumps(model["specVersion"]))
    out.append("    /// As BasicInformation's SpecificationVersion encodes it: major, minor, dot, reserved, a byte each.\n")
    out.append("    public static let specificationVersion: UInt32 = 0x%02X%02X_%02X00\n" % (major, minor, dot))
    out.append("}\n")
    return "".join(out)


def device_type_ids_file(model):
    out = [HEADER, "\n", "/// Every device type of the model (`DeviceTypes.onOffLight`).\n"]
    out += id_table("DeviceTypes", "DeviceTypeID", model["deviceTypes"], 4, 0)
    return "".join(out)


# The methods of MatterDevice's ClusterServer a command's typed method must not shadow.
SERVER_METHODS = {"invoke", "handles", "startUp", "validateWrite", "didWrite", "commitWrite", "readValue", "timerFired",
                  "initialValue", "answersConstraintErrors", "reply", "answerStatus", "answerResponse"}


def handler_file(row):
    """MatterDevice's `<Name>Handler`: the cluster's requests as typed methods of a server, and
    the `invoke` that decodes each request and encodes each response."""
    name = row["name"]
    requests = sorted((c for c in row.get("commands", []) if c.get("direction") != "response"), key=lambda c: number(c["id"]))
    out = [HEADER, "\nimport MatterModel\n\n"]
    out.append("/// %s's commands as typed calls: a server implements those it handles (the rest answer\n" % name)
    out.append("/// UNSUPPORTED_COMMAND); the generated `invoke` decodes the request's fields into its type,\n")
    out.append("/// answering a decoding error as `TypedClusterServer.reply(to:decoding:context:)` says,\n")
    out.append("/// and encodes the response.\n")
    out.append("protocol %sHandler: TypedClusterServer {\n" % name)
    signatures = []
    for cmd in requests:
        method = ident(cmd["name"])
        if method.strip("`") in SERVER_METHODS:
            sys.exit("matter-codegen: %s.%s: its method would shadow a cluster server's" % (name, cmd["name"]))
        response = cmd.get("response", "Y")
        returns = "InteractionStatus" if response == "Y" else "CommandReply<Clusters.%s.Commands.%s>" % (name, response)
        signature = "func %s(_ request: Clusters.%s.Commands.%s, context: ClusterContext) -> %s" % (
            method, name, cmd["name"], returns)
        signatures.append((cmd, method, response, signature))
        out.append("    /// %s (%s).\n" % (cmd["name"], hex_id(number(cmd["id"]), 2)))
        out.append("    %s\n" % signature)
    out.append("}\n\n")
    out.append("extension %sHandler {\n" % name)
    out.append("    static var clusterID: ClusterID { Clusters.%s.id }\n" % name)
    for cmd, method, response, signature in signatures:
        unsupported = "InteractionStatus(.unsupportedCommand)" if response == "Y" else ".failure(.unsupportedCommand)"
        out.append("\n    %s { %s }\n" % (signature, unsupported))
    out.append("\n    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {\n")
    out.append("        switch command {\n")
    for cmd, method, response, signature in signatures:
        helper = "answerStatus" if response == "Y" else "answerResponse"
        out.append("        case Clusters.%s.Command.%s:\n" % (name, ident(cmd["name"])))
        out.append("            %s(fields, command, context) { (request: Clusters.%s.Commands.%s) in %s(request, context: context) }\n" % (
            helper, name, cmd["name"], method))
    out.append("        default: .failure(.unsupportedCommand)\n")
    out.append("        }\n")
    out.append("    }\n")
    out.append("}\n")
    return "".join(out)


def handler_files(model):
    return {"%sHandler.swift" % row["name"]: handler_file(row) for row in model["clusters"]
            if any(c.get("direction") != "response" for c in row.get("commands", []))}


def status_code_file(model):
    """The Interaction Model status codes (Core spec 8.10), from the model's `statusCodes`."""
    out = [HEADER, "\n", "// Interaction Model status codes (Matter Core spec 8.10 \"Status Code Table\").\n",
           "// Cluster servers return them; the Interaction Model encodes them on the wire.\n\n",
           "public enum StatusCode: UInt8, Sendable, Hashable, CaseIterable {\n"]
    out += ["    case %s = 0x%02X\n" % (camel(name), code) for code, name in model["statusCodes"]]
    out.append("}\n")
    return "".join(out)


# chip.tlv's names (after TLV_TYPE_ / TLV_TAG_CONTROL_) as MatterTLV spells them; BOOLEAN is
# TLVBoolean_False's code, PATH is the spec's List.
TLV_ELEMENT_TYPES = {"SIGNED_INTEGER": "signedInt1", "UNSIGNED_INTEGER": "unsignedInt1", "TLVBoolean_False": "booleanFalse",
                     "TLVBoolean_True": "booleanTrue", "FLOATING_POINT_NUMBER": "float32", "UTF8_STRING": "utf8Length1",
                     "BYTE_STRING": "octetsLength1", "NULL": "null", "STRUCTURE": "structure", "ARRAY": "array", "PATH": "list",
                     "TLVEndOfContainer": "endOfContainer", "BOOLEAN": None}
TLV_TAG_CONTROLS = {"ANONYMOUS": "anonymous", "CONTEXT_SPECIFIC": "contextSpecific", "COMMON_PROFILE_2Bytes": "commonProfile2",
                    "COMMON_PROFILE_4Bytes": "commonProfile4", "IMPLICIT_PROFILE_2Bytes": "implicitProfile2",
                    "IMPLICIT_PROFILE_4Bytes": "implicitProfile4", "FULLY_QUALIFIED_6Bytes": "fullyQualified6",
                    "FULLY_QUALIFIED_8Bytes": "fullyQualified8"}


def tlv_files(model):
    """MatterTLV's control octet codes (Core spec A.7) from the model's `tlv` (chip.tlv)."""
    out = [HEADER, "\n", "// The control octet's codes as the SDK's TLV codec (chip.tlv) has them.\n"]
    for swift_type, rows, names in (("TLVElementTypeCode", model["tlv"]["elementTypes"], TLV_ELEMENT_TYPES),
                                    ("TLVTagControl", model["tlv"]["tagControls"], TLV_TAG_CONTROLS)):
        out.append("\nextension %s {\n" % swift_type)
        for code, name in rows:
            if name not in names:
                sys.exit("matter-codegen: chip.tlv's %s: no MatterTLV name for it" % name)
            if names[name] is not None:
                out.append("    static let %s: UInt8 = 0x%02X\n" % (names[name], code))
        out.append("}\n")
    return {"TLVControlCodes.swift": "".join(out)}


def model_files(model):
    files = {"%sCluster.swift" % row["name"]: cluster_ids_file(row) for row in model["clusters"]}
    files["Clusters.swift"] = clusters_file(model)
    files["DeviceTypeIDs.swift"] = device_type_ids_file(model)
    files["StatusCode.swift"] = status_code_file(model)
    files["IDSpace.swift"] = id_space_file(model)
    return files


def formatted(text):
    """The text as the project's `swift format` (.swift-format) lays it out, so the output
    passes scripts/format.sh --check as the hand-written files do."""
    result = subprocess.run(["swift", "format", "format", "--configuration", os.path.join(ROOT, ".swift-format")],
                            input=text, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit("matter-codegen: swift format failed: " + result.stderr.strip())
    return result.stdout


def generate():
    model = json.load(open(MODEL))
    rows = {c["name"]: c for c in model["clusters"]}
    clusters = [Cluster(rows[name]) for name in TRAITS]
    files = {"%sTrait.swift" % c.name: trait_file(c) for c in clusters}
    files["DeviceTypes.swift"] = device_types_file(model)
    files["Registry.swift"] = registry_file(clusters)
    return {name: formatted(text) for name, text in files.items()}, \
        {name: formatted(text) for name, text in model_files(model).items()}, \
        {name: formatted(text) for name, text in handler_files(model).items()}, \
        {name: formatted(text) for name, text in tlv_files(model).items()}


def main():
    check = "--check" in sys.argv[1:]
    home, ids, handlers, tlv = generate()
    failed = False
    for out, files in ((OUT, home), (MODEL_OUT, ids), (DEVICE_OUT, handlers), (TLV_OUT, tlv)):
        failed |= write(out, files, check)
    if failed:
        sys.exit(1)


def write(OUT, files, check):
    """Writes (or with check, compares) one output directory; True when check found it stale."""
    stale = []
    existing = set(os.listdir(OUT)) if os.path.isdir(OUT) else set()
    for name, text in files.items():
        path = os.path.join(OUT, name)
        current = open(path).read() if os.path.exists(path) else None
        if current != text:
            stale.append(name)
            if not check:
                os.makedirs(OUT, exist_ok=True)
                with open(path, "w") as f:
                    f.write(text)
    extra = sorted(existing - set(files))
    if check:
        if stale or extra:
            print("matter-codegen: %s differs from the model: %s; run scripts/matter-codegen.py"
                  % (os.path.relpath(OUT, ROOT), ", ".join(stale + ["%s (not generated)" % e for e in extra])), file=sys.stderr)
            return True
        print("matter-codegen: %d generated files in %s match the model" % (len(files), os.path.relpath(OUT, ROOT)))
        return False
    for name in extra:
        os.remove(os.path.join(OUT, name))
    print("matter-codegen: %s: %d files written, %d changed, %d removed" % (os.path.relpath(OUT, ROOT), len(files), len(stale), len(extra)))
    return False


if __name__ == "__main__":
    main()
