// Shared helpers of the Play and Watch views: the JSON API, cards, seats, score sheets.
// The server is the authority: this page only shows what it is sent and sends actions.
"use strict";

const SUIT_SYMBOL = { C: "♣", D: "♦", S: "♠", H: "♥" };

/** Call the API; on a refused request show its error line and throw. `options.headers`:
 * extra headers (a table's X-Table-Token). */
async function api(path, options = {}) {
  const init = { method: options.method || "GET", headers: { ...(options.headers || {}) } };
  if (options.body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch(path, init);
  let data;
  try {
    data = await response.json();
  } catch (e) {
    data = { error: `the server answered ${response.status} without JSON` };
  }
  if (!response.ok) {
    showError(data.error || `request failed (${response.status})`);
    throw new Error(data.error);
  }
  showError(null);
  return data;
}

function showError(message) {
  const box = document.getElementById("error");
  box.hidden = !message;
  box.textContent = message || "";
}

/** Element helper: el("div", {class: "x"}, child, "text"). */
function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A card ("AH", "10S") as a face-up card element. */
function cardEl(text, extraClass = "") {
  const suit = text.slice(-1);
  const rank = text.slice(0, -1);
  const red = suit === "H" || suit === "D" ? " red" : "";
  return el("span", { class: `card${red} ${extraClass}`.trim(), "data-card": text },
    el("span", { class: "rank" }, rank), el("span", { class: "suit" }, SUIT_SYMBOL[suit]));
}

/** Where seat `seat` sits for a viewer at `viewer`: 0 bottom, 1 right, 2 top, 3 left. */
function position(seat, viewer) {
  return (seat - viewer + 4) % 4;
}

/** The display names (name=) of the watched database's agents, by label. */
const AGENT_NAMES = new Map();

/** What is shown for an agent: its display name (name=), else its spec with any file path cut
 * to its file name: neural:runs/x/policy.pt -> neural:policy.pt. */
function shortName(spec) {
  if (spec === null) return "";
  if (AGENT_NAMES.has(spec)) return AGENT_NAMES.get(spec);
  return spec.replace(/[^:,=]*\/([^/,]+)/g, "$1");
}

function signed(n) {
  return n > 0 ? `+${n}` : `${n}`;
}

/** The score sheet of a match: rows {number, dealer, required_total, bids, tricks, points,
 * scores, note}; `current` highlights a row. Compact: one cell per seat (bid/took, points,
 * score) instead of four columns per seat. */
function sheetTable(rows, names, current = null, compact = false) {
  const seats = [0, 1, 2, 3];
  const bidText = (b) => (b === null || b === 0 ? "–" : b);
  const pointsCell = (p) => el("td", { class: p > 0 ? "plus" : p < 0 ? "minus" : "" },
    p === null ? "–" : signed(p));
  const head = compact
    ? el("tr", {}, el("th", {}, "hand"), el("th", {}, "dealer"), el("th", {}, "need"),
      seats.map((s) => el("th", { title: names ? `${names[s]}: bid/took, points → score` : "" },
        `S${s}`)),
      el("th", {}, "note"))
    : el("tr", {}, el("th", {}, "hand"), el("th", {}, "dealer"), el("th", {}, "need"),
      seats.map((s) => el("th", { title: names ? names[s] : "" }, `bid S${s}`)),
      seats.map((s) => el("th", {}, `took S${s}`)),
      seats.map((s) => el("th", {}, `pts S${s}`)),
      seats.map((s) => el("th", {}, `S${s}`)), el("th", {}, "note"));
  const body = rows.map((r) => el("tr", { class: r.number === current ? "current" : "" },
    el("td", {}, r.number), el("td", {}, `S${r.dealer}`), el("td", {}, r.required_total),
    compact
      ? seats.map((s) => {
        const p = r.points ? r.points[s] : null;
        return el("td", {}, `${bidText(r.bids[s])}/${r.tricks ? r.tricks[s] : "–"}`,
          el("span", { class: `pts ${p > 0 ? "plus" : p < 0 ? "minus" : ""}` },
            p === null ? "" : signed(p)), ` → ${r.scores[s]}`);
      })
      : [seats.map((s) => el("td", {}, bidText(r.bids[s]))),
        seats.map((s) => el("td", {}, r.tricks ? r.tricks[s] : "–")),
        seats.map((s) => pointsCell(r.points ? r.points[s] : null)),
        seats.map((s) => el("td", { class: "score" }, r.scores[s]))],
    el("td", { class: "note" }, r.note || "")));
  return el("table", { class: `sheet${compact ? " compact" : ""}` },
    compact ? el("caption", {}, "each seat: bid/took, points → score") : null,
    el("thead", {}, head), el("tbody", {}, body));
}

function speedMs() {
  return Number(document.getElementById("speed").value);
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Show the view named by the address's #hash (play or watch). */
function route() {
  const view = location.hash === "#watch" ? "watch" : "play";
  document.body.dataset.view = view;
  document.getElementById("play").hidden = view !== "play";
  document.getElementById("watch").hidden = view !== "watch";
  if (view === "watch" && window.Watch) window.Watch.open();
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);
