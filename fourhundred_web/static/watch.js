// Watch: the matches of the tournament database the server was started with, and replays of
// both duplicate twins, hand by hand and card by card (where the server could replay the
// cards exactly; elsewhere the recorded bids and scores, and the reason).
"use strict";

const Watch = {
  summary: null,
  offset: 0,
  match: null, // {pair, match_id, twins: [game, game]}
  hand: 0, // index of the hand shown
  step: 0, // step within the hand (see stepsOf)
  timer: null,

  async open() {
    if (this.summary) return;
    const options = await api("/api/options");
    if (!options.watch) {
      document.getElementById("watch-none").hidden = false;
      return;
    }
    this.summary = await api("/api/watch");
    this.renderSummary();
    document.getElementById("watch-list").hidden = false;
    for (const id of ["w-pair", "w-sort", "w-minbid"]) {
      document.getElementById(id).addEventListener("change", () => this.list(true));
    }
    document.getElementById("w-more").addEventListener("click", () => this.list(false));
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
    await this.list(true);
  },

  renderSummary() {
    const s = this.summary;
    const notes = Object.entries(s.replay).filter(([, why]) => why);
    document.getElementById("watch-summary").replaceChildren(
      el("h2", {}, `Tournament ${s.file}`),
      el("p", { title: s.agents.join(", ") },
        `${s.games} games of ${s.agents.map(shortName).join(", ")} · ${s.rules} rules · seed ${s.seed}`),
      notes.length
        ? el("div", { class: "status warn" }, "Not replayed card by card (bids and scores only): ",
          notes.map(([, why]) => why).join("; "))
        : el("div", { class: "status ok" }, "Every agent of this tournament can be replayed card by card."));
    const pair = document.getElementById("w-pair");
    pair.replaceChildren(el("option", { value: "" }, "all pairings"),
      ...s.pairs.map((p, i) => el("option", { value: i }, `${shortName(p[0])} v ${shortName(p[1])}`)));
    const sort = document.getElementById("w-sort");
    sort.replaceChildren(...Object.entries(s.sorts).map(([key, text]) =>
      el("option", { value: key }, text)));
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
    document.getElementById("watch-list").hidden = true;
    document.getElementById("replay").hidden = false;
    document.getElementById("r-title").textContent = `Loading match ${matchId}…`;
    this.match = await api(`/api/watch/match?pair=${index}&match=${matchId}`);
    this.hand = 0;
    this.step = 0;
    this.render();
  },

  backToList() {
    this.stop();
    document.getElementById("replay").hidden = true;
    document.getElementById("watch-list").hidden = false;
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
    return 1 + hand.calls.length + hand.plays.length + 1;
  },

  /** Steps of the current hand across both twins, and each twin's own step now. */
  layout() {
    const hands = this.twins().map((g) => (g ? g.hands[this.hand] : null));
    const steps = hands.map((h) => this.stepsOf(h));
    const sequence = document.getElementById("r-layout").value === "sequence";
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
    document.getElementById("r-title").textContent =
      `Match ${m.match_id}: ${shortName(m.pair[0])} (A) v ${shortName(m.pair[1])} (B)`;
    document.getElementById("r-position").textContent =
      `hand ${this.hand + 1} of ${this.numHands()} · step ${this.step + 1} of ${total}`;
    const box = document.getElementById("twins");
    box.className = `twins${active === null ? "" : " sequence"}`;
    box.replaceChildren(...this.twins().map((game, t) =>
      this.twinEl(game, t, hands[t], own[t], active === t)));
    document.getElementById("replay").dataset.hand = this.hand;
    document.getElementById("replay").dataset.step = this.step;
  },

  twinEl(game, t, hand, step, isActive) {
    const m = this.match;
    if (!game) {
      return el("div", { class: "twin" }, el("h3", {}, `Twin ${t + 1}`),
        el("p", {}, "This game has no finished record in the database."));
    }
    const a = m.pair[0];
    const [team0, team1] = [shortName(game.team0), shortName(game.team1)];
    const names = [team0, team1, team0, team1];
    const title = `Twin ${t + 1}: ${team0} (S0+S2) v ${team1} (S1+S3)`;
    const result = game.winner_team < 0 ? `unfinished after ${game.num_hands} hands`
      : `${shortName(game.winner)} (team ${game.winner_team}) wins in ${game.num_hands} hands`;
    const status = game.exact
      ? el("div", { class: "status ok" },
        "Replayed card by card: every hand's bids, tricks, points and scores agree with the database.")
      : el("div", { class: "status warn" }, game.reason);
    const parts = [el("h3", {}, title), el("div", { class: "hint" }, `${result}; A is ${shortName(a)}`),
      status];
    if (!hand) {
      parts.push(el("p", { class: "note" }, `The game ended after ${game.num_hands} hands ` +
        `(final scores ${game.scores.join(" / ")}).`));
    } else {
      parts.push(this.tableEl(hand, step, names));
    }
    const rows = game.hands.map((h) => ({
      number: h.index + 1, dealer: h.dealer, required_total: h.required_total, bids: h.bids,
      tricks: h.thrown_in ? null : h.tricks, points: h.thrown_in ? null : h.points,
      scores: h.scores, note: h.thrown_in
        ? (h.redeal_seat !== null ? `S${h.redeal_seat} redeal` : "thrown in") : "",
    }));
    parts.push(el("div", { class: "scroll" }, sheetTable(rows, names, this.hand + 1, true)));
    return el("div", { class: `twin${isActive ? " active" : ""}`, "data-twin": t }, parts);
  },

  /** The table of `hand` at `step` (see stepsOf). */
  tableEl(hand, step, names) {
    const last = this.stepsOf(hand) - 1;
    const over = step === last;
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
