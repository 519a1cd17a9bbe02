"""Changing a ladder: bots added (their missing pairings played) and bots retired.

:func:`add_bots` checks everything before it writes: each spec is made once (a spec that does
not load is one line), then, holding the database's writer lock (a second add on the same file
is refused naming the first), the file is checked (damage, a newer schema, another ladder's
settings, a bot already on it). Only then is the event written, in one transaction with its
bots and the pairings it plans, and the games played by :func:`fourhundred_tournament.tournament.play_pairings`.
A run stopped at any point is resumed by the same command: its bots are on the ladder already,
their event unfinished, and only the games missing are played, the same rows as a straight run.

A bot is its spec and the SHA-256 of its files (:mod:`fourhundred_tournament.identity`: a
checkpoint, or every file of a ``cmd:`` bot's folders), each file's own recorded too: a spec
whose files changed since it was added is a new version, labelled ``SPEC@v2``, and the old
version is retired (its files are gone: it cannot play again).

A ladder's bots are read from its database, and a database never starts a program: a bot on
the ladder whose spec runs one (``cmd:``, or a part of a composed spec) plays its missing
pairings only when this add names its spec again (``run``, the command line's ``--run``), a
bot's label must be its spec's, and a bot that names files plays only while they are the ones
it was added with (:func:`_check_stored_bots`, before anything is written).

Every add event draws a deal secret of its own (:mod:`fourhundred_tournament.deals`), shared by
the pairings it plans, so that a bot added later learns nothing of its cards from the games
already published. Public deals (from the seed alone: anyone can predict them) are taken only
when asked for by name (``deals="public"``), for a new ladder or one dealt so already.

A spec's display name (``name=NAME``, see :func:`fourhundred_env.registry.split_name`) is no
part of the bot: it is recorded in the meta ``names`` (label -> name) for the reports to show,
``NAME@v2`` for a later version; a bot added again under another name is renamed, one given
without a name keeps its own. Two bots may not be shown alike.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fourhundred_agents.remote.sandbox import protect_paths
from fourhundred_env.errors import FourHundredError
from fourhundred_env.registry import MAX_NAME_LENGTH, split_name
from fourhundred_env.rules import Rules
from fourhundred_tournament.config import TournamentConfig, config_from_mapping, starts_program
from fourhundred_tournament.db import (
    ReadOnlyResults,
    ResultsDB,
    check_schema,
    check_values,
    is_blank,
    read_meta,
    read_names,
)
from fourhundred_tournament.db.checks import DatabaseMismatchError
from fourhundred_tournament.db.ladder import (
    Ladder,
    LadderBot,
    check_ladder_meta,
    empty_ladder,
    finish_events,
    read_ladder,
    version_label,
    write_event,
)
from fourhundred_tournament.deals import (
    MODES,
    DealSecret,
    deals_row,
    deals_scheme,
    read_deals,
    with_real_paths,
)
from fourhundred_tournament.identity import changed_file, identity, legacy_digest
from fourhundred_tournament.planning import SEEDING_SCHEME, Pairing
from fourhundred_tournament.runner import Records
from fourhundred_tournament.tournament import check_agents, connect_backend, play_pairings

__all__ = ["DEFAULT_MATCHES", "AddSummary", "LadderError", "add_bots", "remove_bots"]

DEFAULT_MATCHES = 100
"""Duplicate matches per new pairing when an add does not say."""


class LadderError(FourHundredError):
    """A ladder change refused: nothing was written."""


@dataclass
class AddSummary:
    """What one :func:`add_bots` did."""

    event: int | None  # the event written (None: it only resumed an earlier one)
    added: list[str]  # labels put on the ladder (new versions and returning bots)
    resumed: list[str]  # labels whose unfinished add this call carried on
    retired: list[str]  # older versions retired because their files changed
    pairings: int  # pairings played or resumed
    games_played: int = 0
    games_resumed: int = 0
    hands_dropped: int = 0
    seconds: float = 0.0
    lock_note: str | None = None
    notes: list[str] = field(default_factory=list)


def _settings_asked(seed: int | None, rules: str | Rules | None, max_hands: int | None) -> dict:
    out: dict[str, Any] = {}
    if seed is not None:
        out["seed"] = int(seed)
    if rules is not None:
        out["rules"] = (Rules.preset(rules) if isinstance(rules, str) else rules).to_dict()
    if max_hands is not None:
        out["max_hands"] = int(max_hands)
    return out


def _existing(path: Path, accept_unchecked: bool = False) -> Ladder | None:
    """The ladder at `path` read without the lock (None: no file), for the settings the
    specs are checked with; everything is read again under the lock."""
    if not path.exists() or is_blank(path):
        return None
    with ReadOnlyResults(path, accept_unchecked=accept_unchecked) as db:
        return read_ladder(db)


def _check_file(path: Path) -> None:
    """The writer's check of an existing file (ResultsDB's `check`): intact, of a schema this
    version reads, and a tournament or ladder database (or a blank file: a new one)."""
    if not path.exists() or is_blank(path):
        return
    meta = read_meta(path)
    check_schema(path, meta)
    check_ladder_meta(path, meta)
    read_deals(meta, f"database {str(path)!r}")  # a damaged row: refused before any write
    if "ladder" not in meta and "fingerprint" not in meta:
        raise DatabaseMismatchError(
            f"database {str(path)!r} is not a fourhundred results database (no fingerprint): "
            "expected a ladder or a tournament database; choose another --db"
        )


def add_bots(
    db_path: str | Path,
    specs: Sequence[str],
    matches: int | None = None,
    *,
    seed: int | None = None,
    rules: str | Rules | None = None,
    max_hands: int | None = None,
    anchor: str | None = None,
    info: Mapping[str, Mapping[str, Any]] | None = None,
    play: Mapping[str, Any] | None = None,
    on_records: Callable[[Records], None] | None = None,
    deals: str | None = None,
    run: Sequence[str] = (),
    accept_unchecked: bool = False,
) -> AddSummary:
    """Put `specs` on the ladder at `db_path` (created if absent) and play the pairings they
    are missing, `matches` duplicate matches each (default :data:`DEFAULT_MATCHES`).

    `seed`, `rules` (a preset name or Rules), `max_hands`: the ladder's settings, given when
    it is created (default 0, wiki, 200); given later they must be the ladder's. `anchor`: the
    bot pinned at 1500 in the ratings from now on. `info`: per spec, what to record with it
    (a training run's step). `play`: TournamentConfig fields of how to play (workers,
    backend, table_batch, progress...). `deals`: ``secret`` (the default: each event draws
    its own secret) or ``public`` (from the seed alone), required by name to create or extend
    a ladder of public deals. `run`: specs of program bots (``cmd:``) already on the ladder
    that this add may start (a spec read from the database never starts a program by
    itself). `accept_unchecked`: add to a database whose row checks were switched off
    (refused otherwise, :func:`fourhundred_tournament.db.checks.check_checked`). Raises
    LadderError (nothing written) for bad input.
    """
    path = Path(db_path)
    specs = [str(s).strip() for s in specs]
    if not specs or not all(specs):
        raise LadderError(f"ladder add {specs!r}: expected one or more agent specs")
    given = dict(split_name(s) for s in specs)  # spec without its name -> name (or None)
    specs = [split_name(s)[0] for s in specs]
    twice = sorted({s for s in specs if specs.count(s) > 1})
    if twice:
        raise LadderError(
            f"ladder add: {twice} given twice: expected each bot once (a name does not make "
            "another bot)"
        )
    _check_shown((s, given[s] or s) for s in specs)  # before the file is made or opened
    info = {split_name(k)[0]: v for k, v in (info or {}).items()}
    if matches is not None and matches < 1:
        raise LadderError(f"--matches {matches}: expected at least 1")
    play = dict(play or {})
    deals = deals if deals is not None else play.get("deals")  # named either way
    if deals is not None and deals not in MODES:
        raise LadderError(f"--deals {deals!r}: expected one of {list(MODES)}")
    asked = _settings_asked(seed, rules, max_hands)
    before = _existing(path, accept_unchecked)
    settings = {"seed": 0, "rules": Rules().to_dict(), "max_hands": 200, "anchor": None,
                **(before.settings if before is not None else {}), **asked}  # fmt: skip
    check = _play_config(settings, specs, play, path)
    # hidden from sandboxed bots before the check, so that a bot is checked in the very
    # sandbox it plays in
    protect_paths(with_real_paths([path, check.out_dir]))
    check_agents(check, tuple(specs))  # a spec that does not load: one line, nothing written
    identities = {s: identity(s) for s in specs}  # a folder too big to be a bot's: one line
    create = {"deals": deals_row(deals or "secret")}  # recorded by a new file only
    with ResultsDB(path, _fingerprint(None, settings), check=_check_file,
                   create_meta=create, accept_unchecked=accept_unchecked) as db:  # fmt: skip
        scheme = _check_deals(db, deals)
        ladder = read_ladder(db) if before is not None else empty_ladder(path, settings)
        check_values(db)  # a damaged or edited row: one line, nothing written
        _same_settings(ladder, asked)
        plan = _plan(ladder, specs, identities, matches, info)
        _check_stored_bots(ladder, plan, [*specs, *(split_name(s)[0] for s in run)])
        names = _names(ladder, plan, given, read_names(path, db.meta()))
        settings = dict(ladder.settings)
        if anchor is not None:
            settings["anchor"] = _resolve(plan.ladder_after, anchor, names)
        ladder = Ladder(ladder.path, settings, ladder.bots, ladder.events, ladder.pairings,
                        ladder.is_ladder)  # fmt: skip
        event = None
        if plan.new_bots or plan.added or anchor is not None:
            secret = DealSecret.fresh() if scheme == "secret" and plan.pairings else None
            event = write_event(
                db, ladder, "add", plan.new_bots, plan.added, plan.retired, plan.pairings,
                plan.matches, note=plan.note, secret=secret,
            )  # fmt: skip
        ladder = read_ladder(db)
        db.set_meta("fingerprint", _fingerprint(ladder, ladder.settings))
        db.set_meta("seeding", _seeding(db, play))
        if names or "names" in db.meta():
            db.set_meta("names", names)
        summary = AddSummary(event, plan.added, plan.resumed, plan.retired, 0,
                             lock_note=db.lock_note)  # fmt: skip
        _play_missing(db, ladder, play, summary, on_records)
        finish_events(db)
    return summary


def _check_deals(db: ResultsDB, asked: str | None) -> str:
    """The database's deals (``secret`` or ``public``), refused in one line when they are
    public and `asked` does not name them, or are not the ones `asked` names."""
    scheme = deals_scheme(db.meta())
    if scheme == "public" and asked != "public":
        raise LadderError(
            f"database {str(db.path)!r} deals from its seed alone (public deals: anyone who "
            "knows the seed predicts every card of every event): expected --deals public to "
            "add to it knowingly, or another --db for a ladder of secret deals"
        )
    if asked is not None and asked != scheme:
        raise LadderError(
            f"database {str(db.path)!r} holds a ladder of {scheme} deals, this add asks for "
            f"{asked} deals: expected its own (leave --deals out) or another --db"
        )
    return scheme


def _check_stored_bots(ladder: Ladder, plan: _Plan, named: Sequence[str]) -> None:
    """Refuse (LadderError, nothing written) to play a bot read from the database that the
    owner has not named: one whose label is not its spec's, whose files changed since it was
    added, or whose spec starts a program (``cmd:``) without being `named` in this call."""
    active = set(plan.ladder_after)
    pairs = [p for p in (*ladder.pairings, *plan.pairings) if p[0] in active and p[1] in active]
    playing = sorted({label for p in pairs for label in p})
    new = {b.label for b in plan.new_bots}
    for label in playing:
        if label in new:
            continue  # its spec is this call's own
        bot = next((b for b in ladder.bots if b.label == label), None)
        if bot is None or version_label(bot.spec, bot.version) != label:
            raise LadderError(
                f"database {str(ladder.path)!r}: the bot labelled {label!r} is recorded with "
                f"the spec {bot.spec if bot else None!r}: expected a label that is its spec's "
                "(a damaged or planted row); nothing was played"
            )
        if starts_program(bot.spec) and bot.spec not in named:
            raise LadderError(
                f"{label!r} on the ladder {str(ladder.path)!r} starts a program, and a spec read "
                f"from a database never does: name it again with --run {bot.spec!r} to let "
                "this add start it, or `ladder remove` it"
            )
        _check_files(ladder, bot)


def _check_files(ladder: Ladder, bot: LadderBot) -> None:
    """LadderError (one line naming the file when the ladder recorded each) unless the files
    of `bot` are those it was added with."""
    digest, digests = identity(bot.spec)
    if digest == bot.files:
        return
    label = version_label(bot.spec, bot.version)
    again = "add its spec again to put the new version on the ladder, or `ladder remove` it"
    if bot.file_map is None and bot.files == legacy_digest(bot.spec):
        # recorded by a fourhundred whose checksum covered only the command line's files
        raise LadderError(
            f"{label!r} on the ladder {str(ladder.path)!r} was recorded with the checksum of "
            "the files its command line names only, not of all of its code (its folder or "
            f"package): its other files may have changed unseen; expected all of them: {again}"
        )
    what = changed_file(bot.file_map, digests) if bot.file_map is not None else None
    raise LadderError(
        f"{label!r}: "
        + (f"its file {what} since it was added" if what else
           "its files changed or are gone since it was added (their SHA-256 differs from the "
           "one the ladder records)")
        + f" (relative paths are read from this folder): expected them unchanged, or {again}"
    )  # fmt: skip


@dataclass
class _Plan:
    new_bots: list[LadderBot]
    added: list[str]
    resumed: list[str]
    retired: list[str]
    pairings: dict[tuple[str, str], int]
    matches: int
    note: str
    ladder_after: list[str]


def _same_settings(ladder: Ladder, asked: Mapping[str, Any]) -> None:
    """Refuse settings other than the ladder's own (a database of another ladder)."""
    if not ladder.events:
        return
    diffs = [key for key, value in asked.items() if ladder.settings.get(key) != value]
    if diffs:
        have = ", ".join(f"{k} {_show(ladder.settings.get(k))}" for k in diffs)
        want = ", ".join(f"{k} {_show(asked[k])}" for k in diffs)
        raise LadderError(
            f"database {str(ladder.path)!r} is a ladder of {have}, not {want}: expected the "
            "ladder's own settings (leave those flags out) or another --db"
        )


def _show(value: Any) -> str:
    if isinstance(value, dict) and "preset" in value:
        return repr(Rules.from_dict(value).name)
    return repr(value)


def _plan(
    ladder: Ladder,
    specs: Sequence[str],
    identities: Mapping[str, tuple[str | None, dict[str, str]]],
    matches: int | None,
    info: Mapping[str, Mapping[str, Any]],
) -> _Plan:
    """Which bots are new, returning, resumed or replaced, and the pairings to plan."""
    active = ladder.active()
    finished = {e.event: e.finished is not None for e in ladder.events}
    new_bots: list[LadderBot] = []
    added: list[str] = []
    resumed: list[str] = []
    retired: list[str] = []
    labels = {b.label for b in ladder.bots}
    for spec in specs:
        versions = sorted((b for b in ladder.bots if b.spec == spec), key=lambda b: b.version)
        last = versions[-1] if versions else None
        digest, file_map = identities[spec]
        if last is not None and last.files == digest:
            if last.label not in active:
                added.append(last.label)  # back on the ladder: it plays who came meanwhile
                continue
            unfinished = [e for e in ladder.events if last.label in e.labels
                          and e.kind != "remove" and not finished[e.event]]  # fmt: skip
            if not unfinished:
                raise LadderError(
                    f"{spec!r} is already on the ladder {str(ladder.path)!r} as {last.label!r} "
                    f"(added in event {last.added}, its files unchanged): expected a new bot; "
                    "`ladder remove` retires it"
                )
            if matches is not None and unfinished[-1].matches != matches:
                raise LadderError(
                    f"{last.label!r}: its add (event {unfinished[-1].event}) was stopped with "
                    f"--matches {unfinished[-1].matches}: rerun it with that (or without "
                    "--matches) to finish it"
                )
            resumed.append(last.label)
            continue
        version = last.version + 1 if last is not None else 1
        label = version_label(spec, version)
        if label in labels:
            raise LadderError(f"{spec!r}: the label {label!r} is taken on this ladder")
        if last is not None and last.label in active:
            retired.append(last.label)
        new_bots.append(
            LadderBot(label, spec, version, digest, 0, dict(info.get(spec, {})), file_map)
        )
        added.append(label)
    after = [a for a in active if a not in retired] + [a for a in added if a not in active]
    count = DEFAULT_MATCHES if matches is None else matches
    pairings: dict[tuple[str, str], int] = {}
    for label in added:
        for other in after:
            pair = tuple(sorted((label, other)))
            if other != label and pair not in ladder.pairings:
                pairings[pair] = count  # type: ignore[index]
    note = "; ".join(f"{r} retired: {version_label(ladder.bot(r).spec, ladder.bot(r).version + 1)}"
                     " has other files" for r in retired)  # fmt: skip
    return _Plan(new_bots, added, resumed, retired, pairings, count, note, after)


def _names(
    ladder: Ladder,
    plan: _Plan,
    given: Mapping[str, str | None],
    names: Mapping[str, str],
) -> dict[str, str]:
    """The display names by label after this add: `names` (the ladder's), with the name
    `given` to each spec put on its version's label (``NAME@vN`` for a version N > 1). A
    LadderError when two bots would be shown alike (nothing is written)."""
    out = dict(names)
    bots = [*ladder.bots, *plan.new_bots]
    for spec, name in given.items():
        if name is None:
            continue
        bot = max((b for b in bots if b.spec == spec), key=lambda b: b.version)
        tail = "" if bot.version == 1 else f"@v{bot.version}"
        out[bot.label] = name[: MAX_NAME_LENGTH - len(tail)] + tail
    _check_shown((b.label, out.get(b.label, b.label)) for b in bots)
    return out


def _check_shown(bots: Iterable[tuple[str, str]]) -> None:
    """LadderError unless the bots, (label, what is shown), are each shown by a text (their
    label or name) that stands for no other."""
    seen: dict[str, str] = {}
    for label, shown in bots:
        for text in dict.fromkeys((label, shown)):
            if seen.setdefault(text, label) != label:
                raise LadderError(
                    f"ladder add: {text!r} would stand for two bots, {seen[text]!r} and "
                    f"{label!r}: expected a distinct name for each (and none that is another "
                    "bot's spec)"
                )


def _resolve(labels: Sequence[str], name: str, names: Mapping[str, str] | None = None) -> str:
    """The label `name` stands for among `labels` (a label, the spec of one, or its display
    name in `names`)."""
    name = split_name(name)[0]  # a spec with a name= is the spec
    if name in labels:
        return name
    matches = [a for a in labels if a.split("@v")[0] == name or (names or {}).get(a) == name]
    if len(matches) == 1:
        return matches[0]
    raise LadderError(f"{name!r}: expected one of the bots on the ladder {sorted(labels)}")


def _fingerprint(ladder: Ladder | None, settings: Mapping[str, Any]) -> dict[str, Any]:
    """The tournament fingerprint a ladder keeps (every version it holds), so that the readers
    of tournament databases read it."""
    bots = ladder.bots if ladder is not None else ()
    return {
        "agents": sorted(b.label for b in bots),
        "agent_files": {b.label: b.files for b in bots if b.files is not None},
        "specs": ladder.specs() if ladder is not None else {},
        "rules": settings["rules"],
        "seed": settings["seed"],
        "max_hands": settings["max_hands"],
    }


def _seeding(db: ResultsDB, play: Mapping[str, Any]) -> dict[str, Any]:
    import json

    old = json.loads(db.meta().get("seeding", "{}"))
    modules = list(dict.fromkeys([*old.get("agent_modules", []), *play.get("agent_modules", ())]))
    return {"scheme": SEEDING_SCHEME, "chunk_matches": play.get("chunk_matches", 256),
            "agent_modules": modules}  # fmt: skip


def _play_config(
    settings: Mapping[str, Any],
    specs: Sequence[str],
    play: Mapping[str, Any],
    path: Path,
    matches: int = 1,
) -> TournamentConfig:
    """The TournamentConfig the ladder's games are played under (its agents: `specs`; one
    spec alone is let through as a mirror, for the checks)."""
    values = {"progress": True, **play, "agents": list(specs), "rules": dict(settings["rules"]),
              "seed": settings["seed"], "max_hands": settings["max_hands"], "db": str(path),
              "matches": matches, "mirror": len(specs) < 2, "bootstrap": 0}  # fmt: skip
    return config_from_mapping(values, "ladder")


def _play_missing(
    db: ResultsDB,
    ladder: Ladder,
    play: Mapping[str, Any],
    summary: AddSummary,
    on_records: Callable[[Records], None] | None,
) -> None:
    """Play the games missing from every pairing of two bots on the ladder."""
    active = set(ladder.active())
    todo = [(p, m) for p, (_, m) in sorted(ladder.pairings.items())
            if p[0] in active and p[1] in active]  # fmt: skip
    summary.pairings = len(todo)
    if not todo:
        return
    specs = ladder.specs()
    pairings = tuple(
        Pairing(
            p, m, (specs.get(p[0], p[0]), specs.get(p[1], p[1])) if specs.keys() & set(p) else ()
        )
        for p, m in todo
    )
    agents = sorted({s for pr in pairings for s in (pr.specs or pr.pair)})
    cfg = _play_config(ladder.settings, agents, play, db.path, max(m for _, m in todo))
    cluster = connect_backend(cfg)
    try:
        desc = f"ladder {db.path.name}"
        run = play_pairings(cfg, db, pairings, on_records, cluster, desc=desc)
    finally:
        if cluster is not None:
            cluster.close()
    summary.games_played = run.games_played
    summary.games_resumed = run.games_resumed
    summary.hands_dropped = run.hands_dropped
    summary.seconds = run.seconds


def remove_bots(db_path: str | Path, names: Sequence[str], accept_unchecked: bool = False) -> int:
    """Retire the bots `names` (labels, or specs of the versions on the ladder): they play no
    more games; theirs stay, and so do their ratings. Returns the event written.
    `accept_unchecked`: as :func:`add_bots`'s."""
    path = Path(db_path)
    if not path.is_file() or is_blank(path):
        raise LadderError(f"ladder remove: no ladder at {str(path)!r}: expected its --db file")
    if not names:
        raise LadderError("ladder remove: expected one or more bots")
    with ResultsDB(path, {}, check=_check_file, accept_unchecked=accept_unchecked) as db:
        ladder = read_ladder(db)
        check_values(db)  # a damaged or edited row: one line, nothing written
        active = ladder.active()
        labels = []
        for name in names:
            known = [b.label for b in ladder.bots]
            if name in known and name not in active:
                raise LadderError(
                    f"{name!r} was retired already (event {ladder.retired_at(name)}): "
                    f"expected one of the bots on the ladder {active}"
                )
            labels.append(_resolve(active, name, read_names(path, db.meta())))
        if not ladder.is_ladder:
            ladder = Ladder(path, ladder.settings, ladder.bots, ladder.events, ladder.pairings,
                            False)  # fmt: skip
        event = write_event(db, ladder, "remove", [], labels, [], {}, None)
        db.set_meta("fingerprint", _fingerprint(read_ladder(db), ladder.settings))
    return event
