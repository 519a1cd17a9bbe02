"""Display names of agents: any spec may end with ``name=NAME``, which is what the
reports, tables, plots, the ladder and the web's watch view show; the name changes no game
(the same rows with and without it), and a bad or clashing name is one line."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from fourhundred_agents.registry import make_agent
from fourhundred_cli import main
from fourhundred_env.errors import ConfigError, FourHundredError
from fourhundred_env.registry import (
    MAX_NAME_LENGTH,
    display_name,
    parse_spec,
    register_agent,
    spec_settings,
    split_name,
    with_name,
)
from fourhundred_tournament.config import TournamentConfigError, load_config
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.ladder.history import format_ladder, ladder_report
from fourhundred_tournament.ladder.play import LadderError, add_bots
from fourhundred_tournament.report import load_report
from tests.test_tournament_resume import same_rows

# names that sort the other way round from the specs: were a name to reach the seeding or
# the pairing's order, the random bot's games would differ
NAMED = ["heuristic:name=zz-heuristic", "random:3,name=aa-random"]
PLAIN = ["heuristic", "random:3"]
FLAGS = ["--matches", "2", "--max-hands", "8", "--workers", "1", "--no-progress",
         "--bootstrap", "20", "--deals", "public", "--table-batch", "4"]  # fmt: skip


@pytest.mark.parametrize(
    ("spec", "label", "name"),
    [
        ("heuristic", "heuristic", None),
        ("heuristic-v1:name=h1", "heuristic-v1", "h1"),
        ("random:3,name=r3", "random:3", "r3"),
        ("neural:agents/pretrained/exit.pt,symmetric=true,name=exit-sym",
         "neural:agents/pretrained/exit.pt,symmetric=true", "exit-sym"),
        ("sb3:runs/x/model.zip,name=mine", "sb3:runs/x/model.zip", "mine"),
        ("cmd:python bot.py --level=3,sandbox=off,name=my.bot", "cmd:python bot.py --level=3,sandbox=off", "my.bot"),
        ("compose:bid=minbid,play=pimc:worlds=16,name=mix", "compose:bid=minbid,play=pimc:worlds=16", "mix"),
        ("pimc:worlds=4,bids=true, name = p4", "pimc:worlds=4,bids=true", "p4"),
    ],
)  # fmt: skip
def test_the_name_is_the_spec_s_last_item_and_is_cut_off_before_the_bot_is_read(
    spec: str, label: str, name: str | None
) -> None:
    assert split_name(spec) == (label, name)
    assert display_name(spec) == (name or label)
    assert parse_spec(spec) == parse_spec(label)
    assert split_name(with_name(label, name)) == (label, name)


def test_a_named_spec_makes_the_same_bot() -> None:
    assert spec_settings("pimc:worlds=4,bids=true,name=p") == spec_settings(
        "pimc:worlds=4,bids=true"
    )
    assert spec_settings("heuristic-v1:name=h") == spec_settings("heuristic-v1")
    assert type(make_agent("random:3,name=r", seed=5)) is type(make_agent("random:3", seed=5))
    assert make_agent("random:3,name=r", seed=5).seed == 5
    composed = make_agent("compose:bid=minbid,play=random:name=inner,name=outer")
    assert composed.name == "compose:bid=minbid,play=random:name=inner"


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("heuristic:name=", "name= is empty"),
        ("random:3,name= ", "name= is empty"),
        ("heuristic:name=a b", "holds ' '"),
        ("heuristic:name=a=b", "holds '='"),
        ("heuristic:name=a:b", "holds ':'"),
        ("heuristic:name=a\nb", "holds '\\n'"),
        ("heuristic:name=a\tb", "holds '\\t'"),
        ("heuristic:name=a\x1bb", "holds '\\x1b'"),
        ("heuristic:name=" + "x" * (MAX_NAME_LENGTH + 1), f"is {MAX_NAME_LENGTH + 1} characters long"),
        ("heuristic:name=a,b", "'name=a' is not last"),
        ("heuristic-v1:name=a,b", "'name=a' is not last"),
        ("pimc:name=p,worlds=4", "'name=p' is not last"),
    ],
)  # fmt: skip
def test_a_bad_name_is_one_line_naming_what_is_wrong_and_what_is_expected(
    spec: str, says: str
) -> None:
    with pytest.raises(ConfigError) as e:
        make_agent(spec)
    text = str(e.value)
    assert says in text and "\n" not in text.replace(repr(spec)[1:-1], "")
    assert f"expected a display name of 1 to {MAX_NAME_LENGTH}" in text


def test_bad_names_on_the_command_line_are_one_line_and_play_nothing(
    tmp_path: Path, capsys
) -> None:
    out = tmp_path / "t"
    cases = [
        (["heuristic:name=a,b", "random"], "'name=a' is not last"),
        (["heuristic:name=a b", "random"], "holds ' '"),
        (["heuristic:name=", "random"], "name= is empty"),
        (["heuristic:name=x", "random:name=x"], "'x' would stand for two agents"),
        (["heuristic:name=random", "random"], "'random' would stand for two agents"),
        (["heuristic:name=a", "heuristic:name=b"], "'heuristic' is listed twice"),
    ]
    for agents, says in cases:
        capsys.readouterr()
        assert main(["tournament", "--agents", *agents, *FLAGS, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0] and "Traceback" not in err[0], err
    assert not (out / "results.sqlite").exists()
    for argv in (["play", "--bots", "heuristic:name=a b"],
                 ["bot-check", "no-such-program", "--opponent", "random:name="],
                 ["bid-eval", "heuristic:name=a:b", "--tables", "1"]):  # fmt: skip
        capsys.readouterr()
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "expected a display name" in err[0], err


def test_a_bot_s_settings_may_not_have_a_field_called_name() -> None:
    @dataclass(frozen=True)
    class Named:
        name: str = "x"

    with pytest.raises(FourHundredError, match="have a field 'name'"):
        register_agent("test-named-settings", lambda r, s, c: None, settings=Named)


def test_the_config_keeps_the_labels_and_takes_a_name_where_it_takes_an_agent() -> None:
    cfg = load_config(
        None, {"agents": NAMED, "mirror": ["aa-random"], "elo_anchor": "zz-heuristic"}
    )
    assert cfg.labels == tuple(PLAIN) and cfg.agents == tuple(NAMED)
    assert cfg.names == {"heuristic": "zz-heuristic", "random:3": "aa-random"}
    assert cfg.mirror == ("random:3",) and cfg.elo_anchor == "heuristic"
    plain = load_config(None, {"agents": PLAIN, "mirror": ["random:3"], "elo_anchor": "heuristic"})
    assert cfg.pairings() == plain.pairings() and cfg.fingerprint() == plain.fingerprint()
    with pytest.raises(TournamentConfigError, match="not among the agents"):
        load_config(None, {"agents": NAMED, "elo_anchor": "nobody"})


def test_a_tournament_shows_the_names_and_plays_the_games_it_plays_without_them(
    tmp_path: Path, capsys
) -> None:
    named, plain = tmp_path / "named", tmp_path / "plain"
    assert main(["tournament", "--agents", *NAMED, *FLAGS, "--out", str(named)]) == 0
    text = capsys.readouterr().out
    assert main(["tournament", "--agents", *PLAIN, *FLAGS, "--out", str(plain)]) == 0
    plain_text = capsys.readouterr().out
    # the games: every hand (its dealt cards and moves), match and event, row for row
    same_rows(named / "results.sqlite", plain / "results.sqlite")
    metas = []
    for folder in (named, plain):
        con = sqlite3.connect(folder / "results.sqlite")
        metas.append(dict(con.execute("SELECT key, value FROM meta").fetchall()))
        con.close()
    assert metas[0]["fingerprint"] == metas[1]["fingerprint"]
    assert json.loads(metas[0]["names"]) == {"heuristic": "zz-heuristic", "random:3": "aa-random"}
    assert "names" not in metas[1]  # a database without names is as it was before them
    # the report: the names, the same numbers
    board = [line for line in text.splitlines() if line.startswith((" 1 ", " 2 "))][:2]
    assert [line.split()[1] for line in board] == ["zz-heuristic", "aa-random"]
    assert "  zz-heuristic = heuristic" in text and "  aa-random = random:3" in text
    reports = [json.loads((f / "report.json").read_text()) for f in (named, plain)]
    shown = {"heuristic": "zz-heuristic", "random:3": "aa-random"}
    for a, b in zip(reports[0]["leaderboard"], reports[1]["leaderboard"], strict=True):
        assert a["agent"] == shown[b["agent"]] and a["spec"] == b["agent"]
        same = {k: v for k, v in a.items() if k not in ("agent", "spec") and "ms_" not in k}
        assert same == {k: b[k] for k in same}
    assert [(p["agent"], p["opponent"], p["rate"]) for p in reports[0]["pairwise"]] == [
        (shown[p["agent"]], shown[p["opponent"]], p["rate"]) for p in reports[1]["pairwise"]
    ]
    assert set(reports[0]["matrix"]) == {"zz-heuristic", "aa-random"}
    assert "zz-heuristic" in (named / "leaderboard.csv").read_text()
    assert plain_text.count("\n") == text.count("\n") - 2  # the two lines naming the specs


def test_report_only_resume_and_rename_keep_the_games(tmp_path: Path, capsys) -> None:
    out = tmp_path / "t"
    db = out / "results.sqlite"
    assert main(["tournament", "--agents", *NAMED, *FLAGS, "--out", str(out)]) == 0
    capsys.readouterr()
    before = sqlite3.connect(db).execute("SELECT * FROM matches ORDER BY 1, 2, 3, 4").fetchall()
    # the database alone: its names
    assert main(["tournament", "--report-only", "--db", str(db)]) == 0
    assert " 1 zz-heuristic " in capsys.readouterr().out
    cfg, report = load_report(db)
    assert cfg.names == {"heuristic": "zz-heuristic", "random:3": "aa-random"}
    assert {r["agent"] for r in report["leaderboard"]} == {"zz-heuristic", "aa-random"}
    # another name for a report only: shown, nothing written
    renamed = ["heuristic:name=h", "random:3,name=r"]
    assert main(["tournament", "--report-only", "--db", str(db), "--agents", *renamed]) == 0
    assert " 1 h " in capsys.readouterr().out
    assert load_report(db)[0].names == {"heuristic": "zz-heuristic", "random:3": "aa-random"}
    # a resume under other names is the same tournament: nothing played, the names recorded
    assert main(["tournament", "--agents", *renamed, *FLAGS, "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "0 games played" in text and " 1 h " in text
    assert load_report(db)[0].names == {"heuristic": "h", "random:3": "r"}
    # and without names: the specs again
    assert main(["tournament", "--agents", *PLAIN, *FLAGS, "--out", str(out)]) == 0
    assert " 1 heuristic " in capsys.readouterr().out
    assert load_report(db)[0].names == {}
    after = sqlite3.connect(db).execute("SELECT * FROM matches ORDER BY 1, 2, 3, 4").fetchall()
    assert after == before
    # the plots read the names too
    pytest.importorskip("matplotlib")
    from fourhundred_tournament.plots import bids_and_tricks

    cfg = load_config(None, {"agents": NAMED, "matches": 2, "db": str(db)})
    with ReadOnlyResults(db) as r:
        assert set(bids_and_tricks(r, cfg)) == {"zz-heuristic", "aa-random"}


def test_a_ladder_shows_the_names_and_refuses_a_clash(tmp_path: Path, capsys) -> None:
    play = {"workers": 1, "progress": False, "table_batch": 4, "deals": "public"}
    db = tmp_path / "ladder.sqlite"
    with pytest.raises(LadderError, match="'x' would stand for two bots"):
        add_bots(db, ["minbid:name=x", "random:name=x"], matches=1, max_hands=6, play=play)
    assert not db.exists()
    add_bots(db, ["minbid:name=mb", "random:name=rnd"], matches=1, max_hands=6, play=play)
    before = db.read_bytes()
    with pytest.raises(LadderError, match="'mb' would stand for two bots"):
        add_bots(db, ["heuristic:name=mb"], matches=1, max_hands=6, play=play)
    with pytest.raises(LadderError, match="given twice"):
        add_bots(db, ["heuristic:name=a", "heuristic:name=b"], matches=1, max_hands=6, play=play)
    assert db.read_bytes() == before
    add_bots(db, ["heuristic:name=h"], matches=1, max_hands=6, play=play, anchor="mb")
    with ReadOnlyResults(db) as r:
        report = ladder_report(r, bootstrap=0)
        assert read_ladder_labels(r) == ["heuristic", "minbid", "random"]
    assert report["names"] == {"minbid": "mb", "random": "rnd", "heuristic": "h"}
    assert report["anchor"] == "minbid"
    text = format_ladder(report)
    assert "mb pinned at 1500" in text and "added h:" in text and "h v mb: 2/2 games" in text
    assert "heuristic" not in text.split("Elo:")[0]
    assert main(["ladder", "report", "--db", str(db), "--anchor", "rnd", "--bootstrap", "0"]) == 0
    assert "rnd pinned at 1500" in capsys.readouterr().out
    assert main(["ladder", "remove", "rnd", "--db", str(db)]) == 0
    with ReadOnlyResults(db) as r:
        assert not next(b for b in ladder_report(r, bootstrap=0)["bots"] if b["name"] == "rnd")[
            "active"
        ]


def read_ladder_labels(db: ReadOnlyResults) -> list[str]:
    from fourhundred_tournament.db.ladder import read_ladder

    return sorted(b.label for b in read_ladder(db).bots)


def test_the_web_shows_the_names(tmp_path: Path) -> None:
    pytest.importorskip("starlette", reason="the web extra (starlette) is not installed")
    from fourhundred_web.bots import agent_choices
    from fourhundred_web.watch import Watch

    choices = agent_choices(["random:3,name=three"])
    assert choices["three"].spec == "random:3" and choices["three"].label == "three"
    with pytest.raises(FourHundredError, match="the name 'heuristic' is taken"):
        agent_choices(["random:3,name=heuristic"])
    out = tmp_path / "t"
    assert main(["tournament", "--agents", *NAMED, *FLAGS, "--out", str(out)]) == 0
    summary = Watch(out / "results.sqlite").summary()
    assert summary["agents"] == sorted(PLAIN)
    assert summary["names"] == {"heuristic": "zz-heuristic", "random:3": "aa-random"}
