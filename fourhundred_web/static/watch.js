// Watch: the matches of the tournament database the server was started with, and replays of
// both duplicate twins, hand by hand and card by card (where the server could replay the
// cards exactly; elsewhere the recorded bids and scores, and the reason). A ladder's database
// also shows its rating list, the ratings after each event (a chart drawn here, in SVG) and
// its pairings.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
/** One colour per bot of a ladder (by its place in the rating list), in the list and chart. */
const BOT_COLORS = ["#1e5aa8", "#c62828", "#2e7d32", "#f57c00", "#6a1b9a", "#00838f",
  "#ad1457", "#5d4037", "#546e7a", "#9e9d24"];

/** SVG element helper, as el() for HTML. */
function svgEl(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function eloText(x) {
  return x === null ? "–" : `${Math.round(x)}`;
}

/** A round step for an axis spanning `range`, about five ticks. */
function niceStep(range) {
  for (const step of [10, 20, 25, 50, 100, 200, 250, 500, 1000]) {
    if (range / step <= 6) return step;
  }
  return 2000;
}

/** The Elo of every bot after each event of ladder `l`: a line per bot through its ratings,
 * the 95% interval as a bar at each point (hover a point for its numbers). */
function historyChart(l) {
  const W = 560, H = 290, left = 56, right = 28, top = 12, bottom = 40;
  const n = l.events.length;
  const values = [];
  for (const e of l.events) {
    for (const r of e.ratings) if (r && r.elo !== null) values.push(r.elo, r.low, r.high);
  }
  const clean = values.filter((v) => v !== null);
  const lo0 = clean.length ? Math.min(...clean) : 1400, hi0 = clean.length ? Math.max(...clean) : 1600;
  const step = niceStep(Math.max(hi0 - lo0, 50));
  const lo = Math.floor(lo0 / step) * step, hi = Math.max(Math.ceil(hi0 / step) * step, lo + step);
  const plotW = W - left - right, plotH = H - top - bottom;
  const x = (k) => left + (n === 1 ? plotW / 2 : (k * plotW) / (n - 1));
  const y = (v) => top + ((hi - v) * plotH) / (hi - lo);
  const parts = [];
  for (let v = lo; v <= hi + 1e-9; v += step) {
    parts.push(svgEl("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }),
      svgEl("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end" }, v));
  }
  const every = Math.ceil(n / 12); // at most a dozen event labels
  l.events.forEach((e, k) => {
    if (k % every === 0 || k === n - 1) {
      parts.push(svgEl("text", { x: x(k), y: H - bottom + 16, "text-anchor": "middle" }, `#${e.event}`));
    }
  });
  parts.push(svgEl("text", { x: left + plotW / 2, y: H - 6, "text-anchor": "middle", class: "axis" },
    "ratings after each event"));
  parts.push(svgEl("text", { x: 12, y: top + plotH / 2, "text-anchor": "middle", class: "axis",
    transform: `rotate(-90 12 ${top + plotH / 2})` }, "Elo"));
  const nb = l.bots.length;
  l.bots.forEach((bot, i) => {
    const color = BOT_COLORS[i % BOT_COLORS.length];
    const shift = n === 1 ? (i - (nb - 1) / 2) * 10 : (i - (nb - 1) / 2) * 2.5; // bars apart
    const points = [];
    l.events.forEach((e, k) => {
      const r = e.ratings[i];
      if (r && r.elo !== null) points.push([k, r]);
    });
    const group = svgEl("g", { class: "bot", "data-bot": i, stroke: color, fill: color });
    if (points.length > 1) {
      group.append(svgEl("polyline", { fill: "none", "stroke-width": 2,
        points: points.map(([k, r]) => `${x(k) + shift},${y(r.elo)}`).join(" ") }));
    }
    for (const [k, r] of points) {
      if (r.low !== null && r.high !== null) {
        group.append(svgEl("line", { x1: x(k) + shift, x2: x(k) + shift, y1: y(r.low), y2: y(r.high),
          class: "interval" }));
      }
      group.append(svgEl("circle", { cx: x(k) + shift, cy: y(r.elo), r: 3.5 },
        svgEl("title", {}, `${shortName(bot.label)} after #${l.events[k].event}: ` +
          `${eloText(r.elo)} [${eloText(r.low)}, ${eloText(r.high)}]`)));
    }
    parts.push(group);
  });
  return svgEl("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", class: "chart",
    "aria-label": "Elo of each bot after each event of the ladder" }, parts);
}

const Watch = {
  summary: null,
  ladder: null, // the ladder's report (GET /api/watch/ladder) when the database is a ladder
  offset: 0,
  match: null, // {pair, match_id, twins: [game, game]}
  hand: 0, // index of the hand shown
  step: 0, // step within the hand (see stepsOf)
  timer: null,

  opened: false,
  options: null,

  async open() {
    if (this.opened) return;
    this.opened = true;
    document.getElementById("r-back-list").addEventListener("click", () => this.backToList());
    document.getElementById("r-prev").addEventListener("click", () => this.move(-1));
    document.getElementById("r-next").addEventListener("click", () => this.move(1));
    document.getElementById("r-prev-hand").addEventListener("click", () => this.jumpHand(-1));
    document.getElementById("r-next-hand").addEventListener("click", () => this.jumpHand(1));
    document.getElementById("r-play").addEventListener("click", () => this.togglePlay());
    document.getElementById("r-layout").addEventListener("change", () => {
      this.step = 0;
      this.render();
    });
    const input = document.getElementById("record-file");
    input.addEventListener("change", () => {
      if (input.files.length) this.openFile(input.files[0]);
    });
    this.options = await api("/api/options");
    if (this.options.record) {
      const served = document.getElementById("record-served");
      served.textContent = `Replay ${this.options.record}`;
      served.hidden = false;
      served.addEventListener("click", async () =>
        this.showRecord(await api("/api/watch/record"), { served: true }));
    }
    if (!this.options.watch) {
      document.getElementById("watch-none").hidden = false;
      return;
    }
    this.summary = await api("/api/watch");
    for (const [label, name] of Object.entries(this.summary.names || {})) AGENT_NAMES.set(label, name);
    this.renderSummary();
    if (this.summary.ladder) {
      this.ladder = await api("/api/watch/ladder");
      this.renderLadder();
      document.getElementById("watch-ladder").hidden = false;
    }
    document.getElementById("watch-list").hidden = false;
    for (const id of ["w-pair", "w-sort", "w-minbid"]) {
      document.getElementById(id).addEventListener("change", () => this.list(true));
    }
    document.getElementById("w-more").addEventListener("click", () => this.list(false));
    await this.list(true);
  },

  /** Send a record file's text to the server, which parses and replays it; show it. */
  async openFile(file) {
    const max = this.options ? this.options.max_record_bytes : Infinity;
    if (file.size > max) { // the server refuses it too; this says so before sending it
      showError(`${file.name}: ${file.size} bytes: expected a record of at most ${max} bytes`);
      return;
    }
    let data;
    const text = await file.text();
    try {
      data = await api("/api/records", { method: "POST", body: { text, name: file.name } });
    } catch (e) {
      showError(`${file.name}: ${e.message}`); // what is wrong with the file, in one line
      return;
    } finally {
      document.getElementById("record-file").value = ""; // the same file may be opened again
    }
    this.showRecord(data, { text });
  },

  /** Replay a record ({game} from the server) in the viewer; `source`: how the server can
   * have it again for a review (review.js; `back`: the review offers a way back to Play). */
  showRecord(data, source = null, back = false) {
    this.stop();
    this.match = { record: true, file: data.game.file, twins: [data.game] };
    this.showReplay();
    this.hand = 0;
    this.step = 0;
    if (window.Review) Review.attach(source, back);
    this.render();
  },

  showReplay() {
    for (const id of ["watch-list", "watch-ladder", "watch-none", "watch-record"]) {
      document.getElementById(id).hidden = true;
    }
    document.getElementById("replay").hidden = false;
    document.getElementById("r-back-list").textContent = this.summary ? "Matches" : "Back";
  },

  renderSummary() {
    const s = this.summary;
    const notes = Object.entries(s.replay).filter(([, why]) => why);
    document.getElementById("watch-summary").replaceChildren(
      el("h2", {}, `${s.ladder ? "Ladder" : "Tournament"} ${s.file}: matches`),
      el("p", { title: s.agents.join(", ") },
        `${s.games} games of ${s.agents.map(shortName).join(", ")} · ${s.rules} rules · seed ${s.seed}`),
      notes.length
        ? el("div", { class: "status warn" }, "Not replayed card by card (bids and scores only): ",
          notes.map(([, why]) => why).join("; "))
        : el("div", { class: "status ok" }, `Every agent of this ${s.ladder ? "ladder" : "tournament"} can be replayed card by card.`));
    const pair = document.getElementById("w-pair");
    pair.replaceChildren(el("option", { value: "" }, "all pairings"),
      ...s.pairs.map((p, i) => el("option", { value: i }, `${shortName(p[0])} v ${shortName(p[1])}`)));
    const sort = document.getElementById("w-sort");
    sort.replaceChildren(...Object.entries(s.sorts).map(([key, text]) =>
      el("option", { value: key }, text)));
  },

  renderLadder() {
    const l = this.ladder;
    const on = l.bots.filter((b) => b.active).length;
    const games = l.pairings.reduce((sum, p) => sum + p.games, 0);
    const planned = l.pairings.reduce((sum, p) => sum + p.games_expected, 0);
    const zero = l.anchor ? `${shortName(l.anchor)} pinned at 1500` : "the mean is 1500";
    document.getElementById("l-head").replaceChildren(
      el("h2", {}, `Ladder ${l.file}`),
      el("p", { title: l.method }, `${on} bots on it (${l.bots.length} versions in all) · ` +
        `${l.events.length} events · ${games} of ${planned} games · ${l.rules} rules · ` +
        `seed ${l.seed} · at most ${l.max_hands} hands a game · Elo: ${zero}`));
    const dot = (i) => el("span", { class: "dot", style: `background: ${BOT_COLORS[i % BOT_COLORS.length]}` });
    const status = (b) => b.active ? `on since #${b.added}`
      : `retired at #${b.retired} (${b.replaced ? "files changed" : "removed"})`;
    document.getElementById("l-ratings").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", { class: "left" }, "bot"),
        el("th", {}, "version"), el("th", {}, "Elo"), el("th", {}, "95% interval"),
        el("th", {}, "games"), el("th", {}, "score"), el("th", { class: "left" }, "status"))),
      el("tbody", {}, l.bots.map((b, i) => el("tr", { class: b.active ? "" : "retired", "data-bot": i },
        el("td", {}, b.rank), el("td", { class: "left", title: b.label }, dot(i), shortName(b.label)),
        el("td", {}, b.version), el("td", { class: "elo" }, eloText(b.elo)),
        el("td", {}, b.elo === null ? "–" : `${eloText(b.low)} – ${eloText(b.high)}`),
        el("td", {}, b.games),
        el("td", {}, b.win_rate === null ? "–" : `${(100 * b.win_rate).toFixed(1)}%`),
        el("td", { class: "left" }, status(b))))));
    document.getElementById("l-history").replaceChildren(historyChart(l),
      el("figcaption", {}, l.events.length > 1
        ? "Elo after each event (bars: 95% intervals; hover a point for its numbers)"
        : "Elo after the only event so far: the next add draws the history"));
    const what = { add: "added", remove: "retired", tournament: "tournament of" };
    document.getElementById("l-events").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", {}, "event"), el("th", {}, "started"),
        el("th", { class: "left" }, "what"), el("th", {}, "pairings"), el("th", {}, "matches each"),
        el("th", {}, "finished"))),
      el("tbody", {}, l.events.map((e) => el("tr", {},
        el("td", {}, `#${e.event}`), el("td", {}, e.started || "–"),
        el("td", { class: "left" }, `${what[e.kind] || e.kind} ${e.labels.map(shortName).join(", ")}` +
          (e.retired.length ? `; retired ${e.retired.map(shortName).join(", ")}` : "")),
        el("td", {}, e.kind === "remove" ? "–" : e.pairings),
        el("td", {}, e.matches === null ? "–" : e.matches),
        el("td", {}, e.finished ? e.finished : e.kind === "remove" ? "–" : "not yet")))));
    const rate = (p) => p.rate === null ? "–"
      : `${(100 * p.rate).toFixed(1)}% [${(100 * p.low).toFixed(1)}, ${(100 * p.high).toFixed(1)}]`;
    document.getElementById("l-pairings").replaceChildren(
      el("thead", {}, el("tr", {}, el("th", { class: "left" }, "pairing (A v B)"),
        el("th", {}, "planned by"),
        el("th", {}, "matches"), el("th", {}, "games held / planned"),
        el("th", {}, "score of A (Wilson 95%)"))),
      el("tbody", {}, l.pairings.map((p) => el("tr", {
        class: p.pair === null ? "none" : "", "data-pair": p.pair === null ? "" : p.pair,
        onclick: () => this.showPairing(p.pair) },
      el("td", { class: "left" }, dot(p.a), shortName(l.bots[p.a].label), " v ", dot(p.b),
        shortName(l.bots[p.b].label)),
      el("td", {}, `#${p.event}`), el("td", {}, p.matches),
      el("td", {}, `${p.games} / ${p.games_expected}`), el("td", {}, rate(p))))));
  },

  /** The match list of pairing `index` (of the summary's pairs; null: none played yet). */
  async showPairing(index) {
    if (index === null) return;
    document.getElementById("w-pair").value = `${index}`;
    await this.list(true);
    document.getElementById("watch-list").scrollIntoView();
  },

  async list(fresh) {
    if (fresh) this.offset = 0;
    const q = new URLSearchParams({
      sort: document.getElementById("w-sort").value || "match",
      min_bid: document.getElementById("w-minbid").value,
      offset: this.offset, limit: 40,
    });
    const pair = document.getElementById("w-pair").value;
    if (pair !== "") q.set("pair", pair);
    const data = await api(`/api/watch/matches?${q}`);
    const table = document.getElementById("w-matches");
    if (fresh) {
      table.replaceChildren(el("thead", {}, el("tr", {}, el("th", {}, "match"),
        el("th", {}, "pairing (A v B)"), el("th", {}, "twin 1: A holds S0+S2"),
        el("th", {}, "twin 2: A holds S1+S3"), el("th", {}, "difference for A"),
        el("th", {}, "highest bid"), el("th", {}, "bids of 7+"))), el("tbody"));
    }
    const body = table.querySelector("tbody");
    for (const m of data.matches) {
      const twin = (g) => g === null ? "not finished"
        : `${g.a_won === null ? "unfinished" : g.a_won ? "A wins" : "B wins"} ` +
          `(${g.scores.join(" / ")}) in ${g.num_hands} hands`;
      body.append(el("tr", { "data-match": m.match_id, "data-pair": `${m.pair_a}|${m.pair_b}`,
        onclick: () => this.load(m.pair, m.match_id) },
        el("td", {}, m.match_id),
        el("td", { class: "left" }, `${shortName(m.pair_a)} v ${shortName(m.pair_b)}`),
        el("td", { class: "left" }, twin(m.games[0])), el("td", { class: "left" }, twin(m.games[1])),
        el("td", { class: m.split ? "win" : "" }, signed(m.margin) + (m.split ? " split" : "")),
        el("td", {}, m.max_bid), el("td", {}, m.big_bids)));
    }
    table.dataset.sort = q.get("sort"); // what the rows shown are sorted by
    this.offset += data.matches.length;
    document.getElementById("w-more").hidden = this.offset >= data.total;
  },

  async load(index, matchId) {
    this.stop();
    this.showReplay();
    document.getElementById("r-title").textContent = `Loading match ${matchId}…`;
    this.match = await api(`/api/watch/match?pair=${index}&match=${matchId}`);
    this.hand = 0;
    this.step = 0;
    if (window.Review) Review.attach({ pair: index, match: matchId });
    this.render();
  },

  backToList() {
    this.stop();
    if (window.Review) Review.attach(null);
    document.getElementById("replay").hidden = true;
    document.getElementById("watch-record").hidden = false;
    document.getElementById("watch-list").hidden = !this.summary;
    document.getElementById("watch-ladder").hidden = !this.ladder;
    document.getElementById("watch-none").hidden = !!this.summary;
  },

  // -- the timeline ------------------------------------------------------------------------------
  twins() {
    return this.match.twins;
  },

  numHands() {
    return Math.max(...this.twins().map((g) => (g ? g.hands.length : 0)));
  },

  /** Steps of a hand: the deal, each call, each card, then the result; a hand not replayed
   * has the deal (bids shown) and the result. */
  stepsOf(hand) {
    if (!hand) return 1;
    if (!hand.replayed) return 2;
    const result = hand.finished === false ? 0 : 1; // a record may stop inside a hand
    return 1 + hand.calls.length + hand.plays.length + result;
  },

  /** Steps of the current hand across both twins, and each twin's own step now. */
  layout() {
    const hands = this.twins().map((g) => (g ? g.hands[this.hand] : null));
    const steps = hands.map((h) => this.stepsOf(h));
    const sequence = hands.length === 2 && document.getElementById("r-layout").value === "sequence";
    if (sequence) {
      const total = steps[0] + steps[1];
      const own = [Math.min(this.step, steps[0] - 1), Math.max(0, this.step - steps[0])];
      return { total, own, active: this.step < steps[0] ? 0 : 1, hands };
    }
    const total = Math.max(...steps);
    return { total, own: steps.map((n) => Math.min(this.step, n - 1)), active: null, hands };
  },

  move(delta) {
    const { total } = this.layout();
    let step = this.step + delta;
    if (step >= total) {
      if (this.hand + 1 >= this.numHands()) {
        this.stop();
        return false;
      }
      this.hand += 1;
      step = 0;
    } else if (step < 0) {
      if (this.hand === 0) return false;
      this.hand -= 1;
      step = this.layout().total - 1;
    }
    this.step = step;
    this.render();
    return true;
  },

  jumpHand(delta) {
    const hand = this.hand + delta;
    if (hand < 0 || hand >= this.numHands()) return;
    this.hand = hand;
    this.step = 0;
    this.render();
  },

  togglePlay() {
    if (this.timer) this.stop();
    else this.play();
  },

  play() {
    const button = document.getElementById("r-play");
    button.textContent = "Pause";
    const tick = () => {
      if (!this.move(1)) return;
      this.timer = setTimeout(tick, Math.max(speedMs(), 30));
    };
    this.timer = setTimeout(tick, Math.max(speedMs(), 30));
  },

  stop() {
    clearTimeout(this.timer);
    this.timer = null;
    document.getElementById("r-play").textContent = "Play";
  },

  // -- drawing -----------------------------------------------------------------------------------
  render() {
    const m = this.match;
    const { total, own, active, hands } = this.layout();
    document.getElementById("r-title").textContent = m.record ? `Record ${m.file}`
      : `Match ${m.match_id}: ${shortName(m.pair[0])} (A) v ${shortName(m.pair[1])} (B)`;
    document.getElementById("replay").dataset.kind = m.record ? "record" : "match";
    document.querySelector("#replay .controls label").hidden = !!m.record; // no twins
    document.getElementById("r-position").textContent =
      `hand ${this.hand + 1} of ${this.numHands()} · step ${this.step + 1} of ${total}`;
    const box = document.getElementById("twins");
    box.className = `twins${active === null ? "" : " sequence"}${hands.length === 1 ? " single" : ""}`;
    box.replaceChildren(...this.twins().map((game, t) =>
      this.twinEl(game, t, hands[t], own[t], active === t)));
    document.getElementById("replay").dataset.hand = this.hand;
    document.getElementById("replay").dataset.step = this.step;
    if (window.Review) Review.decorate();
  },

  twinEl(game, t, hand, step, isActive) {
    const m = this.match;
    if (!game) {
      return el("div", { class: "twin" }, el("h3", {}, `Twin ${t + 1}`),
        el("p", {}, "This game has no finished record in the database."));
    }
    const [team0, team1] = [shortName(game.team0), shortName(game.team1)];
    const names = game.seats ? game.seats.map(shortName) : [team0, team1, team0, team1];
    const title = m.record
      ? `${game.rules} rules: ${names[0]} (S0) + ${names[2]} (S2) v ${names[1]} (S1) + ${names[3]} (S3)`
      : `Twin ${t + 1}: ${team0} (S0+S2) v ${team1} (S1+S3)`;
    const hands = `${game.num_hands} hand${game.num_hands === 1 ? "" : "s"}`;
    const result = game.winner_team < 0
      ? `${m.record ? "no winner yet" : "unfinished"} after ${hands}`
      : `${shortName(game.winner)} (team ${game.winner_team}) wins in ${hands}`;
    const status = !game.exact ? el("div", { class: "status warn" }, game.reason)
      : el("div", { class: "status ok" }, m.record
        ? "Every move of the record was replayed and checked by the engine."
        : "Replayed card by card: every hand's bids, tricks, points and scores agree with the database.");
    const parts = [el("h3", {}, title),
      el("div", { class: "hint" }, m.record ? result : `${result}; A is ${shortName(m.pair[0])}`),
      status];
    if (!hand) {
      parts.push(el("p", { class: "note" }, `The game ended after ${game.num_hands} hands ` +
        `(final scores ${game.scores.join(" / ")}).`));
    } else {
      parts.push(this.tableEl(hand, step, names));
      if (window.Review) parts.push(Review.stepEl(t, hand, step));
    }
    const rows = game.hands.map((h) => ({
      number: h.index + 1, dealer: h.dealer, required_total: h.required_total, bids: h.bids,
      tricks: h.thrown_in ? null : h.tricks, points: h.thrown_in ? null : h.points,
      scores: h.scores, note: h.finished === false ? "in progress" : h.thrown_in
        ? (h.redeal_seat !== null ? `S${h.redeal_seat} redeal` : "thrown in") : "",
    }));
    parts.push(el("div", { class: "scroll" }, sheetTable(rows, names, this.hand + 1, true)));
    return el("div", { class: `twin${isActive ? " active" : ""}`, "data-twin": t }, parts);
  },

  /** The table of `hand` at `step` (see stepsOf). */
  tableEl(hand, step, names) {
    const last = this.stepsOf(hand) - 1;
    const open = hand.finished === false; // a record that stops inside this hand
    const over = step === last && !open;
    let bids = [null, null, null, null];
    let plays = [];
    let note;
    if (!hand.replayed) {
      bids = hand.bids.map((b) => (b ? b : null));
      note = hand.problem ? `Cards not shown: ${hand.problem}` : "Cards not replayed (see above).";
    } else {
      const calls = hand.calls.slice(0, Math.min(step, hand.calls.length));
      for (const c of calls) bids[c.seat] = c.bid;
      plays = hand.plays.slice(0, Math.max(0, step - hand.calls.length));
      if (over) plays = hand.plays;
    }
    const tricks = [0, 0, 0, 0];
    const complete = Math.floor(plays.length / 4);
    for (let k = 0; k < complete; k++) tricks[hand.trick_winners[k]] += 1;
    let trick = [];
    let winner;
    if (plays.length % 4) trick = plays.slice(complete * 4);
    else if (plays.length) {
      trick = plays.slice(-4);
      winner = hand.trick_winners[complete - 1];
    }
    const scores = over ? hand.scores : hand.scores_before;
    if (over) {
      note = hand.thrown_in
        ? (hand.redeal_seat !== null ? `S${hand.redeal_seat} asked for a redeal: thrown in.`
          : `Thrown in: bids total less than ${hand.required_total}.`)
        : "Hand over: " + [0, 1, 2, 3].map((s) =>
          `S${s} bid ${hand.bids[s]} took ${hand.tricks[s]} (${signed(hand.points[s])})`).join("; ");
    } else if (hand.replayed && step === 0) {
      note = `Dealt by S${hand.dealer}; S${(hand.dealer + 1) % 4} bids first. Required total ${hand.required_total}.`;
    } else if (hand.replayed && step <= hand.calls.length) {
      const c = hand.calls[step - 1];
      note = c.bid === "redeal" ? `S${c.seat} asks for a redeal.` : `S${c.seat} bids ${c.bid}.`;
    } else if (hand.replayed) {
      const p = plays[plays.length - 1];
      note = `S${p.seat} plays ${p.card}` + (winner !== undefined ? `; S${winner} wins the trick.` : ".");
    }
    if (open && step === last) note = `${note || ""} The record stops here, inside the hand.`.trim();
    const played = new Set(plays.map((p) => p.card));
    const felt = el("div", { class: "table" });
    for (let seat = 0; seat < 4; seat++) {
      const pos = position(seat, 0);
      const cards = hand.replayed
        ? el("div", { class: "cards" }, hand.deal[seat].filter((c) => !played.has(c)).map((c) =>
          cardEl(c, "small")))
        : null;
      const bid = bids[seat];
      felt.append(el("div", { class: `seat ${["bottom", "right", "top", "left"][pos]} team${seat % 2}`,
        "data-seat": seat },
        el("div", { class: "name", title: names[seat] },
          el("span", { class: "who" }, `S${seat} ${names[seat]}`),
          seat === hand.dealer ? el("span", { class: "badge" }, "dealer") : null),
        el("div", { class: "stats" },
          el("span", {}, "score ", el("b", {}, scores[seat])),
          el("span", {}, "bid ", el("b", {}, bid === null ? "–" : bid)),
          el("span", {}, "tricks ", el("b", {}, hand.replayed ? tricks[seat]
            : over && !hand.thrown_in ? hand.tricks[seat] : "–"))),
        cards));
    }
    felt.append(el("div", { class: "trick" }, trick.map((p) =>
      cardEl(p.card, `p${position(p.seat, 0)}${p.seat === winner ? " winner" : ""}`))));
    return el("div", {}, felt, el("div", { class: "note" }, note));
  },
};

window.Watch = Watch;
