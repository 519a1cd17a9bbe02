"""`fourhundred record show|check|convert|export`: game records (docs/records.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from fourhundred_env.errors import FourHundredError
from fourhundred_env.game_records.files import GameRecord, read_record, write_record
from fourhundred_env.render import score_sheet
from fourhundred_env.table import Table

NAME = "record"
HELP = "game records: show, check or convert a record file; export a tournament's match"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Add this subcommand's flags to `p`."""
    sub = p.add_subparsers(dest="record_command", required=True, metavar="ACTION",
                           help="show, check, convert or export")  # fmt: skip
    fmt = p.formatter_class
    show = sub.add_parser("show", formatter_class=fmt, help="print a record's score sheet",
                          description="print a record's score sheet, or one hand trick by trick")  # fmt: skip
    show.add_argument("file", metavar="FILE", help="a record, text (.400, .txt) or JSON (.json)")
    show.add_argument("--hand", type=int, metavar="N",
                      help="show hand N (from 1) trick by trick (default: the score sheet)")  # fmt: skip
    check = sub.add_parser("check", formatter_class=fmt, help="replay a record and say whether "
                           "it is a game", description="replay a record through the engine: "
                           "'ok' and the scores, or the one line that is wrong")  # fmt: skip
    check.add_argument("file", metavar="FILE", help="a record, text or JSON")
    convert = sub.add_parser("convert", formatter_class=fmt, help="rewrite a record as text or "
                             "JSON", description="read a record and write it again, JSON for an "
                             "OUT ending in .json, else text")  # fmt: skip
    convert.add_argument("file", metavar="FILE", help="a record, text or JSON")
    convert.add_argument("out", metavar="OUT", help="where to write it (.json: JSON; else text)")
    export = sub.add_parser("export", formatter_class=fmt, help="a tournament's match as records",
                            description="rebuild a match of a tournament's results database "
                            "card by card from the moves it keeps (a database without them: by "
                            "playing its bots again, as the web table's replays do) and write it "
                            "as records with the seats' labels")  # fmt: skip
    export.add_argument("db", metavar="DB", help="the tournament's SQLite results file")
    export.add_argument("--match", type=int, required=True, metavar="N",
                        help="the match id (required)")  # fmt: skip
    export.add_argument("--pair", nargs=2, metavar=("A", "B"),
                        help="the pairing, two agent labels (default: the one pairing that has "
                        "match N)")  # fmt: skip
    export.add_argument("--game", type=int, choices=(0, 1),
                        help="which game of the duplicate match: 0, the first agent of the pair on "
                        "seats 0 and 2; 1, the partnerships swapped (default: both, two files)")  # fmt: skip
    export.add_argument("-o", "--out", metavar="OUT",
                        help="the file to write (.json: JSON; else text); with both games, "
                        "OUT's name gains .game0 and .game1 before its suffix; a folder (or "
                        "a name ending in /): matchN.gameG.400 in it "
                        "(default: matchN.game0.400 and matchN.game1.400 here)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Run the subcommand with the parsed `args`; returns the exit status (bad input raises
    a FourHundredError, which `main` reports in one line with status 2)."""
    if args.record_command == "show":
        print(show(read_record(args.file), args.hand))
    elif args.record_command == "check":
        print(check_line(read_record(args.file)))
    elif args.record_command == "convert":
        record = read_record(args.file)
        path = write_record(record, args.out)
        form = "JSON" if path.suffix.lower() == ".json" else "text"
        print(f"wrote {path} ({form}, {len(record.hands)} hands)")
    else:
        export(args)
    return 0


def check_line(record: GameRecord) -> str:
    """'ok: N hands, scores ...' and how the match stands (the record replays: it was read)."""
    table = Table.from_record(record)
    n = len(record.hands)
    line = f"ok: {n} hand{'' if n == 1 else 's'}, scores {' '.join(str(s) for s in table.scores)}"
    if table.winner is not None:
        return f"{line}, team {table.winner} won"
    if table.phase in ("bid", "play"):
        return f"{line}, hand {table.hand_number} in progress (S{table.to_play} to {table.phase})"
    return f"{line}, the match goes on"


def show(record: GameRecord, hand: int | None = None) -> str:
    """The score sheet of `record`, or hand number `hand` (from 1) trick by trick."""
    table = Table.from_record(record)
    head = [f"{record.rules.name} rules, target {record.target}"]
    if record.seats is not None:
        head.append("seats: " + ", ".join(f"S{s} {label}" for s, label in enumerate(record.seats)))
    if hand is None:
        lines = [*head, score_sheet(table.history, record.rules)]
        if table.phase in ("bid", "play"):
            lines.append(f"hand {table.hand_number} in progress:\n{table.render()}")
        return "\n".join(lines)
    if not 1 <= hand <= len(record.hands):
        raise FourHundredError(
            f"--hand {hand}: the record has hands 1 to {len(record.hands)}" if record.hands
            else f"--hand {hand}: the record has no hands"
        )  # fmt: skip
    h = record.hands[hand - 1]
    before = sum(len(x.moves) for x in record.hands[: hand - 1])
    lines = [*head, Table.from_record(record, upto=before).render()]
    first = (h.dealer + 1) % 4  # type: ignore[operator]
    bids = [f"S{(first + k) % 4} {b}" for k, b in enumerate(h.bids)]
    lines.append("  bids: " + (", ".join(bids) if bids else "-"))
    for k, (trick, winner) in enumerate(h.tricks_played(), 1):
        cards = "  ".join(f"S{seat} {card}" for seat, card in trick)
        lines.append(f"  trick {k:>2}: {cards}" + (f"  -> S{winner}" if winner is not None else ""))
    if hand <= len(table.history):
        sheet = score_sheet([table.history[hand - 1]], record.rules).splitlines()
        lines += [line for line in sheet if not line.startswith("Winner:")]  # (of 1 hand)
    else:
        lines.append(f"in progress:\n{table.render()}")
    return "\n".join(lines)


def export(args: argparse.Namespace) -> None:
    """Write the games of match `args.match` of a results database as records."""
    from fourhundred_tournament.db import ReadOnlyResults
    from fourhundred_tournament.replay import replay_game, tournament_info

    with ReadOnlyResults(args.db) as db:
        pair = _pair(db, args.match, args.pair)
        info = tournament_info(db)
        games = (0, 1) if args.game is None else (args.game,)
        records = []
        for game in games:
            key = (pair[0], pair[1], args.match, game)
            replayed = replay_game(db, key)
            if replayed.reason is not None:
                raise FourHundredError(
                    f"match {args.match} ({pair[0]} v {pair[1]}), game {game} cannot be exported: "
                    f"{replayed.reason}"
                )
            seats = tuple(pair[(seat & 1) ^ game] for seat in range(4))
            history = [h.record for h in replayed.hands if h.record is not None]
            record = GameRecord.from_history(
                history, info.rules, seats, replayed.match.first_dealer
            )
            stored = tuple(getattr(replayed.match, f"score{s}") for s in range(4))
            if Table.from_record(record).scores != stored:  # the record itself must give them
                raise FourHundredError(
                    f"match {args.match}, game {game}: the record does not give the stored "
                    f"scores {stored}"
                )
            records.append((game, record, stored))
    for game, record, stored in records:
        path = write_record(record, _out_path(args.out, args.match, game, len(games) > 1))
        print(f"wrote {path}: match {args.match} game {game}, {record.seats[0]} and "  # type: ignore[index]
              f"{record.seats[2]} (S0, S2) v {record.seats[1]} and {record.seats[3]} (S1, S3), "  # type: ignore[index]
              f"{len(record.hands)} hands, scores {' '.join(str(s) for s in stored)}")  # fmt: skip


def _pair(db: object, match: int, given: list[str] | None) -> tuple[str, str]:
    rows = db.query(  # type: ignore[attr-defined]
        "SELECT DISTINCT pair_a, pair_b FROM matches WHERE match_id = ? ORDER BY 1, 2", (match,)
    )
    pairs = [(str(a), str(b)) for a, b in rows]
    if given is not None:
        for a, b in (tuple(given), tuple(reversed(given))):
            if (a, b) in pairs:
                return a, b
    elif len(pairs) == 1:
        return pairs[0]
    known = "; ".join(f"{a} {b}" for a, b in pairs) or "none"
    if given is not None:
        raise FourHundredError(
            f"--pair {' '.join(given)}: no finished match {match} of that pairing: the pairings "
            f"with match {match}: {known}"
        )
    raise FourHundredError(
        f"--match {match}: {len(pairs)} pairings have a finished match {match} ({known}): "
        "expected one, or --pair A B"
    )


def _out_path(out: str | None, match: int, game: int, both: bool) -> Path:
    name = f"match{match}.game{game}.400"
    if out is None:
        return Path(name)
    path = Path(out)
    if out.endswith(("/", os.sep)) or path.is_dir():  # a folder: the default names in it
        path.mkdir(parents=True, exist_ok=True)
        return path / name
    return path.with_name(f"{path.stem}.game{game}{path.suffix}") if both else path
