"""A game of a tournament played again, card by card, from its results database.

Each hand's row keeps its moves (``hands.moves``, :mod:`fourhundred_tournament.db.moves`): the four hands
as dealt and every bid, redeal request and card in order. A game is played again from them
through a :class:`~fourhundred_env.table.Table`, every move checked as a played one is, with
the forfeits its rows record; a hand whose stored moves are not legal, or do not give its row
(dealer, bids, tricks, points, scores), is damage: DatabaseDamagedError in one line naming
the row. So any game of a database with moves comes back, whatever its bots (``search``,
sampling bots, a checkpoint changed or deleted since) and without making them::

    with ReadOnlyResults("runs/tournament/results.sqlite") as db:
        game = replay_game(db, ("heuristic", "random", 3, 1))
        game.exact, game.reason, game.hands[0].record.plays

A database of schema 1 keeps no moves (nor do the rows written before a resume of one). Its
cards come back by playing the game again: the engine deals hand k of match m from
``(seed, m, k)`` and draws the first dealer from ``(seed, m)``, and a *replayable* bot
(``Agent.replayable``: each decision a function of its view, its seed and the game's stream
key) decides the same again when it is seeded as the tournament seeded it. Every replayed hand
is checked against the stored row; the first one that differs stops the replay and says why,
so nothing shown is made up. Such a game cannot be replayed (``reason`` says which and why,
``hands`` hold the stored rows only) when an agent is not replayable (``pimc``, ``search``,
``neural:...,sample=true``), when a checkpoint's file is gone or changed since the tournament
(its SHA-256 is in the fingerprint), when an agent is not registered (a replay never
imports the modules a database names: a data file runs no code), or when an agent starts a
program (a ``cmd:`` bot, alone or as a part: a spec read from a database never starts one, so
such a bot's games are shown from their stored moves only). How agents are seeded lives
in :func:`game_agents` and :func:`game_table` alone, so that a change in the tournament's
seeding is followed in one place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_agents.protocol import Agent
from fourhundred_agents.registry import make_agent
from fourhundred_env.cards import hand_text
from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.hands import HandRecord
from fourhundred_env.registry import parse_spec
from fourhundred_env.rules import Rules
from fourhundred_env.table import Table
from fourhundred_env.view import seat_view
from fourhundred_tournament.config import files_digest, named_files, spec_files, starts_program
from fourhundred_tournament.db import (
    MATCH_COLUMNS,
    DatabaseDamagedError,
    GameKey,
    HandRow,
    MatchRow,
    ResultsDB,
    check_values,
    decode_moves,
    read_names,
    row_damage,
)
from fourhundred_tournament.db.ladder import pairing_secrets
from fourhundred_tournament.deals import DealSecret, give_bot_key, read_deals
from fourhundred_tournament.planning import SEEDING_SCHEME, agent_seed
from fourhundred_tournament.runner import close_agents, game_streams

__all__ = [
    "ReplayError",
    "ReplayedGame",
    "ReplayedHand",
    "TournamentInfo",
    "game_agents",
    "game_table",
    "hand_differences",
    "label_blockers",
    "replay_blocker",
    "replay_game",
    "tournament_info",
]

EARLIER_SCHEME = "job-chunk"
"""The seeding of databases that record none (made before they did): seeds then hung on the
chunk of match ids too, and stochastic bots drew in batch order."""


_HAND_KEY = ("pair_a", "pair_b", "match_id", "orientation", "hand_index")


class ReplayError(FourHundredError):
    """The game asked for is not in the database, or the database cannot be read as one."""


@dataclass(frozen=True)
class TournamentInfo:
    """What a database says about its tournament: the fingerprint and the seeding."""

    agents: tuple[str, ...]
    agent_files: dict[str, str]  # spec -> SHA-256 of its checkpoint when the tournament ran
    rules: Rules
    seed: int  # what the engine dealt from: the tournament's seed, or its secret's deal seed
    max_hands: int
    scheme: str  # how agents were seeded (fourhundred_tournament.planning.SEEDING_SCHEME or an earlier one)
    agent_modules: tuple[str, ...]  # named in the database: shown, never imported
    specs: dict[str, str] = field(default_factory=dict)  # label -> spec where they differ
    # (a ladder's later version of a checkpoint: ``SPEC@v2``)
    public_seed: int | None = None  # the tournament's --seed (agents' seeds); None: `seed`
    bot_key: bytes | None = (
        None  # what cmd: bots were told hangs on it (fourhundred_tournament.deals)
    )
    names: dict[str, str] = field(default_factory=dict)  # label -> display name (name=)
    # a ladder's pairings whose event drew a deal secret of its own (fourhundred_tournament.deals)
    pair_deals: dict[tuple[str, str], DealSecret] = field(default_factory=dict)

    def display(self, label: str) -> str:
        """What is shown for the agent `label`: its display name, else the label."""
        return self.names.get(label, label)

    @property
    def agents_seed(self) -> int:
        """The seed the agents' seeds hang on (:func:`fourhundred_tournament.planning.agent_seed`)."""
        return self.seed if self.public_seed is None else self.public_seed

    def spec(self, label: str) -> str:
        """The agent spec the games of `label` were played with."""
        return self.specs.get(label, label)

    def deal_seed(self, pair: tuple[str, str]) -> int:
        """What the engine dealt the games of `pair` from (its event's secret, if it has one)."""
        own = self.pair_deals.get(pair)
        return self.seed if own is None else own.deal_seed

    def pair_bot_key(self, pair: tuple[str, str]) -> bytes | None:
        """What ``cmd:`` bots of `pair` were told hangs on."""
        own = self.pair_deals.get(pair)
        return self.bot_key if own is None else own.bot_key


@dataclass(frozen=True)
class ReplayedHand:
    """One hand of a game: as stored, and as replayed when it could be."""

    row: HandRow
    record: HandRecord | None  # the replayed hand (cards, bids in order); None: not replayed
    problem: str | None = None  # why this hand differs from its row (then `record` is shown
    # to nobody: it is kept only to say what differed)

    @property
    def exact(self) -> bool:
        """Whether the hand was replayed card by card and agreed with the database."""
        return self.record is not None and self.problem is None


@dataclass(frozen=True)
class ReplayedGame:
    """A game of the database with every hand, replayed card by card where that is exact."""

    key: GameKey
    match: MatchRow
    hands: tuple[ReplayedHand, ...]
    reason: str | None  # None: every hand replayed and agreed with the database

    @property
    def exact(self) -> bool:
        """Whether every hand was replayed card by card and agreed with the database."""
        return self.reason is None


def tournament_info(db: ResultsDB) -> TournamentInfo:
    """The fingerprint and the seeding of `db`'s tournament (ReplayError if it has none)."""
    meta = db.meta()
    try:
        fp = json.loads(meta["fingerprint"])
        rules = Rules.from_dict(fp["rules"])
        seeding = json.loads(meta.get("seeding", "{}"))
        secret = read_deals(meta, f"database {str(db.path)!r}")
        seed = int(fp["seed"])
        return TournamentInfo(
            agents=tuple(fp["agents"]),
            agent_files=dict(fp.get("agent_files", {})),
            rules=rules,
            seed=seed if secret is None else secret.deal_seed,
            max_hands=int(fp["max_hands"]),
            scheme=str(seeding.get("scheme", EARLIER_SCHEME)),
            agent_modules=tuple(str(m) for m in seeding.get("agent_modules", ())),
            specs=dict(fp.get("specs", {})),
            public_seed=seed,
            bot_key=None if secret is None else secret.bot_key,
            names=read_names(db.path, meta),
            pair_deals=pairing_secrets(db),
        )
    except (KeyError, TypeError, ValueError, FourHundredError) as e:
        raise ReplayError(
            f"database {str(db.path)!r} has no readable tournament fingerprint ({e}): expected "
            "one written by `fourhundred tournament`"
        ) from None


# -- seeding: the one place that knows how a tournament made and seeded its agents -------------
def game_agents(info: TournamentInfo, key: GameKey) -> list[list[Agent]]:
    """agents[side][seat] of game `key` (side 0: pair_a), seeded as the tournament seeded
    them (:func:`fourhundred_tournament.planning.agent_seed`: by seed, pairing, side and seat). A database
    of an earlier scheme is replayed the same way: deterministic bots replay exactly anyway,
    and a stochastic one that drew otherwise then shows as a divergence that says why.
    ReplayError for an agent that starts a program (never made from a database's spec)."""
    pair_a, pair_b, _, _ = key
    pair = (pair_a, pair_b)
    for label in pair:
        if starts_program(info.spec(label)):
            raise ReplayError(_program_blocker(label))
    return [
        [give_bot_key(make_agent(info.spec(pair[side]), info.rules,
                                 seed=agent_seed(info.agents_seed, pair, side, seat)),
                      info.pair_bot_key(pair)) for seat in range(4)]
        for side in (0, 1)
    ]  # fmt: skip


def _program_blocker(label: str) -> str:
    return (
        f"{label}: it starts a program, which a database's spec never does: its games are "
        "shown from their stored moves only, and these are missing"
    )


def game_table(info: TournamentInfo, key: GameKey) -> Table:
    """A fresh table of game `key`: its deals, first dealer and stream key as in the
    tournament (`fourhundred_tournament.runner.game_streams`)."""
    pair_a, pair_b, match_id, orientation = key
    seed = info.deal_seed((pair_a, pair_b))
    table = Table(rules=info.rules, seed=seed, match_index=match_id, name="replay")
    table.state.stream[:] = game_streams(seed, np.array([match_id]), np.array([orientation]))
    return table


# -- why a game cannot be replayed ---------------------------------------------------------------
def replay_blocker(info: TournamentInfo, label: str) -> str | None:
    """Why games of agent `label` cannot be replayed card by card, or None if they can: the
    agent starts a program (never run from a database's spec), is unknown now, its files (a
    checkpoint) changed or are gone, or it is not replayable. Nothing is started: a spec that
    starts a program is judged from its text alone."""
    spec = info.spec(label)
    if starts_program(spec):
        return _program_blocker(label)
    expected = info.agent_files.get(label)
    if expected is not None:
        what = "program" if parse_spec(spec)[0] == "cmd" else "checkpoint"
        paths = [str(p) for p in spec_files(spec)] or named_files(spec)
        gone = [p for p in paths if not Path(p).is_file()]
        if gone or not paths:
            return f"{label}: its {what} {(gone or paths or [spec])[0]!r} is not there any more"
        if files_digest(spec) != expected:
            return (
                f"{label}: its {what} {', '.join(paths)!r} changed since the tournament "
                "(its SHA-256 differs from the one the database records)"
            )
    try:  # never the database's agent_modules: nothing a data file names is imported
        agent = make_agent(spec, info.rules, seed=0)
    except FourHundredError as e:
        if info.agent_modules:
            return (
                f"{label}: cannot be made now ({e}); the database names the modules "
                f"{list(info.agent_modules)} that registered agents, which a replay does not "
                "import (a data file never runs code)"
            )
        return f"{label}: cannot be made now ({e})"
    try:
        if not agent.replayable:
            return (
                f"{label}: its decisions depend on random draws made in the order of the "
                "tournament's calls (not replayable)"
            )
    finally:
        agent.close()
    return None


# -- reading and checking ------------------------------------------------------------------------
def _rows(db: ResultsDB, key: GameKey) -> tuple[MatchRow, list[HandRow]]:
    check_values(db, key)  # a row out of range: one line naming it, nothing shown
    where = "pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ?"
    match = db.query(f"SELECT {', '.join(MATCH_COLUMNS)} FROM matches WHERE {where}", key)
    if not match:
        raise ReplayError(
            f"no finished game {list(key)!r} (pair_a, pair_b, match_id, orientation) in "
            f"database {str(db.path)!r}"
        )
    hands = db.query(f"SELECT {db.hand_select()} FROM hands WHERE {where} ORDER BY hand_index", key)
    return MatchRow._make(match[0]), [HandRow._make(h) for h in hands]


def _seat_values(row: HandRow, name: str) -> list[int]:
    return [int(getattr(row, f"{name}{s}")) for s in range(4)]


def hand_differences(row: HandRow, record: HandRecord, source: str = "replay") -> list[str]:
    """What differs between a stored hand and a replayed one (empty: they agree), each as
    ``"<what>: database <row's>, <source> <record's>"``."""
    out = []
    stored: dict[str, Any] = {
        "dealer": row.dealer, "required total": row.required_total,
        "thrown in": bool(row.thrown_in), "redeal seat": row.redeal_seat,
        "claim seat": row.claim_seat, "bids": _seat_values(row, "bid"),
        "tricks": _seat_values(row, "tricks"), "points": _seat_values(row, "points"),
        "scores": _seat_values(row, "score"),
        "forfeits": [s for s in range(4) if getattr(row, f"forfeit{s}")],
    }  # fmt: skip
    replayed: dict[str, Any] = {
        "dealer": record.dealer, "required total": record.required_total,
        "thrown in": record.thrown_in,
        "redeal seat": -1 if record.redeal_seat is None else record.redeal_seat,
        "claim seat": -1 if record.claim is None else record.claim[0],
        "bids": [b or 0 for b in record.bids], "tricks": list(record.tricks_won),
        "points": list(record.points), "scores": list(record.scores_after),
        "forfeits": list(record.forfeits),
    }  # fmt: skip
    for name, value in stored.items():
        if replayed[name] != value:
            out.append(f"{name}: database {value}, {source} {replayed[name]}")
    return out


def _play_hand(table: Table, agents: Sequence[Sequence[Agent]], orientation: int) -> HandRecord:
    """Deal and play the table's next hand as the tournament's runner does (conduct rules
    included: a call that raises or an illegal action forfeits and plays the lowest legal)."""
    table.deal()
    index = np.array([0])
    while table.phase in ("bid", "play"):
        seat = int(table.to_play)  # type: ignore[arg-type]
        agent = agents[(seat & 1) ^ orientation][seat]
        view = seat_view(table.engine, table.state, index, np.int8(seat))
        try:
            action = int(np.asarray(agent.act(view))[0])
            legal = bool(0 <= action < view.legal_mask.shape[1] and view.legal_mask[0, action])
        except Exception:
            legal = False
        if not legal:
            table.forfeit(seat)
            action = int(np.argmax(view.legal_mask[0]))
        table.act(action)
    return table.history[-1]


def replay_game(db: ResultsDB, key: GameKey) -> ReplayedGame:
    """Game `key` of `db`, every hand played again from its stored moves, or by its bots where
    the database has none, and checked against its row (see the module docstring). Raises
    ReplayError for a game not in `db`, DatabaseDamagedError for stored moves that are not
    legal or do not give the hand's row."""
    key = (str(key[0]), str(key[1]), int(key[2]), int(key[3]))
    match, rows = _rows(db, key)
    info = tournament_info(db)
    if rows and all(row.moves is not None for row in rows):
        return ReplayedGame(key, match, _from_moves(db, info, match, rows), None)
    blockers = [b for b in {replay_blocker(info, label) for label in key[:2]} if b]
    if blockers:
        return _unreplayed(key, match, rows, "cannot replay the cards: " + "; ".join(blockers))
    agents = game_agents(info, key)
    try:
        return _replay(db, key, info, match, rows, agents)
    finally:
        close_agents(agents)  # a cmd bot's processes


def _from_moves(
    db: ResultsDB, info: TournamentInfo, match: MatchRow, rows: Sequence[HandRow]
) -> tuple[ReplayedHand, ...]:
    """The hands of a game played again from their stored moves through a :class:`Table`
    (every move checked), each checked against its row."""
    table = Table(rules=info.rules, dealer=match.first_dealer, seed=info.seed,
                  match_index=match.match_id, name="replay")  # fmt: skip
    hands = []
    for row in rows:
        assert row.moves is not None
        try:
            dealt, actions = decode_moves(row.moves)
        except ValueError as e:
            raise _moves_damage(db, row, f"moves that are not a hand's ({e})") from None
        try:
            table.deal([hand_text(s) for s in dealt])
        except FourHundredError as e:
            raise _moves_damage(db, row, f"moves whose dealt hands cannot be dealt ({e})") from None
        for seat in range(4):
            if getattr(row, f"forfeit{seat}"):  # (only scoring reads a forfeit: when is moot)
                table.forfeit(seat)
        for k, action in enumerate(actions):
            try:
                table.act(action)
            except FourHundredError as e:
                raise _moves_damage(
                    db, row, f"moves whose move {k + 1} cannot be played ({e})"
                ) from None
        if table.phase in ("bid", "play"):
            raise _moves_damage(
                db, row, f"moves that stop before the hand ends ({len(actions)} moves)"
            )
        record = table.history[-1]
        diffs = hand_differences(row, record, "moves")
        if diffs:
            what = "moves that give another hand than the row's (" + "; ".join(diffs) + ")"
            raise _moves_damage(db, row, what)
        hands.append(ReplayedHand(row, record))
    return tuple(hands)


def _moves_damage(db: ResultsDB, row: HandRow, what: str) -> DatabaseDamagedError:
    ids = {name: getattr(row, name) for name in _HAND_KEY}
    return row_damage(db, "hands", ids, what)


def _replay(
    db: ResultsDB, key: GameKey, info: TournamentInfo, match: MatchRow, rows: list[HandRow],
    agents: list[list[Agent]],
) -> ReplayedGame:  # fmt: skip
    for side in agents:
        for agent in side:
            agent.reset(1)
    table = game_table(info, key)
    if table.dealer != match.first_dealer:
        return _unreplayed(
            key, match, rows,
            f"cannot replay the cards: the first dealer is S{table.dealer} here, "
            f"S{match.first_dealer} in the database (other deals than the tournament's)",
        )  # fmt: skip
    hands: list[ReplayedHand] = []
    for k, row in enumerate(rows):
        record = _play_hand(table, agents, key[3])
        diffs = hand_differences(row, record)
        if diffs:
            hands.append(ReplayedHand(row, record, "; ".join(diffs)))
            reason = _divergence(db, key, info, row, diffs)
            return ReplayedGame(key, match, (*hands, *_stored(rows[k + 1 :])), reason)
        hands.append(ReplayedHand(row, record))
    return ReplayedGame(key, match, tuple(hands), None)


def _divergence(
    db: ResultsDB, key: GameKey, info: TournamentInfo, row: HandRow, diffs: Sequence[str]
) -> str:
    """Why the replay stopped at `row`: what differed, and what in the database explains it."""
    text = (
        f"hand {row.hand_index + 1} replays differently from the database ({'; '.join(diffs)}): "
        "its cards and those of later hands are not shown"
    )
    where = "pair_a = ? AND pair_b = ? AND match_id = ? AND orientation = ? AND hand_index = ?"
    events = db.query(
        f"SELECT seat, kind, detail FROM events WHERE {where} AND kind != 'slow'",
        (*key, row.hand_index),
    )
    if events:
        text += "; in the tournament " + "; ".join(
            f"S{seat} forfeited ({kind}: {detail})" for seat, kind, detail in events
        )
    if info.scheme != SEEDING_SCHEME:
        text += (
            f"; this database's agents were seeded by the earlier scheme {info.scheme!r} "
            f"(this version replays {SEEDING_SCHEME!r}): a stochastic bot drew otherwise then"
        )
    return text


def _stored(rows: Sequence[HandRow]) -> tuple[ReplayedHand, ...]:
    return tuple(ReplayedHand(row, None) for row in rows)


def _unreplayed(
    key: GameKey, match: MatchRow, rows: Sequence[HandRow], reason: str
) -> ReplayedGame:
    return ReplayedGame(key, match, _stored(rows), reason)


def label_blockers(db: ResultsDB) -> Mapping[str, str | None]:
    """For each agent of `db`'s tournament, why its games cannot be shown card by card (None:
    they can: the database keeps every move of its games, or the agent replays)."""
    info = tournament_info(db)
    stored: set[str] = set()  # labels with games, every hand of them with its moves
    if db.has_moves:
        pairs = db.query(
            "SELECT pair_a, pair_b, MIN(moves IS NOT NULL) FROM hands GROUP BY pair_a, pair_b"
        )
        stored = {label for a, b, _ in pairs for label in (a, b)}
        stored -= {label for a, b, every in pairs if not every for label in (a, b)}
    return {
        label: None if label in stored else replay_blocker(info, label) for label in info.agents
    }
