// The dashboard page: the home from the first WebSocket message, then every change as the
// simulator pushes it. Buttons POST to /api/devices/SERIAL/ACTION (the control socket's names).
"use strict";
const token = new URLSearchParams(location.search).get("token");
const withToken = (path) => token ? path + (path.includes("?") ? "&" : "?") + "token=" + encodeURIComponent(token) : path;
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
    case "BooleanState.StateValue": return ["", value ? "closed" : "open"];
    case "OccupancySensing.Occupancy": return ["", value & 1 ? "occupied" : "unoccupied"];
    case "Switch.CurrentPosition": return ["position", value];
    case "ColorControl.ColorMode": return ["colour mode", ({0: "hue/sat", 1: "xy", 2: "temperature"})[value] ?? value];
    case "ColorControl.ColorTemperatureMireds": return ["", Math.round(1e6 / Math.max(value, 1)) + " K"];
    case "ColorControl.CurrentHue": return ["hue", Math.round(value / 254 * 360) + "°"];
    case "ColorControl.CurrentSaturation": return ["sat", Math.round(value / 254 * 100) + " %"];
    case "ColorControl.CurrentX": return ["x", (value / 65536).toFixed(3)];
    case "ColorControl.CurrentY": return ["y", (value / 65536).toFixed(3)];
    case "BasicInformation.NodeLabel": return ["label", value === "" ? "–" : value];
    default: return [name.split(".")[1], String(value)];
  }
}

function routeBadges(d) {
  const r = d.node.route;
  const cloud = r.cloud === null || r.cloud === undefined ? ["none", "no relay"] : r.cloud ? ["up", "relay"] : ["down", "relay"];
  return el("div", {class: "routes"},
    el("span", {class: "route " + (r.power ? "up" : "down"), "data-route": "power"}, r.power ? "power" : "power off"),
    el("span", {class: "route " + (r.lan && r.power ? "up" : "down"), "data-route": "lan", title: r.lan ? "LAN up" : "LAN down"}, "LAN"),
    el("span", {class: "route " + cloud[0], "data-route": "cloud", title: r.cloudStatus ?? "no cloud relay"}, cloud[1]),
    el("span", {class: "badge " + (d.node.fabrics.length ? "ok" : ""), "data-commissioned": d.node.fabrics.length ? "yes" : "no"},
      d.node.fabrics.length ? `commissioned (${d.node.fabrics.length} fabric${d.node.fabrics.length > 1 ? "s" : ""})` : "not commissioned"));
}

async function act(serial, action, value) {
  const path = `/api/devices/${encodeURIComponent(serial)}/${action}` + (value !== undefined ? `?value=${encodeURIComponent(value)}` : "");
  const answer = await fetch(withToken(path), {method: "POST"}).then((r) => r.json()).catch((e) => ({error: String(e)}));
  if (answer.error) flash(answer.error);
}

function flash(text) {
  const m = el("div", {class: "message"}, text);
  document.body.append(m);
  setTimeout(() => m.remove(), 4000);
}

function actButtons(d) {
  const box = el("div", {class: "acts"});
  const stop = (f) => (e) => { e.stopPropagation(); f(); };
  for (const a of d.acts) {
    if (a === "dim" || a === "dial" || a === "temperature") {
      const input = el("input", {class: "value", type: "number", step: a === "dim" ? "10" : "0.5",
        value: a === "dim" ? "50" : "21", onclick: (e) => e.stopPropagation(), "data-input": a});
      box.append(input, el("button", {"data-act": a, onclick: stop(() => act(d.serial, a, input.value))}, a === "dim" ? "dim %" : a + " °C"));
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

function faultButtons(d) {
  const r = d.node.route;
  const stop = (f) => (e) => { e.stopPropagation(); f(); };
  const b = (action, label) => el("button", {"data-fault": action, onclick: stop(() => act(d.serial, action))}, label);
  return el("div", {class: "faults"},
    r.lan ? b("lan-down", "pull LAN") : b("lan-up", "plug LAN"),
    r.cloud === null || r.cloud === undefined ? null : (r.cloudStatus === "cloud down" ? b("cloud-up", "cloud up") : b("cloud-down", "cloud down")),
    r.power ? b("power-off", "power off") : b("power-on", "power on"));
}

function stateLine(d) {
  // An empty NodeLabel says nothing.
  const keys = Object.keys(d.state).sort().filter((key) => !(key.endsWith("NodeLabel") && !d.state[key]));
  const spans = keys.map((key) => {
    const [label, text] = shown(key, d.state[key]);
    return el("span", {"data-key": key}, label ? label + " " : "", el("b", {}, text));
  });
  return el("div", {class: "state"}, spans);
}

function card(d) {
  return el("div", {class: "device" + (d.node.route.power ? "" : " unpowered") + (selected === d.serial ? " selected" : ""),
                    id: "device-" + d.serial, "data-serial": d.serial, onclick: () => select(d.serial)},
    el("div", {class: "title"}, el("span", {class: "name"}, d.name), el("span", {class: "types"}, d.deviceTypes.join(", "))),
    routeBadges(d), stateLine(d), actButtons(d), faultButtons(d));
}

function renderCard(serial) {
  const d = devices.get(serial);
  const old = document.getElementById("device-" + serial);
  if (d && old) old.replaceWith(card(d));
  if (selected === serial) renderDetail();
}

function renderHome(home) {
  document.getElementById("home-name").textContent = home.home;
  document.title = home.home + " · matter-sim";
  const root = document.getElementById("home");
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

function renderDetail() {
  const d = devices.get(selected);
  const aside = document.getElementById("detail");
  if (!d) { aside.hidden = true; return; }
  aside.hidden = false;
  document.getElementById("detail-name").textContent = d.name;
  const n = d.node;
  const log = el("div", {class: "log", id: "log"}, d.log.map(logLine));
  document.getElementById("detail-body").replaceChildren(
    el("div", {class: "qr"}, el("img", {src: withToken(`/api/devices/${encodeURIComponent(d.serial)}/qr.svg`), alt: "pairing QR code", id: "qr"}),
      el("div", {}, el("div", {}, "manual code"), el("div", {class: "code", id: "manual-code"}, d.manualCode),
        el("div", {}, "QR payload"), el("div", {class: "code"}, d.qrPayload),
        el("div", {class: "types"}, `serial ${d.serial} · UDP ${d.port}`))),
    el("h4", {}, `fabrics (${n.fabrics.length})`),
    n.fabrics.length ? el("table", {}, el("tr", {}, el("th", {}, "index"), el("th", {}, "fabric ID"), el("th", {}, "node ID"), el("th", {}, "vendor"), el("th", {}, "label")),
      n.fabrics.map((f) => el("tr", {}, el("td", {}, f.index), el("td", {}, f.fabricID), el("td", {}, f.nodeID), el("td", {}, "0x" + f.vendorID.toString(16).toUpperCase()), el("td", {}, f.label)))) : el("div", {class: "types"}, "none: commission it with the code above"),
    el("h4", {}, `sessions (${n.sessions.length})`),
    el("table", {}, n.sessions.map((s) => el("tr", {}, el("td", {}, s.kind), el("td", {}, s.peer), el("td", {}, s.kind === "CASE" ? `fabric ${s.fabricIndex} node ${s.peerNodeID}` : "")))),
    el("h4", {}, `subscriptions (${n.subscriptions.length})`),
    el("table", {}, n.subscriptions.map((s) => el("tr", {}, el("td", {}, "#" + s.id), el("td", {}, s.peer), el("td", {}, `${s.paths} paths`), el("td", {}, `${s.minInterval}–${s.maxInterval} s`)))),
    el("h4", {}, "traffic"), log);
  log.scrollTop = log.scrollHeight;
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
      const old = document.querySelector(`#device-${CSS.escape(message.serial)} .state`);
      if (old) old.replaceWith(stateLine(d));
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
      if (log) { log.append(logLine(message.entry)); log.scrollTop = log.scrollHeight; }
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
  ws.onclose = () => { badge.textContent = "disconnected, retrying"; badge.className = "badge off"; setTimeout(connect, 1000); };
}
connect();
