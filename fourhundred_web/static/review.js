// Engine analysis on the page (fourhundred_web/reviews.py, hints.py): the review of the game Watch shows
// (each decision's action taken, the best and the value lost; mistakes marked; what each seat
// lost per hand), a Play table's finished hands reviewed in the same viewer, and the hints a
// person may switch on at their turn (the bot's values for their legal cards and bids).
// The server values everything; this page only asks, polls and shows.
"use strict";

const POLL_MS = 500;

/** A value as shown: a match-win chance as a percentage, points as they are. */
function valueText(x, unit) {
  if (x === null || x === undefined) return "–";
  return unit === "points" ? x.toFixed(2) : `${(100 * x).toFixed(1)}%`;
}

/** A loss (or its error) as shown: percentage points of match-win chance, or points. */
function lossText(x, unit) {
  return unit === "points" ? `${x.toFixed(2)} points` : `${(100 * x).toFixed(1)} pp`;
}

const Review = {
  source: null, // what the server reviews: {text} | {served} | {pair, match} | {table, token}
  twin: 0, // the twin reviewed (a tournament match has two)
  job: null, // the server's answer about the job: status, done, total, agent, unit, ...
  decisions: [], // valued so far, in the game's order (DecisionAnalysis.to_dict())
  timer: null,
  back: false, // show "Back to the table" (a Play table's review)

  // -- Watch -------------------------------------------------------------------------------------
  /** Watch shows another game (`source`: how the server can have it; null: none): the review
   * of the one before is stopped and forgotten. */
  attach(source, back = false) {
    this.forget();
    this.source = source;
    this.back = back;
    this.twin = 0;
    this.render();
  },

  forget() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.job && (this.job.status === "queued" || this.job.status === "running")) {
      fetch(`/api/review/${this.job.job}`, { method: "DELETE" }).catch(() => {}); // best effort
    }
    this.job = null;
    this.decisions = [];
  },

  /** Ask for the review of the hand shown (`scope` "hand") or of the whole game ("game"). */
  async start(scope) {
    if (!this.source) return;
    const { token, ...source } = this.source;
    const body = { ...source };
    if (source.pair !== undefined) body.twin = this.twin;
    if (scope === "hand") body.hand = Watch.hand + 1;
    let data;
    try {
      data = await api("/api/review", { method: "POST", body,
        headers: token ? { "X-Table-Token": token } : {} });
    } catch (e) {
      return; // the error line says why; the review shown stays
    }
    this.forget(); // the review before, if another
    this.accept(data);
  },

  /** Take the server's answer about the job (its decisions from the ones already held). */
  accept(data) {
    this.job = data;
    this.decisions.push(...data.decisions);
    if (data.status === "queued" || data.status === "running") {
      this.timer = setTimeout(() => this.poll(), POLL_MS);
    }
    if (window.Watch && Watch.match) Watch.render();
    else this.render();
  },

  async poll() {
    const job = this.job;
    if (!job) return;
    let data;
    try {
      const response = await fetch(`/api/review/${job.job}?since=${this.decisions.length}`);
      data = await response.json();
      if (!response.ok) throw new Error(data.error || `${response.status}`);
    } catch (e) {
      if (this.job === job) {
        this.job = { ...job, status: "failed", error: e.message };
        this.render();
      }
      return;
    }
    if (this.job !== job) return; // another review was asked for meanwhile
    this.accept(data);
  },

  stop() {
    if (!this.job) return;
    const id = this.job.job;
    clearTimeout(this.timer);
    this.timer = null;
    fetch(`/api/review/${id}`, { method: "DELETE" }).catch(() => {});
    this.job = { ...this.job, status: "cancelled", error: "stopped" };
    this.render();
  },

  unit() {
    return this.job ? this.job.unit : "match-win";
  },

  decision(hand, move) {
    return this.decisions.find((d) => d.hand === hand && d.move === move) || null;
  },

  /** Per seat, as `fourhundred analyse` has it: hands and decisions analysed, value lost. */
  summary() {
    return [0, 1, 2, 3].map((seat) => {
      const mine = this.decisions.filter((d) => d.seat === seat);
      const hands = new Set(mine.map((d) => d.hand)).size;
      const lost = mine.reduce((sum, d) => sum + d.lost, 0);
      return { seat, hands, decisions: mine.length, lost, perHand: hands ? lost / hands : 0,
        mistakes: mine.filter((d) => d.lost > 0).length };
    });
  },

  mistakes(top = 5) {
    return this.decisions.filter((d) => d.lost > 0).sort((a, b) => b.lost - a.lost).slice(0, top);
  },

  /** Show decision `d` in the viewer: its hand, the step after it. */
  jump(d) {
    Watch.stop();
    Watch.hand = d.hand - 1;
    Watch.step = d.move;
    if (document.getElementById("r-layout").value === "sequence" && this.twin === 1) {
      Watch.step += Watch.stepsOf(Watch.twins()[0] && Watch.twins()[0].hands[Watch.hand]);
    }
    Watch.render();
  },

  /** The review's line under twin `t`'s table at `step` of `hand` (null: nothing to say). */
  stepEl(t, hand, step) {
    if (!this.job || t !== this.twin || !hand.replayed || step < 1) return null;
    const moves = hand.calls.length + hand.plays.length;
    if (step > moves) return null;
    const d = this.decision(hand.index + 1, step);
    if (!d) {
      const covered = this.job.hand === null || this.job.hand === hand.index + 1;
      return el("div", { class: "review-step pending" }, covered
        ? `Review: not valued yet (${this.job.done} of ${this.job.total} decisions)`
        : "Review: this hand is not in the review (review the game, or this hand)");
    }
    const unit = this.unit();
    const value = (a) => (d.actions.find((x) => x.action === a) || {}).value;
    if (d.forced) {
      return el("div", { class: "review-step forced", "data-move": d.move },
        `Review: S${d.seat} ${d.taken}: forced (its only legal action)`);
    }
    const kind = d.lost > 0 ? "mistake" : d.taken === d.best ? "best" : "close";
    const verdict = d.taken === d.best ? "the best"
      : d.lost > 0 ? `lost ${lossText(d.loss, unit)} ± ${lossText(d.loss_stderr, unit)}`
        : `${lossText(d.loss, unit)} ± ${lossText(d.loss_stderr, unit)} below the best: within the noise`;
    const ranked = [...d.actions].filter((a) => a.value !== null)
      .sort((a, b) => b.value - a.value).slice(0, 8);
    return el("div", { class: `review-step ${kind}`, "data-move": d.move },
      el("div", {}, `Review: S${d.seat} ${d.phase === "bid" ? "bid" : "played"} `,
        el("b", {}, d.taken), ` (${valueText(value(d.taken), unit)})` +
        (d.taken === d.best ? ": " : `; best ${d.best} (${valueText(value(d.best), unit)}): `),
        el("span", { class: "verdict" }, verdict)),
      el("div", { class: "values" }, ranked.map((a) => el("span", {
        class: `${a.action === d.best ? "best" : ""}${a.action === d.taken ? " taken" : ""}`.trim(),
        title: `± ${valueText(a.stderr, unit)}` }, `${a.action} ${valueText(a.value, unit)}`))));
  },

  /** Mark the reviewed twin's score sheet: the hands with mistakes. */
  decorate() {
    this.render();
    if (!this.job) return;
    const twin = document.querySelector(`#twins .twin[data-twin="${this.twin}"]`);
    if (!twin) return;
    const rows = twin.querySelectorAll("table.sheet tbody tr");
    rows.forEach((row, i) => {
      const mine = this.decisions.filter((d) => d.hand === i + 1);
      if (!mine.length) return;
      const lost = mine.reduce((sum, d) => sum + d.lost, 0);
      const count = mine.filter((d) => d.lost > 0).length;
      row.classList.add("reviewed");
      if (count) row.classList.add("review-mistake");
      row.title = `review: ${count} mistake${count === 1 ? "" : "s"}, ` +
        `${lossText(lost, this.unit())} lost in ${mine.length} decisions`;
    });
  },

  /** The review panel under the replay: its buttons, progress, per-seat summary, largest
   * mistakes and the moves of the hand shown. */
  render() {
    const box = document.getElementById("review");
    if (!box) return;
    box.hidden = !this.source || document.getElementById("replay").hidden;
    if (box.hidden) return;
    const game = Watch.match && Watch.twins()[this.twin];
    const busy = this.job && (this.job.status === "queued" || this.job.status === "running");
    const parts = [];
    const controls = el("div", { class: "review-controls" }, el("b", {}, "Review"));
    if (this.source.pair !== undefined) {
      const select = el("select", { id: "review-twin", disabled: busy,
        onchange: (e) => { this.forget(); this.twin = Number(e.target.value); Watch.render(); } },
      Watch.twins().map((g, t) => el("option", { value: t, selected: t === this.twin },
        `twin ${t + 1}`)));
      controls.append(el("label", {}, "game ", select));
    }
    controls.append(
      el("button", { id: "review-hand", disabled: busy, onclick: () => this.start("hand"),
        title: "value every decision of the hand shown" }, "Review this hand"),
      el("button", { id: "review-game", disabled: busy, onclick: () => this.start("game"),
        title: "value every decision of the game (minutes for a long match)" }, "Review the game"));
    if (busy) controls.append(el("button", { id: "review-stop", onclick: () => this.stop() }, "Stop"));
    if (this.back) {
      controls.append(el("button", { id: "review-back", onclick: () => { location.hash = "#play"; } },
        "Back to the table"));
    }
    parts.push(controls);
    parts.push(this.statusEl(game));
    if (this.decisions.length) {
      parts.push(this.summaryEl(game), this.mistakesEl(), this.movesEl());
    }
    box.replaceChildren(...parts);
    box.dataset.status = this.job ? this.job.status : "none";
  },

  statusEl(game) {
    const j = this.job;
    if (!j) {
      return el("p", { class: "hint" }, "The engine values every legal action of each " +
        "decision from the deciding seat's view only, and shows what the action taken lost " +
        "against the best (in points of match-win chance).");
    }
    const what = `${j.hand === null ? "the game" : `hand ${j.hand}`} by ${j.agent} (seed ${j.seed})`;
    let text;
    if (j.status === "queued") text = `Waiting: ${j.ahead} review${j.ahead === 1 ? "" : "s"} ahead of ${what}.`;
    else if (j.status === "running") text = `Analysing ${what}: ${j.done} of ${j.total} decisions…`;
    else if (j.status === "done") text = `Reviewed ${what}: ${j.total} decisions; a loss within ${j.noise} standard error counts as none.`;
    else text = `Review ${j.status}: ${j.error || ""}`;
    const bar = el("progress", { max: j.total || 1, value: j.done });
    return el("div", { class: `review-status ${j.status}`, id: "review-status" },
      j.status === "running" || j.status === "queued" ? bar : null, el("span", {}, text));
  },

  summaryEl(game) {
    const unit = this.unit();
    const names = game && game.seats ? game.seats.map(shortName)
      : game ? [game.team0, game.team1, game.team0, game.team1].map(shortName) : ["", "", "", ""];
    const scale = (x) => (unit === "points" ? x.toFixed(2) : (100 * x).toFixed(2));
    return el("table", { class: "list review-summary" },
      el("caption", {}, `value lost, in ${unit === "points" ? "points" : "percentage points of match-win chance"}`),
      el("thead", {}, el("tr", {}, el("th", {}, "seat"), el("th", { class: "left" }, "player"),
        el("th", {}, "hands"), el("th", {}, "decisions"), el("th", {}, "lost"),
        el("th", {}, "lost/hand"), el("th", {}, "mistakes"))),
      el("tbody", {}, this.summary().map((s) => el("tr", { "data-seat": s.seat },
        el("td", {}, `S${s.seat}`), el("td", { class: "left" }, names[s.seat]),
        el("td", {}, s.hands), el("td", {}, s.decisions), el("td", {}, scale(s.lost)),
        el("td", {}, scale(s.perHand)), el("td", {}, s.mistakes)))));
  },

  mistakesEl() {
    const unit = this.unit();
    const worst = this.mistakes(5);
    const value = (d, a) => (d.actions.find((x) => x.action === a) || {}).value;
    return el("div", { class: "review-mistakes" },
      el("h4", {}, worst.length ? "Largest mistakes (click one to see it)" : "No mistake found"),
      worst.length ? el("table", { class: "list" },
        el("thead", {}, el("tr", {}, el("th", {}, "hand"), el("th", {}, "move"), el("th", {}, "seat"),
          el("th", {}, "taken"), el("th", {}, "best"), el("th", {}, "loss ± error"))),
        el("tbody", {}, worst.map((d) => el("tr", { class: "mistake", onclick: () => this.jump(d),
          "data-hand": d.hand, "data-move": d.move },
        el("td", {}, d.hand), el("td", {}, d.move), el("td", {}, `S${d.seat}`),
        el("td", {}, `${d.taken} ${valueText(value(d, d.taken), unit)}`),
        el("td", {}, `${d.best} ${valueText(value(d, d.best), unit)}`),
        el("td", {}, `${lossText(d.loss, unit)} ± ${lossText(d.loss_stderr, unit)}`))))) : null);
  },

  /** The decisions of the hand shown, in order: mistakes marked, the current one outlined. */
  movesEl() {
    const hand = Watch.hand + 1;
    const mine = this.decisions.filter((d) => d.hand === hand);
    if (!mine.length) return el("p", { class: "hint" }, `Hand ${hand} is not reviewed.`);
    const { own } = Watch.layout();
    const step = own[this.twin];
    return el("div", { class: "review-moves" }, el("h4", {}, `Hand ${hand}, move by move`),
      mine.map((d) => el("span", {
        class: `move${d.lost > 0 ? " mistake" : ""}${d.forced ? " forced" : ""}` +
          `${d.move === step ? " current" : ""}`,
        "data-move": d.move, onclick: () => this.jump(d),
        title: d.forced ? "forced" : `best ${d.best}; loss ${lossText(d.loss, this.unit())}` },
      `S${d.seat} ${d.taken}`)));
  },

  /** Review a Play table's finished hands (`hand`: one of them; null: all) in Watch's viewer. */
  async fromTable(play, hand) {
    location.hash = "#watch";
    await Watch.open();
    const headers = { "X-Table-Token": play.token };
    const body = { table: play.tableId };
    if (hand !== null) body.hand = hand;
    let data;
    try {
      data = await api("/api/review", { method: "POST", body, headers });
    } catch (e) {
      return; // the error line says why
    }
    Watch.showRecord({ game: data.game }, { table: play.tableId, token: play.token }, true);
    if (hand !== null) {
      Watch.hand = hand - 1;
      Watch.step = 0;
    }
    this.accept(data);
  },

  // -- Play: hints and the Review buttons --------------------------------------------------------
  hintToken: 0, // the latest hint asked for: an answer to an older one is dropped

  /** After Play draws its table: the Review buttons once a hand is over, and the hint at the
   * person's turn when hints are on. */
  afterPlay(play) {
    const s = play.state;
    const box = document.getElementById("handover");
    if (s && !box.hidden && s.last_hand) {
      box.append(el("div", { class: "review-buttons" },
        el("button", { id: "review-last-hand", onclick: () => this.fromTable(play, s.last_hand.number),
          title: "the engine's values of every decision of the hand, in Watch's viewer" },
        `Review hand ${s.last_hand.number}`),
        s.sheet.length > 1 ? el("button", { id: "review-match", onclick: () => this.fromTable(play, null),
          title: "every finished hand (minutes for a long match)" }, "Review the match") : null));
    }
    this.hint(play);
  },

  async hint(play) {
    const line = document.getElementById("hint-line");
    const s = play.state;
    const on = document.getElementById("hints").checked;
    const token = ++this.hintToken;
    if (!on || !s || !s.your_turn) {
      line.textContent = on && s && (s.phase === "bid" || s.phase === "play") ? "Hints at your turn." : "";
      return;
    }
    line.textContent = "Hint: thinking…";
    line.className = "hint-line waiting";
    const q = new URLSearchParams({ moves: s.moves, seat: s.seat });
    let data;
    try {
      const response = await fetch(`/api/tables/${play.tableId}/hint?${q}`, { headers: play.headers() });
      data = await response.json();
      if (!response.ok) throw new Error(data.error || `${response.status}`);
    } catch (e) {
      if (token === this.hintToken) {
        line.textContent = `No hint: ${e.message}`;
        line.className = "hint-line";
      }
      return;
    }
    if (token !== this.hintToken || play.state !== s) return; // the table moved on meanwhile
    this.showHint(data);
  },

  showHint(data) {
    const line = document.getElementById("hint-line");
    line.className = "hint-line";
    const unit = data.unit;
    for (const a of data.actions) {
      const target = data.phase === "bid"
        ? document.querySelector(`#bidpicker button[data-bid="${a.action}"]`)
        : document.querySelector(`#hand .card[data-card="${a.action}"]`);
      if (!target) continue;
      target.classList.add("hinted");
      if (a.action === data.best) target.classList.add("hint-best");
      target.append(el("span", { class: "hint-value", title: a.stderr === null ? ""
        : `± ${valueText(a.stderr, unit)}` }, a.value === null ? "only" : valueText(a.value, unit)));
    }
    const best = data.actions.find((a) => a.action === data.best);
    line.textContent = data.actions.length === 1 ? `Hint: ${data.best} is your only legal action.`
      : `Hint: ${data.best} is best (${valueText(best.value, unit)} to win the match), by ` +
        `${data.agent} over ${data.worlds} worlds in ${data.seconds.toFixed(1)} s.`;
  },
};

window.Review = Review;
window.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("hints");
  // Play is play.js's global (a const: not a property of window)
  if (box) box.addEventListener("change", () => { if (typeof Play !== "undefined" && Play.state) Review.hint(Play); });
});
