// Herald's operations console: reads GET /api/v1/operators/console with an operator token,
// then follows `operations:console` on the native realtime protocol (a `console_snapshot`
// every second from the node it is connected to). No framework, no build step.
"use strict";

const CHANNEL = "operations:console";
const state = { token: null, socket: null, snapshot: null, updates: 0, drawn: [], attempt: 0 };
window.heraldConsole = state;

const $ = (id) => document.getElementById(id);

function setStatus(text, kind) {
  const status = $("status");
  status.textContent = text;
  status.className = "status" + (kind ? " " + kind : "");
}

async function signIn(token) {
  const response = await fetch("/api/v1/operators/console", { headers: { Authorization: "Bearer " + token } });
  if (response.status === 401 || response.status === 403) {
    const body = await response.json().catch(() => ({}));
    throw new Error((body.error && body.error.code) === "FORBIDDEN" ? "This token is not an operator's." : "This token is not valid (expired?).");
  }
  if (!response.ok) throw new Error("The server answered " + response.status + ".");
  const body = await response.json();
  state.token = token;
  sessionStorage.setItem("herald-operator-token", token);
  $("signin").hidden = true;
  $("board").hidden = false;
  render(body.data);
  connect();
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const socket = new WebSocket(scheme + "://" + location.host + "/api/v1/realtime?token=" + encodeURIComponent(state.token));
  state.socket = socket;
  setStatus("connecting", "waiting");
  socket.onopen = () => {
    state.attempt = 0;
    socket.send(JSON.stringify({ type: "subscribe", channel: CHANNEL }));
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(event.data);
    if (message.type === "subscribed" && message.channel === CHANNEL) setStatus("live", "live");
    if (message.type === "console_snapshot") render(message.payload);
    if (message.type === "error" && message.code === "TOKEN_EXPIRED") signOut("The token expired; paste a new one.");
  };
  socket.onclose = () => {
    if (state.socket !== socket || !state.token) return;
    // Exponential backoff with full jitter: 0.5 s doubling to 30 s.
    const bound = Math.min(30000, 500 * 2 ** state.attempt++);
    const wait = Math.random() * bound;
    setStatus("reconnecting in " + (wait / 1000).toFixed(1) + " s", "waiting");
    setTimeout(connect, wait);
  };
}

function signOut(reason) {
  state.token = null;
  sessionStorage.removeItem("herald-operator-token");
  if (state.socket) state.socket.close();
  $("board").hidden = true;
  $("signin").hidden = false;
  const error = $("signin-error");
  error.textContent = reason;
  error.hidden = !reason;
  setStatus("signed out");
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text == null ? "—" : String(text);
  return td;
}

function fill(id, rows, key, columns) {
  const body = $(id);
  body.replaceChildren(...rows.map((row) => {
    const tr = document.createElement("tr");
    if (key) tr.dataset.id = row[key];
    columns.forEach((column) => tr.appendChild(cell(typeof column === "function" ? column(row) : row[column])));
    return tr;
  }));
}

function list(id, items, text) {
  $(id).replaceChildren(...items.map((item) => {
    const li = document.createElement("li");
    li.textContent = text(item);
    return li;
  }));
}

function age(iso) {
  if (!iso) return null;
  const seconds = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  return seconds < 90 ? seconds + " s ago" : Math.round(seconds / 60) + " min ago";
}

function render(snapshot) {
  state.snapshot = snapshot;
  state.updates += 1;
  $("node").textContent = "node " + snapshot.node;
  $("updated").textContent = "updated " + new Date(snapshot.generated_at).toLocaleTimeString();
  $("queue-depth").textContent = snapshot.push_queue_depth;
  fill("nodes", snapshot.nodes, "node", ["node", "connections"]);
  fill("jobs", snapshot.jobs, "id", ["id", "status", "offer_round", "offered", "driver_id"]);
  fill("trips", snapshot.trips, "id", ["id", "state", "driver_id", (trip) => trip.last_position ? age(trip.last_position.at) : null]);
  fill("deliveries", snapshot.deliveries, null, ["channel", "provider", "status", "count"]);
  list("errors", snapshot.errors, (e) => `${e.at} ${e.status} ${e.code} ${e.method} ${e.path} (${e.request_id})`);
  list("push-failures", snapshot.push_failures, (f) => `${f.at} ${f.provider || ""} ${f.status}: ${f.reason || "no reason"}`);
  draw(snapshot);
}

// The map: longitude and latitude projected on the canvas (equirectangular, scaled by the
// cosine of the middle latitude), fitted to everything shown. No tiles.
function draw(snapshot) {
  const canvas = $("map");
  const context = canvas.getContext("2d");
  const points = [];
  snapshot.drivers.forEach((d) => points.push({ kind: "driver", id: d.id, lat: d.latitude, lon: d.longitude }));
  snapshot.jobs.filter((j) => j.latitude != null).forEach((j) => points.push({ kind: "job", id: j.id, lat: j.latitude, lon: j.longitude }));
  snapshot.trips.forEach((t) => {
    points.push({ kind: "pickup", id: t.id, lat: t.pickup.latitude, lon: t.pickup.longitude });
    points.push({ kind: "dropoff", id: t.id, lat: t.dropoff.latitude, lon: t.dropoff.longitude });
    if (t.last_position) points.push({ kind: "trip", id: t.id, lat: t.last_position.latitude, lon: t.last_position.longitude });
  });
  context.clearRect(0, 0, canvas.width, canvas.height);
  state.drawn = points;
  if (points.length === 0) {
    context.fillStyle = "#656d76";
    context.fillText("Nothing to show yet: no online driver, open job or trip.", 20, 30);
    return;
  }
  const lats = points.map((p) => p.lat), lons = points.map((p) => p.lon);
  const [minLat, maxLat, minLon, maxLon] = [Math.min(...lats), Math.max(...lats), Math.min(...lons), Math.max(...lons)];
  const squeeze = Math.cos(((minLat + maxLat) / 2) * Math.PI / 180);
  const spanX = Math.max((maxLon - minLon) * squeeze, 0.002), spanY = Math.max(maxLat - minLat, 0.002);
  const pad = 40, scale = Math.min((canvas.width - 2 * pad) / spanX, (canvas.height - 2 * pad) / spanY);
  const centerX = (minLon + maxLon) / 2, centerY = (minLat + maxLat) / 2;
  const at = (p) => [canvas.width / 2 + (p.lon - centerX) * squeeze * scale, canvas.height / 2 - (p.lat - centerY) * scale];
  points.forEach((p) => { [p.x, p.y] = at(p); });
  // Trips: pickup → driver → drop-off.
  snapshot.trips.forEach((t) => {
    const [pickup, dropoff, driver] = ["pickup", "dropoff", "trip"].map((kind) => points.find((p) => p.kind === kind && p.id === t.id));
    context.strokeStyle = "#15803d";
    context.lineWidth = 2;
    context.beginPath();
    context.moveTo(pickup.x, pickup.y);
    if (driver) context.lineTo(driver.x, driver.y);
    context.lineTo(dropoff.x, dropoff.y);
    context.stroke();
  });
  const colours = { driver: "#1f6feb", job: "#d97706", trip: "#15803d", pickup: "#15803d", dropoff: "#15803d" };
  points.forEach((p) => {
    context.fillStyle = colours[p.kind];
    context.beginPath();
    if (p.kind === "job") context.rect(p.x - 6, p.y - 6, 12, 12);
    else context.arc(p.x, p.y, p.kind === "trip" || p.kind === "driver" ? 7 : 4, 0, 2 * Math.PI);
    context.fill();
    if (p.kind === "driver" || p.kind === "job" || p.kind === "trip") {
      context.fillStyle = "#1f2328";
      context.fillText(p.id, p.x + 9, p.y - 6);
    }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  $("signin").addEventListener("submit", (event) => {
    event.preventDefault();
    $("signin-error").hidden = true;
    signIn($("token").value.trim()).catch((error) => signOut(error.message));
  });
  const saved = sessionStorage.getItem("herald-operator-token");
  if (saved) signIn(saved).catch((error) => signOut(error.message));
});
