"""The manual's generated parts: tables made from the code at build time, so they cannot drift.

A hook of ``mkdocs.yml``: a page asks for a table with a line of its own,
``<!-- gen: NAME -->`` (or ``<!-- gen: NAME ARGUMENT -->``), and :func:`on_page_markdown`
puts the table there; an unknown name fails the build. The tables come from the objects
themselves: the observation layout from ``fourhundred_env.observation.OBS_FIELDS``, the
action ids from ``fourhundred_env.cards``, the rules flags and every config field from their
frozen dataclasses (each field's docstring is the string under it), the agents and their
settings from the registry, the command line from its parser, the scoring and end-of-match
examples computed by the rules' reference functions, and the results table from
``benchmarks/results.yaml``.

Run alone, ``python docs/gen_pages.py NAME [ARGUMENT]`` prints one table, and
``python docs/gen_pages.py --benchmarks`` rewrites the current-figures table at the top of
BENCHMARKS.md from the same results file (tests/test_docs.py checks it is up to date).
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import html
import importlib
import inspect
import itertools
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results.yaml"
BENCHMARKS = ROOT / "BENCHMARKS.md"
BENCH_BEGIN = "<!-- current figures: generated from benchmarks/results.yaml -->"
BENCH_END = "<!-- end of current figures -->"
_MARK = re.compile(r"^<!-- gen: ([\w:.-]+)(?: ([^>]*?))? -->$", re.MULTILINE)


class GenError(Exception):
    """A generated table that cannot be made (the build fails with this message)."""


# -- helpers ----------------------------------------------------------------------------------
def cell(text: Any, html_code: bool = True) -> str:
    """One markdown table cell: one line; code spans (single or double backticks) written as
    HTML, so that a ``|`` in them is not a column; ``<`` outside them written as an entity
    (``<out>`` is text, not a tag)."""
    parts = re.sub(r"``([^`]+)``", r"`\1`", " ".join(str(text).split())).split("`")
    for i, part in enumerate(parts):
        if i % 2 and not html_code:  # plain markdown (a file read as text): no pipes in code
            if "|" in part:
                raise GenError(f"a '|' in the code span {part!r} of a plain markdown table")
            parts[i] = f"`{part}`"
        elif i % 2:
            parts[i] = "<code>" + html.escape(part, quote=False).replace("|", "&#124;") + "</code>"
        else:
            parts[i] = part.replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
    return "".join(parts)


def table(
    header: Sequence[str], rows: Sequence[Sequence[Any]], align: str = "", html_code: bool = True
) -> str:
    """A markdown table; `align` has one letter per column (l, r, c; default l)."""
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    align = align or "l" * len(header)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(marks[a] for a in align) + "|"]
    lines += ["| " + " | ".join(cell(c, html_code) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def field_docs(cls: type) -> dict[str, str]:
    """Each dataclass field's docstring: the string literal right under it in the class body."""
    tree = ast.parse(inspect.cleandoc("\n" + inspect.getsource(cls)))
    body = next(n for n in tree.body if isinstance(n, ast.ClassDef)).body
    docs = {}
    for a, b in itertools.pairwise(body):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            docs[a.target.id] = " ".join(b.value.value.split())
    return docs


def yaml_text(value: Any) -> str:
    """A default as it is written in YAML (null, true, [a, b]) or in a spec."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    if dataclasses.is_dataclass(value) and type(value).__name__ == "Rules":
        return value.name
    if isinstance(value, float):
        return f"{value:g}"
    text = str(value)  # a path in this checkout is shown from the repository's root
    return text[len(str(ROOT)) + 1 :] if text.startswith(f"{ROOT}/") else text


def default_of(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return yaml_text(f.default)
    if f.default_factory is not dataclasses.MISSING:
        return yaml_text(f.default_factory())
    return "(required)"


def fields_table(cls: type, skip: Sequence[str] = ()) -> str:
    """Every init field of a config dataclass: name, type, default, its docstring."""
    docs = field_docs(cls)
    rows = []
    for f in dataclasses.fields(cls):
        if not f.init or f.name in skip:
            continue
        if f.name not in docs:
            raise GenError(f"{cls.__module__}.{cls.__qualname__}.{f.name} has no docstring")
        rows.append((f"`{f.name}`", f"`{f.type}`", f"`{default_of(f)}`", docs[f.name]))
    return table(("field", "type", "default", "meaning"), rows)


def find(path: str) -> Any:
    """``module:attribute`` -> the object."""
    module, _, name = path.partition(":")
    obj = importlib.import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


# -- the tables ------------------------------------------------------------------------------
def gen_observation() -> str:
    """The index table of the observation vector, from OBS_FIELDS; meanings from the module's
    docstring table, whose ranges must agree with OBS_FIELDS."""
    from fourhundred_env import observation as obs

    meanings: dict[str, tuple[str, str]] = {}
    name = None
    for line in (obs.__doc__ or "").splitlines():
        m = re.match(r"^(\w+)\s{2,}(\d+(?:-\d+)?)\s{2,}(.*)$", line)
        if m and m.group(1) != "name":
            name = m.group(1)
            meanings[name] = (m.group(2), m.group(3).strip())
        elif name and line.startswith(" " * 16) and line.strip() and not line.startswith("="):
            rng, text = meanings[name]
            meanings[name] = (rng, f"{text} {line.strip()}")
        elif line.startswith("="):
            name = None
    rows = []
    for f in obs.OBS_FIELDS.values():
        span = f"{f.start}" if f.size == 1 else f"{f.start}-{f.stop - 1}"
        if f.name not in meanings:
            raise GenError(f"observation field {f.name!r} is not in the module docstring's table")
        if meanings[f.name][0] != span:
            raise GenError(
                f"observation field {f.name!r}: the docstring says {meanings[f.name][0]}, "
                f"OBS_FIELDS {span}"
            )
        text = re.sub(r"``([^`]+)``", r"`\1`", meanings[f.name][1])
        rows.append((span, f"`{f.name}`", f.size, "scalar" if f.scalar else "0/1", text))
    head = (
        f"Version {obs.OBS_VERSION} (`OBS_VERSION`), {obs.OBS_SIZE} entries (`OBS_SIZE`), "
        "float32 (or int8 with `dtype=np.int8`, unscaled).\n\n"
    )
    return head + table(("index", "name", "size", "kind", "meaning"), rows, "lllll")


def gen_actions() -> str:
    """The fixed action ids, from the card encoding."""
    from fourhundred_env import cards

    rows = []
    for suit in cards.Suit:
        lo, hi = cards.card_id(suit, 0), cards.card_id(suit, 12)
        rows.append(
            (
                f"{lo}-{hi}",
                f"play a {suit.name.lower()} card: `13*{int(suit)} + rank`, rank 0 the 2 ... "
                "12 the ace",
                f"`{cards.action_text(lo)}` ... `{cards.action_text(hi)}`",
            )
        )
    first, last = cards.BID_OFFSET + 1, cards.BID_OFFSET + 13
    rows.append(
        (
            f"{first}-{last}",
            f"bid 1 ... 13: `{cards.BID_OFFSET} + bid`",
            f"`{cards.action_text(first)}` ... `{cards.action_text(last)}`",
        )
    )
    rows.append(
        (
            str(cards.REDEAL_ACTION),
            "ask for a no-picture redeal (instead of a bid)",
            f"`{cards.action_text(cards.REDEAL_ACTION)}`",
        )
    )
    head = (
        f"{cards.NUM_ACTIONS} actions (`NUM_ACTIONS`). Text forms are what "
        "`fourhundred_env.parse_action` reads and `action_text` writes.\n\n"
    )
    return head + table(("id", "meaning", "as text"), rows)


def gen_rules_flags() -> str:
    """Every flag of Rules: type, the default (wiki) and the pagat preset's value."""
    from fourhundred_env.rules import CONDUCT_FLAGS, Rules

    docs = field_docs(Rules)
    pagat = Rules.preset("pagat")
    rows = []
    for f in dataclasses.fields(Rules):
        p = getattr(pagat, f.name)
        rows.append(
            (
                f"`{f.name}`" + (" (conduct)" if f.name in CONDUCT_FLAGS else ""),
                f"`{f.type}`",
                f"`{yaml_text(f.default)}`",
                f"`{yaml_text(p)}`" if p != f.default else "same",
                re.sub(r"``([^`]+)``", r"`\1`", docs[f.name]),
            )
        )
    return table(("flag", "type", "wiki (default)", "pagat", "meaning"), rows)


def gen_bid_values(preset: str = "wiki") -> str:
    """What each bid is worth, below and at the thirty rule's score, from `bid_value`."""
    from fourhundred_env.rules import Rules, bid_value, min_bid

    rules = Rules.preset(preset)
    lowest = min_bid(-1000, rules)
    bids = list(range(lowest, 14))
    rows = [("score before < 30", *[bid_value(b, 0, rules) for b in bids])]
    if rules.five_six_face_value_from is not None:
        rows.append(
            (
                f"score before >= {rules.five_six_face_value_from}",
                *[bid_value(b, rules.five_six_face_value_from, rules) for b in bids],
            )
        )
    else:
        rows = [("any score", *rows[0][1:])]
    return table(("bid", *map(str, bids)), rows, "l" + "r" * len(bids))


def gen_minimums(preset: str = "wiki") -> str:
    """Minimum bid by own score and required total by top score, from the reference functions."""
    from fourhundred_env.rules import Rules, min_bid, required_total

    rules = Rules.preset(preset)
    scores = (-7, 0, 29, 30, 39, 40, 49, 50, 63, 99, 140)
    rows = [
        (
            s,
            min_bid(s, rules),
            required_total([s, min(s, 0), min(s, 0), min(s, 0)], rules),
        )
        for s in scores
    ]
    return table(
        ("score before the hand", "minimum bid (own score)", "required total (top score)"),
        rows,
        "rrr",
    )


# (score before, bid, tricks taken): computed with bid_value
_SCORING = [(28, 5, 5), (32, 5, 6), (20, 7, 6), (5, 10, 10), (29, 6, 8), (35, 6, 5),
            (35, 7, 7), (-12, 2, 0), (0, 4, 13), (12, 13, 13)]  # fmt: skip


def gen_scoring_examples(preset: str = "wiki") -> str:
    """Worked scoring examples, each line computed by the reference `bid_value`."""
    from fourhundred_env.rules import Rules, bid_value

    rules = Rules.preset(preset)
    rows = []
    for before, bid, took in _SCORING:
        value = bid_value(bid, before, rules)
        delta = value if took >= bid else -value
        why = "made" if took >= bid else "missed"
        if rules.five_six_face_value_from is not None and bid in (5, 6):
            thirty = before >= rules.five_six_face_value_from
            why += ", thirty rule" if thirty else ", below 30: table value"
        rows.append((before, bid, took, why, f"{delta:+d}", before + delta))
    return table(
        ("score before", "bid", "tricks taken", "", "points", "score after"), rows, "rrrlrr"
    )


# (scores of seats 0-3 after the hand, target in force before the check, note)
_ENDINGS = [
    ((42, 10, 5, 7), 41, "a player of team 0 reaches 41, partner above zero"),
    ((42, 10, 0, 7), 41, "partner at exactly zero: does not qualify"),
    ((42, 17, -5, 12), 41, "partner below zero: nobody wins, play on"),
    ((41, 45, 3, 1), 41, "both teams qualify after the same hand"),
    ((52, 47, 3, 1), 51, "raised target: exactly one team reaches it"),
    ((53, 55, 3, 1), 51, "both reach the raised target again"),
    ((45, 48, 3, 1), 51, "neither reaches 51, both still qualify at 41: play on at 51"),
    ((45, 48, 3, -2), 51, "neither reaches 51, only team 0 still qualifies at 41: it wins"),
    ((38, 30, 3, 1), 51, "neither qualifies even at 41: the target returns to 41"),
]
_TIES = {  # a tie under the rules that decide a simultaneous finish at once
    "highest_player": ((44, 44, 3, 1), 41, "both qualify, highest players tied: another hand"),
    "highest_team_total": ((44, 41, 3, 6), 41, "both qualify, team totals tied: another hand"),
}


def gen_end_examples(finish: str = "extend") -> str:
    """Every end-of-match case, each decided by the reference `end_of_game`."""
    from fourhundred_env.rules import Rules, end_of_game

    rules = Rules(simultaneous_finish=finish)
    rows = []
    for scores, target, note in [*_ENDINGS, *([_TIES[finish]] if finish in _TIES else [])]:
        if finish != "extend" and target != rules.target:
            continue  # only "extend" ever raises the target
        winner, next_target = end_of_game(scores, target, rules)
        result = "play on" if winner is None else f"team {winner} wins"
        shown = " / ".join(f"{a}, {b}" for a, b in ((scores[0], scores[2]), (scores[1], scores[3])))
        rows.append((shown, target, result, next_target if winner is None else "", note))
    return table(
        (
            "team 0 (seats 0, 2) / team 1 (seats 1, 3)",
            "target before",
            "result",
            "next target",
            "case",
        ),
        rows,
        "lrlrl",
    )


def gen_agents() -> str:
    """Every registered agent: its spec and description, and its settings' fields."""
    from fourhundred_env.registry import NoSettings, available_agents, entry

    out = []
    for name, description in available_agents().items():
        e = entry(name)
        out.append(f"### `{name}`\n\n{description}\n")
        if e.settings is None:
            out.append("Settings: the text after the colon, as described above.\n")
        elif e.settings is NoSettings:
            out.append(f"No settings: the spec is `{name}` alone.\n")
        else:
            if e.positional:
                out.append(
                    f"A bare first item is `{e.positional}` (`{name}:VALUE`); the others are "
                    f"`name=value`, separated by commas (`{name}:a=1,b=2`).\n"
                )
            else:
                out.append(f"Settings are `name=value`, separated by commas (`{name}:a=1,b=2`).\n")
            out.append(fields_table(e.settings) + "\n")
    return "\n".join(out)


def gen_config(path: str) -> str:
    """The fields of a config dataclass, ``module:Class``."""
    cls = find(path)
    if not dataclasses.is_dataclass(cls):
        raise GenError(f"{path} is not a dataclass")
    return fields_table(cls)


def gen_cli() -> str:
    """Every subcommand of `fourhundred` with each argument, its help and its default."""
    from fourhundred_cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    parsers = []
    for name, p in sub.choices.items():
        parsers.append((name, p))
        nested = [a for a in p._actions if isinstance(a, argparse._SubParsersAction)]
        for action in nested:  # `fourhundred ladder add`, ...: each action's own flags
            parsers += [(f"{name} {n}", q) for n, q in action.choices.items()]
    for name, p in parsers:
        fmt = p._get_formatter()
        rows = []
        for a in p._actions:
            if isinstance(a, argparse._HelpAction):
                continue
            flags = ", ".join(a.option_strings) or a.dest
            if a.option_strings and a.nargs != 0:
                flags += f" {fmt._metavar_formatter(a, a.dest.upper())(1)[0]}"
            rows.append((f"`{flags}`", fmt._expand_help(a) if a.help else ""))
        out.append(f"### `fourhundred {name}`\n\n{p.description}\n")
        out.append(table(("argument", "what it does"), rows) + "\n")
    return "\n".join(out)


def load_results(path: Path = RESULTS) -> list[dict[str, Any]]:
    """The rows of the results file, each checked: every field there, and its `script` (a
    ``benchmarks/NAME.py`` that exists, or a ``fourhundred SUBCOMMAND``) run by its command."""
    import yaml

    rows = yaml.safe_load(path.read_text())["figures"]
    keys = ("what", "figure", "anchor", "date", "load", "command", "script", "section")
    for row in rows:
        missing = [k for k in keys if k not in row]
        if missing:
            raise GenError(f"{path.name}: {row.get('what', row)!r} lacks {missing}")
        _check_script(row, path.name)
    return rows


def _check_script(row: dict[str, Any], where: str) -> None:
    script, what = row["script"], row["what"]
    if re.fullmatch(r"benchmarks/\w+\.py", script):
        if not (ROOT / script).is_file():
            raise GenError(f"{where}: {what!r} names the script {script}, which is not there")
    elif script.startswith("fourhundred "):
        from fourhundred_cli import build_parser

        sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
        words = script.split()
        if len(words) != 2 or words[1] not in sub.choices:
            raise GenError(f"{where}: {what!r} names {script!r}, not a subcommand")
    else:
        raise GenError(
            f"{where}: {what!r} names the script {script!r}: a benchmarks/NAME.py or a "
            "`fourhundred SUBCOMMAND`"
        )
    if script not in row["command"]:
        raise GenError(f"{where}: {what!r}: its command does not run its script {script}")


def gen_results() -> str:
    """The current figures (benchmarks/results.yaml), each with its command and anchor."""
    rows = [
        (r["what"], f"**{r['figure']}**", r["anchor"], r["date"], r["load"], f"`{r['command']}`")
        for r in load_results()
    ]
    return table(("what", "figure", "measured beside it", "date", "load", "command"), rows)


def benchmarks_table() -> str:
    """The same figures for the top of BENCHMARKS.md, with the section each one comes from."""
    rows = [
        (r["what"], f"**{r['figure']}**", r["anchor"], r["date"], r["load"], f"`{r['command']}`",
         r["section"])
        for r in load_results()
    ]  # fmt: skip
    header = ("what", "figure", "anchor (same run)", "date", "load", "command", "section")
    return table(header, rows, html_code=False)


def benchmarks_head() -> str:
    return (
        f"{BENCH_BEGIN}\n## Where things stand\n\n"
        "The current figures, one row each; the section of this file named in the last column "
        "says how each was measured and what was learned. Load is the machine's load average "
        "while it ran (2 cores). Generated from `benchmarks/results.yaml`: change a figure there, then run "
        "`.venv/bin/python docs/gen_pages.py --benchmarks`.\n\n"
        + benchmarks_table()
        + f"\n{BENCH_END}"
    )


def write_benchmarks(text: str | None = None) -> str:
    """BENCHMARKS.md with its head table regenerated (returned; written when `text` is None)."""
    source = BENCHMARKS.read_text() if text is None else text
    head = benchmarks_head()
    if BENCH_BEGIN in source:
        start = source.index(BENCH_BEGIN)
        end = source.index(BENCH_END) + len(BENCH_END)
        new = source[:start] + head + source[end:]
    else:
        first, _, rest = source.partition("\n\n")
        new = f"{first}\n\n{head}\n\n{rest}"
    if text is None:
        BENCHMARKS.write_text(new)
    return new


GENERATORS: dict[str, Callable[..., str]] = {
    "observation": gen_observation,
    "actions": gen_actions,
    "rules-flags": gen_rules_flags,
    "bid-values": gen_bid_values,
    "minimums": gen_minimums,
    "scoring-examples": gen_scoring_examples,
    "end-examples": gen_end_examples,
    "agents": gen_agents,
    "config": gen_config,
    "cli": gen_cli,
    "results": gen_results,
}


def expand(markdown: str, where: str = "page") -> str:
    """Every ``<!-- gen: NAME [ARG] -->`` line of `markdown` replaced by its table."""

    def one(m: re.Match) -> str:
        name, arg = m.group(1), m.group(2)
        if name not in GENERATORS:
            raise GenError(f"{where}: unknown generated table {name!r}: one of {list(GENERATORS)}")
        return GENERATORS[name](*([arg] if arg else []))

    return _MARK.sub(one, markdown)


# -- the mkdocs hook ---------------------------------------------------------------------------
_ROLE = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj):<code>~?([^<]*)</code>")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    try:
        return expand(markdown, page.file.src_uri)
    except GenError as e:
        from mkdocs.exceptions import PluginError

        raise PluginError(str(e)) from None


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:
    """Docstrings use Sphinx roles (:class:`Rules`); show them as the code they name."""
    return _ROLE.sub(lambda m: f"<code>{m.group(1).rsplit('.', 1)[-1]}</code>", html)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--benchmarks"]:
        write_benchmarks()
        print(f"rewrote the current-figures table of {BENCHMARKS}")
        return 0
    if not args or args[0] not in GENERATORS:
        print(f"usage: gen_pages.py NAME [ARG] | --benchmarks; NAME one of {list(GENERATORS)}")
        return 2
    print(GENERATORS[args[0]](*args[1:]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
