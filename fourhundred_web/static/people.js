// Play with friends: seats for people invited by a link, the links for the table's maker,
// the join page for a person who opens one, and polling while another person is to act.
// Each person's page holds their own seat's token only; the server answers it with that
// seat's view alone. Hooks called by play.js: init, extendBody, opened, afterShow, prompt,
// mayClose, leave.
"use strict";

const People = {
  PERSON: "person", // the seat choice the server reads as "a person invited by a link"
  POLL_MS: 1000,
  QUIET_MS: 30 * 60 * 1000, // a table unchanged this long stops being polled (a click resumes)
  maker: true, // this page made the table shown (it alone may close it)
  invites: [], // the maker's links: [{seat, link}]
  timer: null,
  quietSince: 0,

  /** Add "a person (invite)" to each seat's menu; open a join link in the address. */
  init() {
    for (const id of ["bot-partner", "bot-right", "bot-left"]) {
      document.getElementById(id).prepend(el("option", { value: this.PERSON,
        title: "a friend who joins by a link you send them" }, "a person (invite)"));
    }
    document.getElementById("join-take").addEventListener("click", () => this.take());
    window.addEventListener("hashchange", () => this.fromAddress());
    this.fromAddress();
  },

  /** The table and token of a join link in the address (#join=TABLE.TOKEN), or null. */
  joinLink() {
    const m = location.hash.match(/^#join=([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/);
    return m ? { table: m[1], token: m[2] } : null;
  },

  fromAddress() {
    const link = this.joinLink();
    if (!link || link.table === Play.tableId) return;
    this.leave(false);
    Play.tableId = null;
    document.getElementById("setup").hidden = true;
    document.getElementById("game").hidden = true;
    document.getElementById("join-panel").hidden = false;
  },

  /** Take the seat of the join link: the server marks it joined and answers its view. */
  async take() {
    const link = this.joinLink();
    if (!link) return;
    const name = document.getElementById("join-name").value.trim();
    Play.setBusy(true);
    let data;
    try {
      data = await api(`/api/tables/${link.table}/join`, { method: "POST",
        body: name ? { name } : {}, headers: { "X-Table-Token": link.token } });
    } catch (e) {
      Play.setBusy(false); // the error line says why (a table closed, a link mistyped)
      return;
    }
    Play.tableId = link.table;
    Play.token = link.token;
    this.maker = false;
    this.invites = [];
    this.quietSince = Date.now();
    document.getElementById("join-panel").hidden = true;
    document.getElementById("game").hidden = false;
    document.getElementById("log").textContent = data.state.secret ? ""
      : "this table was made with a seed: whoever chose it can know every hand";
    await Play.show(data.state);
  },

  /** The setup's fields for people: the maker's name, if given. */
  extendBody(body) {
    const name = document.getElementById("person-name").value.trim();
    if (name) body.name = name;
  },

  /** The maker's new table: keep its join links (full addresses of this server). */
  opened(data) {
    this.maker = true;
    this.invites = (data.invites || []).map((i) => ({ seat: i.seat,
      link: `${location.origin}${i.link}` }));
    this.quietSince = Date.now();
  },

  mayClose() {
    return this.maker;
  },

  /** Stop polling and forget the table's people (New match, another link opened);
   * `resetAddress`: drop a join link from the address too. */
  leave(resetAddress = true) {
    clearTimeout(this.timer);
    this.timer = null;
    this.invites = [];
    this.maker = true;
    document.getElementById("invites").hidden = true;
    document.getElementById("join-panel").hidden = true;
    if (resetAddress && this.joinLink()) history.replaceState(null, "", "#play");
  },

  shared(state) {
    return state.people.length > 1;
  },

  afterShow(state) {
    document.getElementById("play").dataset.turn = state.your_turn ? "1" : "0";
    this.renderInvites(state);
    this.schedule(state);
  },

  /** The maker's links, one per invited seat, with a Copy button and whether it was used. */
  renderInvites(state) {
    const box = document.getElementById("invites");
    box.hidden = this.invites.length === 0;
    if (box.hidden) return;
    const role = (seat) => ["you", "right", "partner", "left"][position(seat, state.seat)];
    const rows = this.invites.map((i) => {
      const joined = state.joined.includes(i.seat);
      const input = el("input", { type: "text", readonly: true, value: i.link,
        "data-seat": i.seat, "aria-label": `join link of S${i.seat}` });
      const copy = el("button", { class: "copy", onclick: () => this.copy(input, copy) }, "Copy");
      return el("div", { class: "invite" },
        el("span", { class: "who" }, `S${i.seat} ${state.names[i.seat]} (${role(i.seat)})`),
        input, copy,
        el("span", { class: `status${joined ? " joined" : ""}` }, joined ? "joined" : "not joined yet"));
    });
    const everyone = this.invites.every((i) => state.joined.includes(i.seat));
    box.replaceChildren(el("h3", {}, everyone ? "Your friends' links" : "Invite your friends"),
      ...(everyone ? [] : [el("p", { class: "hint" }, "Send each friend their seat's link: " +
        "whoever opens it plays that seat, and sees only its cards. The match has started; " +
        "a seat waits for its person.")]),
      ...rows);
  },

  async copy(input, button) {
    input.select();
    try {
      await navigator.clipboard.writeText(input.value); // a secure page (localhost, https)
    } catch (e) {
      document.execCommand("copy"); // a plain http address on the network
    }
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  },

  /** The prompt while another person is to act (or may deal the next hand). */
  prompt(s, prompt) {
    if (!this.shared(s)) return;
    if ((s.phase === "bid" || s.phase === "play") && !s.your_turn && s.people.includes(s.to_play)) {
      const waiting = s.joined.includes(s.to_play) ? "" : " (not joined yet: send them the link)";
      prompt.textContent = `Waiting for S${s.to_play} ${s.names[s.to_play]} to ` +
        `${s.phase === "bid" ? "bid" : "play"}${waiting}`;
    } else if (s.phase === "hand_over" && !s.stopped) {
      prompt.textContent = "Any person at the table may deal the next hand.";
    }
  },

  /** Ask again soon while another person may change the table. */
  schedule(state) {
    clearTimeout(this.timer);
    this.timer = null;
    if (!this.shared(state) || state.phase === "match_over" || state.stopped) return;
    if (state.your_turn) return;
    this.timer = setTimeout(() => this.poll(), this.POLL_MS);
  },

  async poll() {
    const shown = Play.state;
    const table = Play.tableId;
    if (!table || !shown) return;
    if (document.getElementById("play").dataset.busy === "1") {
      this.schedule(shown); // the page is sending or showing moves: try again after
      return;
    }
    let response;
    let data;
    try {
      response = await fetch(`/api/tables/${table}?since=${shown.moves}`,
        { headers: Play.headers() });
      data = await response.json();
    } catch (e) {
      if (Play.state === shown) this.schedule(shown); // a network hiccup: try again
      return;
    }
    if (Play.tableId !== table || Play.state !== shown) return; // the page moved on meanwhile
    if (!response.ok) {
      if ([401, 403, 404].includes(response.status)) showError(data.error); // closed: stop
      else this.schedule(shown);
      return;
    }
    const next = data.state;
    const changed = next.moves !== shown.moves || next.phase !== shown.phase ||
      next.hand_number !== shown.hand_number || next.joined.join() !== shown.joined.join() ||
      next.names.join() !== shown.names.join();
    if (changed) {
      this.quietSince = Date.now();
      await Play.show(next);
    } else if (Date.now() - this.quietSince > this.QUIET_MS) {
      document.getElementById("log").textContent = "nothing happened for 30 minutes: " +
        "updates paused (click the page to resume)";
      document.getElementById("game").addEventListener("click", () => {
        this.quietSince = Date.now();
        if (Play.state === shown) this.schedule(shown);
      }, { once: true });
    } else {
      this.schedule(shown);
    }
  },
};
