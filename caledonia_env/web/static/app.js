// caledonia serve: the page. Plain JS, no build step, no network beyond this server.
"use strict";
const $ = (id) => document.getElementById(id);
const SVG = "http://www.w3.org/2000/svg";
const S = { id: null, view: null, board: null, timer: null, node: null, busy: false,
            compiled: true, estimate: 0 };

function el(tag, attrs = {}, text) {
  const e = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) e.setAttribute(k, v);
  if (text !== undefined) e.textContent = text;
  return e;
}

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
  let r;
  try { r = await fetch(path, opts); } catch (e) { throw new Error("server unreachable: " + e.message); }
  let data;
  try { data = await r.json(); } catch (e) { throw new Error(`server answered ${r.status} without JSON`); }
  if (!r.ok) throw new Error(typeof data.detail === "string" ? data.detail : JSON.stringify(data.detail));
  return data;
}

function showError(msg) { const e = $("error"); e.textContent = msg || ""; e.hidden = !msg; }

async function call(method, path, body) {
  if (S.busy) return null;
  S.busy = true; document.body.classList.add("busy");
  try {
    const v = await api(method, path, body);
    showError("");
    return v;
  } catch (e) { showError(e.message); stopPlay(); return null; }
  finally { S.busy = false; document.body.classList.remove("busy"); }
}

// ------------------------------------------------------------------ first run
// The server's numba cache holds no compiled engine yet (engine.compile.first_run): the first game
// compiles it. Say so before, and count the seconds while it happens.
function compileNote(elapsed) {
  const box = $("compiling");
  box.hidden = S.compiled;
  if (S.compiled) return;
  box.textContent = `The first game compiles the engine for this machine — once, about ${S.estimate} s` +
    (elapsed === undefined ? "." : `: ${elapsed} s so far…`);
}

async function compiling(request) {
  if (S.compiled) return request();
  const t0 = Date.now();
  compileNote(0);
  const tick = setInterval(() => compileNote(Math.round((Date.now() - t0) / 1000)), 1000);
  try {
    const v = await request();
    if (v) S.compiled = true;
    return v;
  } finally { clearInterval(tick); compileNote(); }
}

// ------------------------------------------------------------------ setup
async function init() {
  const meta = await api("GET", "/api/meta");
  S.compiled = meta.engine.compiled; S.estimate = meta.engine.estimate_s;
  compileNote();
  const dl = el("datalist", { id: "agent-names" });
  const names = ["human", "greedy", "greedy:solo", "random", "mcts:16", "mcts:64",
                 "mcts:64h2:solo", "automa:3"];
  if (meta.agents.some((a) => a.name === "ppo")) {
    for (const c of meta.checkpoints) names.push(`ppo:${c}`);
    names.push("nmctsg:64h2:solo");
  }
  for (const n of names) dl.append(el("option", { value: n }));
  document.body.append(dl);
  const defaults = ["human", "greedy", "", ""];
  for (let i = 0; i < 4; i++) {
    const inp = el("input", { id: `seat${i}`, list: "agent-names", size: 9, value: defaults[i],
                              placeholder: i < 2 ? "" : "(empty)", title: `player ${i}: an agent name or 'human'` });
    $("seats").append(el("label", {}, `P${i} `), inp);
  }
  $("new-game").addEventListener("submit", (ev) => { ev.preventDefault(); startGame(); });
  $("replay-file").addEventListener("change", loadReplay);
  $("first").onclick = () => move("goto", { position: 0 });
  $("prev").onclick = () => move("step", { delta: -1 });
  $("next").onclick = () => move("step", { delta: 1 });
  $("last-pos").onclick = () => move("goto", { round: 6 });
  $("play").onclick = togglePlay;
  $("undo").onclick = () => move("undo");
  const gid = new URLSearchParams(location.search).get("game");
  if (gid) { const v = await call("GET", `/api/games/${gid}`); if (v) await show(v); }
}

async function startGame() {
  const players = [0, 1, 2, 3].map((i) => $(`seat${i}`).value.trim()).filter((x) => x);
  const body = { players, clans: $("clans").value.trim() || "draft", seed: Number($("seed").value || 0) };
  if ($("sides").value.trim()) body.map = $("sides").value.trim();
  const v = await compiling(() => call("POST", "/api/games", body));
  if (v) await show(v, true);
}

async function loadReplay(ev) {
  const f = ev.target.files[0];
  if (!f) return;
  const text = await f.text();
  const v = await compiling(() => call("POST", "/api/replays", { record: text, name: f.name }));
  ev.target.value = "";
  if (v) await show(v, true);
}

async function move(kind, body) {
  if (!S.id) return;
  const v = await call("POST", `/api/games/${S.id}/${kind}`, body);
  if (v) await show(v);
  return v;
}

function togglePlay() { S.timer ? stopPlay() : startPlay(); }
function stopPlay() { if (S.timer) clearTimeout(S.timer); S.timer = null; $("play").textContent = "▶▶ play"; }
function startPlay() {
  $("play").textContent = "❚❚ pause";
  const tick = async () => {
    const v = S.view;
    if (!v || v.human_turn || (v.terminal && v.position === v.length)) { stopPlay(); return; }
    const r = await move("step", { delta: 1 });
    if (!r) { stopPlay(); return; }
    S.timer = setTimeout(tick, Number($("speed").value));
  };
  S.timer = setTimeout(tick, 0);
}

async function show(v, fresh) {
  if (fresh || v.id !== S.id || !S.board) {
    S.board = await api("GET", `/api/games/${v.id}/board`);
    S.id = v.id;
    history.replaceState(null, "", `?game=${v.id}`);
    drawBoard();
  }
  S.view = v; S.node = null;
  render();
}

// ------------------------------------------------------------------ map
const hexPts = (x, y, r) => [0, 1, 2, 3, 4, 5].map((k) => {
  const a = (30 + 60 * k) * Math.PI / 180;
  return [x + r * Math.cos(a), -(y + r * Math.sin(a))];
});
const ptsAttr = (pts) => pts.map((p) => p.map((c) => c.toFixed(3)).join(",")).join(" ");

function drawBoard() {
  const b = S.board, svg = $("map"), T = b.colors.terrain;
  svg.replaceChildren();
  const xs = [], ys = [];
  for (const n of [...b.hexes, ...b.ports]) { xs.push(n.x); ys.push(-n.y); }
  const pad = 1.3, x0 = Math.min(...xs) - pad, y0 = Math.min(...ys) - pad;
  svg.setAttribute("viewBox", `${x0} ${y0} ${Math.max(...xs) + pad - x0} ${Math.max(...ys) + pad - y0}`);
  const defs = el("svg:defs");
  const pat = el("svg:pattern", { id: "mist", width: 0.25, height: 0.25, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
  pat.append(el("svg:rect", { width: 0.25, height: 0.25, fill: "#8c8c8c", "fill-opacity": 0.55 }),
             el("svg:line", { x1: 0, y1: 0, x2: 0, y2: 0.25, stroke: "#fff", "stroke-width": 0.08 }));
  defs.append(pat); svg.append(defs);
  const gHex = el("svg:g"), gTop = el("svg:g", { id: "overlay" });
  for (const h of b.hexes) {
    const g = el("svg:g", { class: "hex", "data-node": h.id, "data-label": h.label });
    const cs = hexPts(h.x, h.y, 0.985), parts = h.terrain.filter((t) => t !== "loch" && t !== "port");
    const land = h.terrain.includes("loch") ? ["loch"] : parts;
    if (land.length <= 1) g.append(el("svg:polygon", { points: ptsAttr(cs), fill: T[land[0]] }));
    else {      // mixed hex: one sector per terrain (halves split vertically)
      const per = 6 / land.length, start = land.length === 2 ? 1 : 0;
      land.forEach((t, i) => {
        const ks = []; for (let j = 0; j <= per; j++) ks.push((start + i * per + j) % 6);
        g.append(el("svg:polygon", { points: ptsAttr([[h.x, -h.y], ...ks.map((k) => cs[k])]), fill: T[t] }));
      });
    }
    const outline = el("svg:polygon", { points: ptsAttr(cs), class: "outline" });
    g.append(outline);
    if (!h.active) g.append(el("svg:polygon", { points: ptsAttr(cs), fill: "url(#mist)", class: "inactive" }));
    else if (h.mist) g.append(el("svg:polygon", { points: ptsAttr(hexPts(h.x, h.y, 0.8)), class: "mist" }));
    const dark = ["forest", "mountain"].includes(land[0]);
    if (h.cost > 0) g.append(el("svg:text", { x: h.x, y: -h.y + 0.62, class: "cost" + (dark ? " light" : "") }, `£${h.cost}`));
    g.append(el("svg:text", { x: h.x, y: -h.y - 0.52, class: "hid" + (dark ? " light" : "") }, h.label.slice(3)));
    if (land[0] === "loch") g.append(el("svg:text", { x: h.x, y: -h.y + 0.12, class: "loch" }, "~"));
    if (h.delta) g.append(el("svg:path", { d: `M${h.x + 0.48},${-h.y + 0.22} l0.17,0.3 l-0.34,0 z`, class: "delta" }));
    g.addEventListener("click", () => clickNode(h.id));
    gHex.append(g);
  }
  svg.append(gHex);
  const line = (seg, cls) => el("svg:line", { x1: seg[0], y1: -seg[1], x2: seg[2], y2: -seg[3], class: cls });
  for (const s of b.seams) svg.append(line(s, "seam"));
  for (const s of b.border) svg.append(line(s, "border"));
  for (const s of b.rivers) svg.append(line(s, "river"));
  for (const p of b.ports) {
    const g = el("svg:g", { class: "port", "data-node": p.id, "data-label": p.label });
    for (const w of p.hexes) { const h = b.hexes[w]; g.append(el("svg:line", { x1: p.x, y1: -p.y, x2: h.x, y2: -h.y, class: "portlink" })); }
    g.append(el("svg:rect", { x: p.x - 0.75, y: -p.y - 0.45, width: 1.5, height: 0.9, rx: 0.25, class: "portbox", fill: T.port }));
    g.append(el("svg:text", { x: p.x, y: -p.y - 0.08, class: "portname" }, `port ${p.corner}`));
    g.append(el("svg:text", { x: p.x, y: -p.y + 0.3, class: "porttile", id: `port-tile-${p.corner}` }, ""));
    g.addEventListener("click", () => clickNode(p.id));
    svg.append(g);
  }
  svg.append(gTop);
}

function renderUnits() {
  const b = S.board, sc = S.view.scenario, g = $("overlay"), byLabel = {};
  for (const n of [...b.hexes, ...b.ports]) byLabel[n.label] = n;
  g.replaceChildren();
  const unit = (label, player, name) => {
    const n = byLabel[label]; if (!n) return;
    const col = player === null ? "#777" : b.colors.players[player];
    const u = el("svg:g", { class: "unit", "data-label": label, "data-unit": name, "data-player": player ?? "neutral" });
    u.append(el("svg:circle", { cx: n.x, cy: -n.y, r: 0.36, fill: col }));
    u.append(el("svg:text", { x: n.x, y: -n.y + 0.12, class: player === 2 ? "ulabel dark" : "ulabel" },
                player === null ? "X" : b.units[name]));
    u.append(el("svg:title", {}, `${label}: ${player === null ? "neutral piece" : name + " of " + seatName(player)}`));
    u.addEventListener("click", () => clickNode(n.id));
    g.append(u);
  };
  sc.players.forEach((p, i) => { for (const [label, name] of Object.entries(p.units)) unit(label, i, name); });
  for (const label of sc.neutral) unit(label, null, "neutral");
  for (const [c, t] of Object.entries(sc.ports)) {
    const e = $(`port-tile-${c}`); if (e) e.textContent = t || "";
  }
  // hexes a human can act on
  const targets = new Set(S.view.human_turn ? S.view.legal.filter((a) => a.node !== null).map((a) => a.node) : []);
  for (const e of document.querySelectorAll("#map [data-node]")) {
    const n = Number(e.getAttribute("data-node"));
    e.classList.toggle("target", targets.has(n));
    e.classList.toggle("chosen", S.node === n);
  }
}

function clickNode(node) {
  const v = S.view;
  if (!v || !v.human_turn) return;
  if (!v.legal.some((a) => a.node === node)) { showError(`no legal action on ${labelOf(node)} now`); return; }
  showError("");
  S.node = S.node === node ? null : node;
  renderUnits(); renderActions();
}

const labelOf = (node) => { const b = S.board; return node < b.hexes.length ? b.hexes[node].label : b.ports[node - b.hexes.length].label; };
const seatName = (p) => `P${p} ${S.view.seats[p]}`;

// ------------------------------------------------------------------ panels
function render() {
  const v = S.view, sc = v.scenario;
  renderUnits();
  const who = v.terminal ? "game over" : `${seatName(v.current_player)} to decide (${v.context})`;
  $("status").replaceChildren(
    el("b", {}, v.mode === "replay" ? `Replay ${v.label || v.id}` : `${v.mode === "play" ? "Play" : "Watch"} ${v.id}`),
    ` · map ${S.board.map.join(",")} · decision ${v.position} / ${v.length} · round ${sc.round} · ${sc.phase} · `,
    el("span", { id: "who", class: v.human_turn ? "you" : "" }, who));
  $("last").textContent = v.last ? `last: ${seatName(v.last.player)} — ${v.last.name}` : "start of the game";
  $("undo").hidden = v.mode !== "play";
  const dl = $("download"); dl.hidden = false; dl.href = `/api/games/${v.id}/record`; dl.textContent = "⤓ record";
  const rounds = $("rounds"); rounds.replaceChildren("round ");
  for (let r = 1; r <= 5; r++) {
    const bt = el("button", { class: "round" + (sc.round === r ? " on" : ""), "data-round": r }, String(r));
    bt.onclick = () => move("goto", { round: r });
    rounds.append(bt);
  }
  renderWarnings(); renderLog(); renderActions(); renderPlayers(); renderMarket(); renderExport(); renderScores(); renderLegend();
}

function renderWarnings() {
  const v = S.view, box = $("warning"), lines = [...v.warnings];
  if (v.notice) lines.push(v.notice);
  box.textContent = lines.join("\n");
  box.hidden = !lines.length;
}

function renderLog() {
  const v = S.view, ol = $("log");
  ol.replaceChildren();
  const automa = (after) => v.automa.filter((a) => a.after === after).forEach((a) => ol.append(
    el("li", { class: "automa" }, `automa P${a.player}: ${a.text.replace(/^automa P\d+: /, "")}`)));
  automa(0);
  v.log.forEach((e, i) => {
    const li = el("li", { class: i === v.position - 1 ? "cur" : "", value: i + 1 });
    li.append(el("span", { class: "dot", style: `background:${S.board.colors.players[e.player]}` }),
              ` R${e.round} P${e.player}: ${e.name}`);
    li.onclick = () => move("goto", { position: i + 1 });
    ol.append(li);
    automa(i + 1);
  });
  const cur = ol.querySelector(".cur"); if (cur) cur.scrollIntoView({ block: "nearest" });
}

function renderActions() {
  const v = S.view, box = $("actions");
  box.replaceChildren();
  if (!v.human_turn) { box.hidden = true; return; }
  box.hidden = false;
  const list = S.node === null ? v.legal : v.legal.filter((a) => a.node === S.node);
  box.append(el("div", { class: "hint" }, S.node === null
    ? `Your decision (${v.context}): click a highlighted hex or an action.`
    : `Actions on ${labelOf(S.node)} (click the hex again for all):`));
  const groups = {};
  for (const a of list) (groups[a.group] = groups[a.group] || []).push(a);
  for (const [g, acts] of Object.entries(groups)) {
    const d = el("details", { open: Object.keys(groups).length <= 6 || S.node !== null ? "" : null });
    d.append(el("summary", {}, `${g} (${acts.length})`));
    for (const a of acts) {
      const bt = el("button", { class: "act", "data-action": a.id, title: `action id ${a.id}` }, a.name);
      bt.onclick = () => move("act", { action: a.id });
      d.append(bt);
    }
    box.append(d);
  }
}

function renderPlayers() {
  const v = S.view, sc = v.scenario, box = $("players"), cols = S.board.colors.players;
  box.replaceChildren();
  sc.players.forEach((p, i) => {
    const card = el("div", { class: "player" + (i === v.current_player ? " current" : ""), id: `player-${i}` });
    const head = el("div", { class: "phead", style: `border-color:${cols[i]}` });
    head.append(el("span", { class: "dot", style: `background:${cols[i]}` }),
                el("b", {}, seatName(i)), p.clan ? ` · ${p.clan}` : "", p.passed ? " · passed" : "");
    card.append(head);
    const goods = Object.entries(p.goods).filter(([, k]) => k).map(([g, k]) => `${k} ${g}`).join(", ") || "none";
    const left = Object.entries(v.units_left[i]).filter(([, k]) => k).map(([u, k]) => `${k} ${S.board.units[u]}`).join(" ");
    const tech = Object.entries(p.technology).filter(([, on]) => on).map(([t]) => t).join(", ") || "none";
    const ctr = p.contracts.filter((c) => c !== null).map(contractText).join("; ") || "none";
    const rows = [["money", `£${p.money}`, "money"], ["glory", p.glory, "glory"], ["goods", goods, "goods"],
      ["units left", left || "none", "units"], ["shipping", `${p.shipping} · tech upgrades: ${tech}`, "shipping"],
      ["merchants", `${p.merchants} in supply, ${p.merchants_on_track} on track`, "merchants"],
      ["contracts", ctr, "contracts"], ["fulfilled", p.fulfilled.length ? p.fulfilled.map((c) => "#" + c).join(" ") : "none", "fulfilled"]];
    if (p.start_tile) rows.push(["start tile", p.start_tile, "start_tile"]);
    if (p.clan === "mackenzie") rows.push(["cellar", `whisky aging: ${p.cellar[0]} left, ${p.cellar[1]} right`, "cellar"]);
    if (p.clan === "brewer") rows.push(["beer", `${p.beer} brewed`, "beer"]);
    if (p.bid) rows.push(["auction bid", `${p.bid} VP`, "bid"]);
    const t = el("table");
    for (const [k, val, key] of rows) {
      const tr = el("tr"); tr.append(el("th", {}, k), el("td", { "data-field": key }, String(val))); t.append(tr);
    }
    card.append(t);
    box.append(card);
  });
}

function contractText(cid) {
  const c = S.board.contracts[cid];
  if (!c) return `#${cid}`;
  const f = (o) => Object.entries(o).map(([k, n]) => `${n} ${k.replace("_", " ")}`).join(", ");
  return `#${cid}: ${f(c.need)} → ${f(c.gain)}`;
}

function renderMarket() {
  const sc = S.view.scenario, b = S.board, box = $("market");
  const t = el("table", { class: "market" });
  const head = el("tr"); head.append(el("th", {}, "market"), el("th", {}, "price"), el("th", {}, "range"), el("th", {}, "merchants (buy / sell)"));
  t.append(head);
  for (const g of b.goods) {
    const tr = el("tr");
    const m = el("td");
    sc.players.forEach((p, i) => {
      for (const side of ["buy", "sell"]) {
        const k = (p.market[side] || {})[g] || 0;
        for (let j = 0; j < k; j++) m.append(el("span", { class: `merch ${side}`, style: `background:${b.colors.players[i]}`, title: `P${i} ${side}` }, side[0]));
      }
    });
    tr.append(el("td", {}, g), el("td", { "data-good": g }, `£${S.view.prices[g]}`), el("td", {}, `${b.market.min[g]}–${b.market.max[g]}`), m);
    t.append(tr);
  }
  box.replaceChildren(t);
}

function renderExport() {
  const sc = S.view.scenario, b = S.board, box = $("export");
  box.replaceChildren(el("h3", {}, `Export board · round ${sc.round}`));
  const slots = el("ol", { class: "slots", start: 0 });
  sc.slots.forEach((c) => slots.append(el("li", {}, c === null ? "(empty)" : contractText(c))));
  box.append(el("div", {}, `contract slots (pile: ${sc.pile.length})`), slots);
  box.append(el("div", {}, "import track: " + Object.entries(sc.import_track).map(([g, k]) => `${g.replace("_", " ")} ${k}`).join(" · ")));
  const tiles = el("div", { class: "tiles" }, "scoring tiles: ");
  sc.scoring_tiles.forEach((t, r) => {
    if (t === null) return;
    tiles.append(el("span", { class: "tile" + (sc.round === r + 1 ? " on" : ""), title: b.scoring_tiles[t] }, `R${r + 1} ${t}: ${b.scoring_tiles[t]}`));
  });
  box.append(tiles);
  const ports = Object.entries(sc.ports).filter(([, t]) => t).map(([c, t]) => `${c} ${t}: ${b.port_tiles[t]}`);
  if (ports.length) box.append(el("div", { class: "tiles" }, "ports: " + ports.join(" · ")));
}

function renderScores() {
  const v = S.view, box = $("scores");
  box.replaceChildren();
  if (!v.score) return;
  const t = el("table", { class: "scores" }), win = v.score.winners;
  const head = el("tr"); head.append(el("th", {}, "final score"));
  v.seats.forEach((s, i) => head.append(el("th", { class: win.includes(i) ? "winner" : "" },
                                             `P${i}` + (win.includes(i) ? " ★ wins" : ""))));
  t.append(head);
  for (const f of Object.keys(v.score.breakdown[0])) {
    const tr = el("tr", { class: f === "total" ? "total" : "" });
    tr.append(el("th", {}, f));
    v.score.breakdown.forEach((b) => tr.append(el("td", { "data-score": f }, String(b[f]))));
    t.append(tr);
  }
  box.append(t);
}

function renderLegend() {
  const b = S.board, box = $("legend");
  if (box.dataset.game === S.id) return;
  box.dataset.game = S.id;
  box.replaceChildren();
  const sw = (style, text, cls = "sw") => { const s = el("span", { class: "item" }); s.append(el("span", { class: cls, style }), text); box.append(s); };
  for (const t of ["pasture", "forest", "mountain", "loch"]) sw(`background:${b.colors.terrain[t]}`, t);
  sw("background:repeating-linear-gradient(45deg,#aaa 0 3px,#fff 3px 5px)", "mist (inactive)");
  sw("border:2px dashed #fff;background:#b5d98a", "mist (in play)");
  sw(`background:${b.colors.river}`, "river", "sw line");
  sw("background:#c0392b", "active-map border", "sw line thin");
  sw("background:#0b3d91;clip-path:polygon(50% 0,100% 100%,0 100%)", "river delta");
  sw(`background:${b.colors.terrain.port}`, "port (tile)");
  box.append(el("span", { class: "item" }, "£n land cost · 07 hex number in its module side"));
  sw("border:3px solid #ff00c8", "you can act on this hex (click)");
  sw("border:3px solid #000", "chosen hex");
  S.view.seats.forEach((s, i) => sw(`background:${b.colors.players[i]};border-radius:50%`, `P${i} ${s}`));
  box.append(el("span", { class: "item units" }, "units: " + Object.entries(b.units).map(([u, k]) => `${k} ${u.replace("_", " ")}`).join(" · ") + " · X neutral"));
}

init().catch((e) => showError(e.message));
