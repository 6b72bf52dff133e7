// The dashboard page: the home from the first WebSocket message, then every change as the
// simulator pushes it. Buttons POST to /api/devices/SERIAL/ACTION (the control socket's names).
// The token comes in the page's URL (?token=, as matter-sim prints it): fetches send it as
// `Authorization: Bearer`, the WebSocket and the QR image as `?token=` (a browser cannot set
// their headers). A change patches the elements already shown, never replaces them: a person
// (or a test) pointing at a button while the state moves keeps pointing at it.
"use strict";
const token = new URLSearchParams(location.search).get("token") ?? "";
const withToken = (path) => path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token);
const devices = new Map();   // serial → device snapshot, kept current
let selected = null;

const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v); else if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) e.append(c instanceof Node ? c : String(c));
  return e;
};

// What an attribute means to a person.
function shown(key, value) {
  const name = key.split("/")[1];
  if (value === null) return [name.split(".")[1], "–"];
  switch (name) {
    case "OnOff.OnOff": return ["", value ? "on" : "off"];
    case "LevelControl.CurrentLevel": return ["level", Math.round(value / 254 * 100) + " %"];
    case "WindowCovering.CurrentPositionLiftPercent100ths": return ["closed", (value / 100).toFixed(0) + " %"];
    case "WindowCovering.TargetPositionLiftPercent100ths": return ["target", (value / 100).toFixed(0) + " %"];
    case "WindowCovering.CurrentPositionTiltPercent100ths": return ["tilt", (value / 100).toFixed(0) + " %"];
    case "Thermostat.LocalTemperature": return ["room", (value / 100).toFixed(1) + " °C"];
    case "Thermostat.OccupiedHeatingSetpoint": return ["heat to", (value / 100).toFixed(1) + " °C"];
    case "Thermostat.OccupiedCoolingSetpoint": return ["cool to", (value / 100).toFixed(1) + " °C"];
    case "Thermostat.SystemMode": return ["mode", ({0: "off", 1: "auto", 3: "cool", 4: "heat", 7: "fan"})[value] ?? value];
    case "Thermostat.ThermostatRunningState": return ["running", value & 1 ? "heating" : value & 2 ? "cooling" : "idle"];
    case "TemperatureMeasurement.MeasuredValue": return ["", (value / 100).toFixed(1) + " °C"];
    case "DoorLock.LockState": return ["", ({0: "not fully locked", 1: "locked", 2: "unlocked", 3: "unlatched"})[value] ?? value];
    case "BooleanState.StateValue": return ["", value ? "closed / wet" : "open / dry"];
    case "OccupancySensing.Occupancy": return ["", value & 1 ? "occupied" : "unoccupied"];
    case "Switch.CurrentPosition": return ["position", value];
    case "SmokeCoAlarm.ExpressedState": return ["", ["normal", "SMOKE", "CO", "battery low", "testing", "fault", "end of service", "smoke (linked)", "CO (linked)"][value] ?? value];
    case "SmokeCoAlarm.SmokeState": return ["smoke", ["none", "warning", "critical"][value] ?? value];
    case "SmokeCoAlarm.COState": return ["CO", ["none", "warning", "critical"][value] ?? value];
    case "SmokeCoAlarm.TestInProgress": return ["", value ? "self-test" : ""];
    case "BooleanStateConfiguration.AlarmsActive": return ["alarm", value ? [value & 1 ? "light" : "", value & 2 ? "beep" : ""].filter(Boolean).join("+") : "off"];
    case "BridgedDeviceBasicInformation.Reachable": return ["", value ? "reachable" : "unreachable"];
    case "PowerSource.BatPercentRemaining": return ["battery", (value / 2).toFixed(0) + " %"];
    case "ColorControl.ColorMode": return ["colour mode", ({0: "hue/sat", 1: "xy", 2: "temperature"})[value] ?? value];
    case "ColorControl.ColorTemperatureMireds": return ["", Math.round(1e6 / Math.max(value, 1)) + " K"];
    case "ColorControl.CurrentHue": return ["hue", Math.round(value / 254 * 360) + "°"];
    case "ColorControl.CurrentSaturation": return ["sat", Math.round(value / 254 * 100) + " %"];
    case "ColorControl.CurrentX": return ["x", (value / 65536).toFixed(3)];
    case "ColorControl.CurrentY": return ["y", (value / 65536).toFixed(3)];
    case "FanControl.FanMode": return ["fan", ({0: "off", 1: "low", 2: "medium", 3: "high", 4: "on", 5: "auto", 6: "smart"})[value] ?? value];
    case "FanControl.PercentCurrent": return ["speed", value + " %"];
    case "RelativeHumidityMeasurement.MeasuredValue": return ["humidity", (value / 100).toFixed(1) + " %"];
    case "IlluminanceMeasurement.MeasuredValue": return ["light", (value ? Math.round(10 ** ((value - 1) / 10000)) : 0) + " lx"];
    case "PressureMeasurement.MeasuredValue": return ["pressure", (value / 10).toFixed(1) + " kPa"];
    case "FlowMeasurement.MeasuredValue": return ["flow", (value / 10).toFixed(1) + " m³/h"];
    case "AirQuality.AirQuality": return ["air", ({0: "unknown", 1: "good", 2: "fair", 3: "moderate", 4: "poor", 5: "very poor", 6: "extremely poor"})[value] ?? value];
    case "CarbonDioxideConcentrationMeasurement.MeasuredValue": return ["CO₂", Math.round(value) + " ppm"];
    case "Pm25ConcentrationMeasurement.MeasuredValue": return ["PM2.5", value.toFixed(1) + " µg/m³"];
    case "Pm10ConcentrationMeasurement.MeasuredValue": return ["PM10", value.toFixed(1) + " µg/m³"];
    case "TotalVolatileOrganicCompoundsConcentrationMeasurement.MeasuredValue": return ["TVOC", Math.round(value) + " ppb"];
    case "HepaFilterMonitoring.Condition": return ["HEPA filter", value + " %"];
    case "ActivatedCarbonFilterMonitoring.Condition": return ["carbon filter", value + " %"];
    case "ValveConfigurationAndControl.CurrentState": return ["valve", ["closed", "open", "moving"][value] ?? value];
    case "ValveConfigurationAndControl.CurrentLevel": return ["open", value + " %"];
    case "ValveConfigurationAndControl.RemainingDuration": return ["closes in", value + " s"];
    case "RvcOperationalState.OperationalState": return ["", ({0: "stopped", 1: "cleaning", 2: "paused", 3: "ERROR", 64: "returning to dock", 65: "charging", 66: "docked"})[value] ?? value];
    case "RvcOperationalState.CurrentPhase": return ["phase", ["cleaning", "returning", "charging"][value] ?? value];
    case "RvcRunMode.CurrentMode": return ["run mode", ["idle", "cleaning"][value] ?? value];
    case "PumpConfigurationAndControl.EffectiveOperationMode": return ["pump", ["normal", "minimum", "maximum", "local"][value] ?? value];
    case "PumpConfigurationAndControl.Speed": return ["speed", value + " rpm"];
    case "PumpConfigurationAndControl.PumpStatus": return ["", value & 3 ? "FAULT" : value & 32 ? "running" : "stopped"];
    case "RvcCleanMode.CurrentMode": return ["clean mode", ["vacuum", "deep clean", "quiet"][value] ?? value];
    case "BasicInformation.NodeLabel": return ["label", value === "" ? "–" : value];
    default: return [name.split(".")[1], String(value)];
  }
}

// Sets what differs only, so nothing is rebuilt.
function patch(e, {cls, text, title}) {
  if (cls !== undefined && e.className !== cls) e.className = cls;
  if (text !== undefined && e.textContent !== text) e.textContent = text;
  if (title !== undefined && e.title !== title) e.title = title;
}

function patchRoutes(box, d) {
  const r = d.node.route;
  const cloud = r.cloud === null || r.cloud === undefined ? ["none", "no relay"] : r.cloud ? ["up", "relay"] : ["down", "relay"];
  const q = (name) => box.querySelector(`[data-route="${name}"]`);
  patch(q("power"), {cls: "route " + (r.power ? "up" : "down"), text: r.power ? "power" : "power off"});
  patch(q("lan"), {cls: "route " + (r.lan && r.power ? "up" : "down"), text: "LAN", title: r.lan ? "LAN up" : "LAN down"});
  patch(q("cloud"), {cls: "route " + cloud[0], text: cloud[1], title: r.cloudStatus ?? "no cloud relay"});
  const fabrics = d.node.fabrics.length;
  const badge = box.querySelector("[data-commissioned]");
  patch(badge, {cls: "badge" + (fabrics ? " ok" : ""),
    text: fabrics ? `commissioned (${fabrics} fabric${fabrics > 1 ? "s" : ""})` : "not commissioned"});
  badge.dataset.commissioned = fabrics ? "yes" : "no";
}

async function act(serial, action, value) {
  const path = `/api/devices/${encodeURIComponent(serial)}/${action}` + (value !== undefined ? `?value=${encodeURIComponent(value)}` : "");
  const answer = await fetch(path, {method: "POST", headers: {Authorization: "Bearer " + token}})
    .then((r) => r.json()).catch((e) => ({error: String(e)}));
  if (answer.error) flash(answer.error);
}

function flash(text) {
  const m = el("div", {class: "message"}, text);
  document.body.append(m);
  setTimeout(() => m.remove(), 4000);
}

// Acts that set a sensor's reading: the unit shown and a value to start from.
const readingActs = {humidity: ["%", "55"], light: ["lx", "300"], pressure: ["kPa", "101.3"], flow: ["m³/h", "1.5"],
  co2: ["ppm", "1200"], pm25: ["µg/m³", "40"], pm10: ["µg/m³", "60"], tvoc: ["ppb", "500"]};

function actButtons(d) {
  const box = el("div", {class: "acts"});
  const stop = (f) => (e) => { e.stopPropagation(); f(); };
  for (const a of d.acts) {
    if (a === "dim" || a === "dial" || a === "temperature" || a === "battery") {
      const percent = a === "dim" || a === "battery";
      const input = el("input", {class: "value", type: "number", step: percent ? "10" : "0.5",
        value: a === "dim" ? "50" : a === "battery" ? "15" : "21", onclick: (e) => e.stopPropagation(), "data-input": a});
      box.append(input, el("button", {"data-act": a, onclick: stop(() => act(d.serial, a, input.value))}, percent ? a + " %" : a + " °C"));
    } else if (["unplug", "plug", "remove-bridged", "add-bridged"].includes(a)) {
      // Which bridged device: its endpoint number.
      const input = el("input", {class: "value", type: "number", step: "1", value: "2", onclick: (e) => e.stopPropagation(), "data-input": a});
      box.append(input, el("button", {"data-act": a, onclick: stop(() => act(d.serial, a, input.value))}, a + " #"));
    } else if (a in readingActs) {
      const [unit, initial] = readingActs[a];
      const input = el("input", {class: "value", type: "number", value: initial, onclick: (e) => e.stopPropagation(), "data-input": a});
      box.append(input, el("button", {"data-act": a, onclick: stop(() => act(d.serial, a, input.value))}, a + " " + unit));
    } else if (a === "fan") {
      for (const v of ["off", "low", "medium", "high"]) box.append(el("button", {"data-act": "fan-" + v, onclick: stop(() => act(d.serial, "fan", v))}, "fan " + v));
    } else if (a === "valve") {
      for (const v of ["open", "close"]) box.append(el("button", {"data-act": "valve-" + v, onclick: stop(() => act(d.serial, "valve", v))}, "valve " + v));
    } else if (a === "vacuum") {
      for (const v of ["start", "pause", "home", "stuck", "clear"]) box.append(el("button", {"data-act": "vacuum-" + v, onclick: stop(() => act(d.serial, "vacuum", v))}, "vacuum " + v));
    } else if (a === "pump") {
      for (const v of ["blocked", "clear"]) box.append(el("button", {"data-act": "pump-" + v, onclick: stop(() => act(d.serial, "pump", v))}, "pump " + v));
    } else if (a === "replace") {
      for (const v of ["hepa", "carbon"]) box.append(el("button", {"data-act": "replace-" + v, onclick: stop(() => act(d.serial, "replace", v))}, "new " + v + " filter"));
    } else if (a === "cord") {
      for (const v of ["open", "close", "stop"]) box.append(el("button", {"data-act": "cord-" + v, onclick: stop(() => act(d.serial, "cord", v))}, "cord " + v));
    } else if (a === "press") {
      for (const v of ["single", "double", "long"]) box.append(el("button", {"data-act": "press-" + v, onclick: stop(() => act(d.serial, "press", v))}, "press " + v));
    } else {
      box.append(el("button", {"data-act": a, onclick: stop(() => act(d.serial, a))}, a));
    }
  }
  return box;
}

// The fault buttons: one per slot, whose fault (and label) follows the route.
function faultButtons(d) {
  const button = (slot) => {
    const b = el("button", {"data-slot": slot, onclick: (e) => { e.stopPropagation(); act(d.serial, b.dataset.fault); }});
    return b;
  };
  return el("div", {class: "faults"}, button("lan"), button("cloud"), button("power"));
}

function patchFaults(box, d) {
  const r = d.node.route;
  const slot = (name, fault, label) => {
    const b = box.querySelector(`[data-slot="${name}"]`);
    b.hidden = !fault;
    if (fault) { b.dataset.fault = fault; patch(b, {text: label}); } else delete b.dataset.fault;
  };
  slot("lan", r.lan ? "lan-down" : "lan-up", r.lan ? "pull LAN" : "plug LAN");
  const relay = r.cloud !== null && r.cloud !== undefined;
  slot("cloud", relay ? (r.cloudStatus === "cloud down" ? "cloud-up" : "cloud-down") : null, r.cloudStatus === "cloud down" ? "cloud up" : "cloud down");
  slot("power", r.power ? "power-off" : "power-on", r.power ? "power off" : "power on");
}

// The state line: one span per shown attribute, by key, in key order; an empty NodeLabel says nothing.
function patchState(box, d) {
  const keys = Object.keys(d.state).sort().filter((key) => !(key.endsWith("NodeLabel") && !d.state[key]));
  const wanted = new Set(keys);
  const spans = new Map();
  for (const span of [...box.children]) {
    if (wanted.has(span.dataset.key)) spans.set(span.dataset.key, span); else span.remove();
  }
  let previous = null;
  for (const key of keys) {
    let span = spans.get(key);
    if (!span) {
      span = el("span", {"data-key": key});
      span.append(document.createTextNode(""), el("b"));
      if (previous) previous.after(span); else box.prepend(span);
    }
    const [label, text] = shown(key, d.state[key]);
    if (span.firstChild.textContent !== (label ? label + " " : "")) span.firstChild.textContent = label ? label + " " : "";
    patch(span.lastChild, {text: String(text)});
    previous = span;
  }
}

function card(d) {
  const c = el("div", {class: "device", id: "device-" + d.serial, "data-serial": d.serial, onclick: () => select(d.serial)},
    el("div", {class: "title"}, el("span", {class: "name"}, d.name), el("span", {class: "types"}, d.deviceTypes.join(", "))),
    el("div", {class: "routes"}, ["power", "lan", "cloud"].map((name) => el("span", {"data-route": name})), el("span", {"data-commissioned": "no"})),
    el("div", {class: "state"}), actButtons(d), faultButtons(d));
  patchCard(c, d);
  return c;
}

function patchCard(c, d) {
  c.classList.toggle("unpowered", !d.node.route.power);
  c.classList.toggle("selected", selected === d.serial);
  patchRoutes(c.querySelector(".routes"), d);
  patchState(c.querySelector(".state"), d);
  patchFaults(c.querySelector(".faults"), d);
}

function renderCard(serial) {
  const d = devices.get(serial);
  const c = document.getElementById("device-" + serial);
  if (d && c) patchCard(c, d);
  if (selected === serial) renderDetail();
}

function renderHome(home) {
  document.getElementById("home-name").textContent = home.home;
  document.title = home.home + " · matter-sim";
  const root = document.getElementById("home");
  // A reconnect brings the same home: patch its cards.
  const cards = root.querySelectorAll(".device");
  if (cards.length === home.devices.length && home.devices.every((d) => document.getElementById("device-" + d.serial))) {
    for (const d of home.devices) patchCard(document.getElementById("device-" + d.serial), d);
    return;
  }
  root.replaceChildren();
  const structures = new Map();
  for (const d of home.devices) {
    if (!structures.has(d.structure)) structures.set(d.structure, new Map());
    const rooms = structures.get(d.structure);
    const room = d.room ?? "No room";
    if (!rooms.has(room)) rooms.set(room, []);
    rooms.get(room).push(d);
  }
  for (const [structure, rooms] of structures) {
    root.append(el("div", {class: "structure"}, el("h2", {}, structure),
      [...rooms].map(([room, list]) => el("div", {class: "room"}, el("h3", {}, room), el("div", {class: "devices"}, list.map(card))))));
  }
}

function select(serial) {
  const previous = selected;
  selected = serial;
  if (previous) renderCard(previous);
  renderCard(serial);
}

function time(at) {
  const ms = Math.round(at);
  return new Date(ms).toLocaleTimeString([], {hour12: false}) + "." + String(ms % 1000).padStart(3, "0");
}

function logLine(e) { return el("div", {class: "k-" + e.kind}, `${time(e.at)} ${e.kind.padEnd(13)} ${e.peer}: ${e.summary}`); }

// The picked device: its pairing codes and traffic log built once, its fabrics, sessions and
// subscriptions patched as they change.
function renderDetail() {
  const d = devices.get(selected);
  const aside = document.getElementById("detail");
  if (!d) { aside.hidden = true; delete aside.dataset.serial; return; }
  aside.hidden = false;
  if (aside.dataset.serial !== d.serial) {
    aside.dataset.serial = d.serial;
    document.getElementById("detail-name").textContent = d.name;
    const log = el("div", {class: "log", id: "log"}, d.log.map(logLine));
    document.getElementById("detail-body").replaceChildren(
      el("div", {class: "qr"}, el("img", {src: withToken(`/api/devices/${encodeURIComponent(d.serial)}/qr.svg`), alt: "pairing QR code", id: "qr"}),
        el("div", {}, el("div", {}, "manual code"), el("div", {class: "code", id: "manual-code"}, d.manualCode),
          el("div", {}, "QR payload"), el("div", {class: "code"}, d.qrPayload),
          el("div", {class: "types"}, `serial ${d.serial} · UDP ${d.port}`))),
      el("div", {id: "detail-node"}), el("h4", {}, "traffic"), log);
    log.scrollTop = log.scrollHeight;
  }
  const n = d.node;
  const shownNode = JSON.stringify([n.fabrics, n.sessions, n.subscriptions]);
  const box = document.getElementById("detail-node");
  if (box.dataset.shown === shownNode) return;
  box.dataset.shown = shownNode;
  box.replaceChildren(
    el("h4", {}, `fabrics (${n.fabrics.length})`),
    n.fabrics.length ? el("table", {}, el("tr", {}, el("th", {}, "index"), el("th", {}, "fabric ID"), el("th", {}, "node ID"), el("th", {}, "vendor"), el("th", {}, "label")),
      n.fabrics.map((f) => el("tr", {}, el("td", {}, f.index), el("td", {}, f.fabricID), el("td", {}, f.nodeID), el("td", {}, "0x" + f.vendorID.toString(16).toUpperCase()), el("td", {}, f.label)))) : el("div", {class: "types"}, "none: commission it with the code above"),
    el("h4", {}, `sessions (${n.sessions.length})`),
    el("table", {}, n.sessions.map((s) => el("tr", {}, el("td", {}, s.kind), el("td", {}, s.peer), el("td", {}, s.kind === "CASE" ? `fabric ${s.fabricIndex} node ${s.peerNodeID}` : "")))),
    el("h4", {}, `subscriptions (${n.subscriptions.length})`),
    el("table", {}, n.subscriptions.map((s) => el("tr", {}, el("td", {}, "#" + s.id), el("td", {}, s.peer), el("td", {}, `${s.paths} paths`), el("td", {}, `${s.minInterval}–${s.maxInterval} s`)))));
}

document.getElementById("close-detail").addEventListener("click", () => { const s = selected; selected = null; renderCard(s); renderDetail(); });

function handle(message) {
  switch (message.type) {
    case "home":
      devices.clear();
      for (const d of message.devices) devices.set(d.serial, d);
      renderHome(message);
      if (selected) renderDetail();
      break;
    case "attribute": {
      const d = devices.get(message.serial);
      if (!d) return;
      d.state[message.key] = message.value;
      const box = document.querySelector(`#device-${CSS.escape(message.serial)} .state`);
      if (box) patchState(box, d);
      break;
    }
    case "node": {
      const d = devices.get(message.serial);
      if (!d) return;
      const before = JSON.stringify(d.node);
      d.node = message;
      if (JSON.stringify(d.node) !== before) renderCard(message.serial);
      break;
    }
    case "log": {
      const d = devices.get(message.serial);
      if (!d) return;
      d.log.push(message.entry);
      if (d.log.length > 200) d.log.shift();
      const log = selected === message.serial && document.getElementById("log");
      if (log) {
        log.append(logLine(message.entry));
        while (log.childElementCount > 200) log.firstElementChild.remove();
        log.scrollTop = log.scrollHeight;
      }
      break;
    }
    case "figures":
      for (const [id, v] of [["fig-nodes", message.nodes], ["fig-commissioned", message.commissioned], ["fig-sessions", message.sessions],
                             ["fig-subscriptions", message.subscriptions], ["fig-rate", message.messagesPerSecond]]) {
        document.getElementById(id).textContent = v;
      }
      break;
  }
}

function connect() {
  const ws = new WebSocket(withToken((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/live"));
  const badge = document.getElementById("connection");
  ws.onopen = () => { badge.textContent = "live"; badge.className = "badge ok"; };
  ws.onmessage = (e) => handle(JSON.parse(e.data));
  ws.onclose = () => {
    badge.textContent = token ? "disconnected, retrying" : "needs its token: open the URL matter-sim printed";
    badge.className = "badge off";
    setTimeout(connect, 1000);
  };
}
connect();
