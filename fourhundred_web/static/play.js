// Play: a match against bots, alone or with friends (people.js: their seats, links and
// polling). The server holds the table; this page shows the person's view, animates the
// moves the other seats made (the state's frames), and sends the person's bids and cards.
"use strict";

const Play = {
  tableId: null,
  token: null, // the table's token: the server answers only the page that holds it
  state: null,
  lastTrick: null, // the trick completed by the latest frames, shown until the next card

  async init() {
    const options = await api("/api/options");
    for (const id of ["bot-partner", "bot-right", "bot-left"]) {
      const select = document.getElementById(id);
      for (const agent of options.agents) {
        select.append(el("option", { value: agent.spec, title: agent.description,
          selected: agent.spec === options.default_bot },
        agent.note ? `${agent.label} — ${agent.note}` : agent.label));
      }
    }
    const rules = document.getElementById("rules");
    for (const preset of options.presets) {
      rules.append(el("option", { value: preset, selected: preset === "wiki" }, preset));
    }
    document.getElementById("start").addEventListener("click", () => this.start());
    document.getElementById("new-game").addEventListener("click", () => this.newGame());
    document.getElementById("download").addEventListener("click", () => this.download());
    People.init(); // after the menus are filled: adds "a person (invite)", opens a join link
  },

  /** Save the record of the finished hands (the server's text file) through the browser. */
  async download() {
    const response = await fetch(`/api/tables/${this.tableId}/record`, { headers: this.headers() });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      showError(data.error || `the record could not be made (${response.status})`);
      return;
    }
    showError(null);
    const disposition = response.headers.get("Content-Disposition") || "";
    const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || "400-match.400";
    const link = el("a", { href: URL.createObjectURL(await response.blob()), download: name });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
  },

  /** Close the table shown (the server keeps a few per client) and show the setup. A
   * person invited to the table leaves it open for the others. */
  async newGame() {
    const close = this.tableId && People.mayClose();
    People.leave(true);
    if (close) {
      const closing = fetch(`/api/tables/${this.tableId}`,
        { method: "DELETE", headers: this.headers() });
      await closing.catch(() => {}); // already gone: nothing to close
    }
    this.tableId = null;
    this.token = null;
    this.showSetup();
  },

  headers() {
    return { "X-Table-Token": this.token };
  },

  showSetup() {
    document.getElementById("setup").hidden = false;
    document.getElementById("game").hidden = true;
  },

  async start() {
    const seed = document.getElementById("seed").value;
    const body = {
      seat: Number(document.getElementById("seat").value),
      partner: document.getElementById("bot-partner").value,
      right: document.getElementById("bot-right").value,
      left: document.getElementById("bot-left").value,
      rules: document.getElementById("rules").value,
    };
    if (seed !== "") body.seed = Number(seed);
    People.extendBody(body);
    this.setBusy(true); // busy from the click on: the page shows no table until it has one
    let data;
    try {
      data = await api("/api/tables", { method: "POST", body });
    } catch (e) {
      this.setBusy(false);
      return;
    }
    this.tableId = data.id;
    this.token = data.token;
    People.opened(data);
    document.getElementById("setup").hidden = true;
    document.getElementById("game").hidden = false;
    document.getElementById("log").textContent = data.seed === undefined
      ? "secret deal (give a seed for a table you can play again)" : `seed ${data.seed}`;
    await this.show(data.state);
  },

  async send(path, body) {
    this.setBusy(true);
    try {
      const data = await api(`/api/tables/${this.tableId}/${path}`,
        { method: "POST", body, headers: this.headers() });
      await this.show(data.state);
    } catch (e) {
      this.setBusy(false); // the error line says why; the table is as it was
    }
  },

  setBusy(busy) {
    document.getElementById("play").dataset.busy = busy ? "1" : "0";
  },

  /** Animate the frames of `state`, then show it and let the person act. */
  async show(state) {
    this.setBusy(true);
    const pause = speedMs();
    this.state = { ...state, legal: [], your_turn: false };
    for (const frame of state.frames) {
      this.renderFrame(state, frame);
      if (pause > 0) await sleep(frame.winner !== undefined ? pause * 1.6 : pause);
    }
    this.state = state;
    this.render();
    this.setBusy(false);
    People.afterShow(state); // the invites' status; poll while another person is to act
  },

  renderFrame(state, frame) {
    const view = { ...state, bids: frame.bids, tricks_won: frame.tricks_won, legal: [],
      your_turn: false, trick: frame.trick || [], to_play: null };
    this.lastTrick = frame.winner !== undefined ? { cards: frame.trick, winner: frame.winner } : null;
    this.renderTable(view, frame.winner);
    this.renderHand(view);
    document.getElementById("bidpicker").hidden = true;
    document.getElementById("prompt").textContent = "";
    document.getElementById("log").textContent = this.describe(state, frame);
  },

  describe(state, frame) {
    const who = frame.seat === state.seat ? "You" : `S${frame.seat} (${state.names[frame.seat]})`;
    let text;
    if (frame.kind === "redeal") text = `${who} asked for a redeal`;
    else if (frame.kind === "bid") text = `${who} bid ${frame.action}`;
    else text = `${who} played ${frame.action.slice(0, -1)}${SUIT_SYMBOL[frame.action.slice(-1)]}`;
    if (frame.winner !== undefined) text += ` — S${frame.winner} wins the trick`;
    if (frame.forfeit) text += ` (forfeit: ${frame.forfeit})`;
    return text;
  },

  render() {
    const s = this.state;
    let trick = s.trick;
    let winner;
    if (trick.length === 0 && this.lastTrick && s.phase !== "bid") {
      trick = this.lastTrick.cards;
      winner = this.lastTrick.winner;
    }
    this.renderTable({ ...s, trick }, winner, trick !== s.trick);
    this.renderHand(s);
    this.renderPrompt(s);
    this.renderHandOver(s);
    const sheet = document.getElementById("sheet");
    const narrow = window.matchMedia("(max-width: 720px)").matches; // one cell per seat
    sheet.replaceChildren(s.sheet.length ? sheetTable(s.sheet, s.names, null, narrow)
      : "No hand finished yet.");
    document.getElementById("play").dataset.phase = s.phase;
    document.getElementById("download").disabled = s.sheet.length === 0; // finished hands only
    if (window.Review) Review.afterPlay(this); // review.js: the Review buttons, the hint
  },

  renderTable(s, winner, done = false) {
    const info = document.getElementById("info");
    const total = s.bids.reduce((a, b) => a + (b || 0), 0);
    info.replaceChildren(
      el("span", {}, "Hand ", el("b", {}, s.hand_number)),
      el("span", {}, "dealer ", el("b", {}, `S${s.dealer}`)),
      el("span", {}, "required total ", el("b", { id: "required-total" }, s.required_total)),
      el("span", {}, "bids so far ", el("b", {}, total)),
      el("span", {}, "target ", el("b", {}, s.target)),
      el("span", {}, `${s.rules} rules · hearts are trump`));
    for (let seat = 0; seat < 4; seat++) {
      const pos = position(seat, s.seat);
      const box = document.querySelector(`#felt .seat[data-pos="${pos}"]`);
      const bid = s.bids[seat];
      const you = seat === s.seat;
      const role = pos === 2 ? "partner" : pos === 1 ? "right" : "left";
      box.className = `seat ${["bottom", "right", "top", "left"][pos]} team${seat % 2}` +
        (s.to_play === seat ? " turn" : "");
      box.dataset.seat = seat;
      const name = you ? "You" : s.names[seat];
      box.replaceChildren(
        el("div", { class: "name", title: name }, el("span", { class: "who" }, `S${seat} ${name}`)),
        el("div", { class: "role" }, you ? "your seat" : role,
          seat === s.dealer ? el("span", { class: "badge" }, "dealer") : null),
        el("div", { class: "stats" },
          el("span", {}, "score ", el("b", { class: "score" }, s.scores[seat])),
          el("span", {}, "bid ", el("b", { class: "bid" }, bid === null ? "–" : bid)),
          el("span", {}, "tricks ", el("b", { class: "tricks" }, s.tricks_won[seat])),
          s.phase === "bid" && bid === null ? el("span", {}, `min ${s.min_bids[seat]}`) : null));
    }
    const trickBox = document.getElementById("trick");
    trickBox.className = `trick${done ? " done" : ""}`;
    trickBox.replaceChildren(...s.trick.map((t) => cardEl(t.card,
      `p${position(t.seat, s.seat)}${t.seat === winner ? " winner" : ""}`)));
    if (s.phase === "bid") trickBox.append(el("div", { class: "label" }, "bidding"));
  },

  renderHand(s) {
    const legal = new Set(s.your_turn && s.phase === "play" ? s.legal : []);
    const hand = document.getElementById("hand");
    hand.replaceChildren(...s.hand.filter((g) => g.cards.length).map((g) => el("div",
      { class: "group" }, g.cards.map((c) => {
        const node = cardEl(c, legal.has(c) ? "legal" : s.phase === "play" ? "dim" : "");
        if (legal.has(c)) node.addEventListener("click", () => this.act(c));
        return node;
      }))));
  },

  renderPrompt(s) {
    const prompt = document.getElementById("prompt");
    const picker = document.getElementById("bidpicker");
    picker.hidden = !(s.your_turn && s.phase === "bid");
    if (s.phase === "match_over") {
      const mine = s.seat % 2;
      prompt.textContent = s.winner === mine ? "Your team wins the match!" : "The other team wins the match.";
    } else if (s.stopped) {
      prompt.textContent = "The match was stopped unfinished (200 hands).";
    } else if (s.phase === "hand_over") {
      prompt.textContent = "";
    } else if (s.your_turn && s.phase === "play") {
      prompt.textContent = s.trick.length ? "Your card (follow suit if you can)" : "Your lead";
    } else if (s.your_turn) {
      prompt.textContent = "Your bid";
    }
    if (!picker.hidden) {
      const total = s.bids.reduce((a, b) => a + (b || 0), 0);
      const facts = el("div", { class: "facts" },
        `Your minimum bid is ${s.min_bids[s.seat]}; the four bids must total at least ` +
        `${s.required_total} (so far ${total}).`);
      const buttons = s.legal.filter((a) => a !== "redeal").map((b) =>
        el("button", { "data-bid": b, onclick: () => this.act(b) }, b));
      const redeal = s.redeal_allowed
        ? el("button", { class: "redeal", "data-bid": "redeal", onclick: () => this.act("redeal"),
          title: "your hand has no A, K, Q or J" }, "Ask for a redeal (no picture card)")
        : null;
      picker.replaceChildren(facts, ...buttons, ...(redeal ? [redeal] : []));
    }
    People.prompt(s, prompt);
  },

  renderHandOver(s) {
    const box = document.getElementById("handover");
    box.hidden = !(s.phase === "hand_over" || s.phase === "match_over");
    if (box.hidden) return;
    const h = s.last_hand;
    const lines = [];
    if (h.thrown_in) {
      lines.push(el("p", {}, `Hand ${h.number} thrown in: ${h.note}.`));
    } else {
      const rows = [0, 1, 2, 3].map((seat) => el("tr", {},
        el("td", { class: "left" }, `S${seat} ${seat === s.seat ? "You" : s.names[seat]}`),
        el("td", {}, h.bids[seat]), el("td", {}, h.tricks[seat]),
        el("td", { class: h.points[seat] >= 0 ? "plus" : "minus" }, signed(h.points[seat])),
        el("td", {}, h.scores[seat])));
      lines.push(el("table", { class: "sheet" }, el("thead", {}, el("tr", {}, el("th", {}, "player"),
        el("th", {}, "bid"), el("th", {}, "took"), el("th", {}, "points"), el("th", {}, "score"))),
        el("tbody", {}, rows)));
      if (h.note) lines.push(el("p", { class: "hint" }, h.note));
    }
    const next = s.phase === "hand_over" && !s.stopped
      ? el("button", { id: "next-hand", class: "primary", onclick: () => this.send("deal", {}) },
        "Next hand")
      : null;
    const title = s.phase === "match_over" ? `Hand ${h.number} over: the match is over`
      : `Hand ${h.number} over`;
    box.replaceChildren(el("h2", {}, title),
      ...lines, ...(next ? [next] : []));
  },

  act(action) {
    if (!this.state || !this.state.your_turn) return;
    this.send("act", { action, seat: this.state.seat, moves: this.state.moves });
  },
};

window.addEventListener("DOMContentLoaded", () => Play.init());
