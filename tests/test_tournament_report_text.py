"""The tournament report as text: the default tournament's table fits a terminal, and games
that all stopped at max_hands are reported as draws, not as win rates."""

from __future__ import annotations

import re
from pathlib import Path

from fourhundred_tournament.config import load_config
from fourhundred_tournament.db import ReadOnlyResults
from fourhundred_tournament.report import build_report, format_report
from fourhundred_tournament.report.text import MAX_WIDTH
from fourhundred_tournament.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]


def _report_text(cfg) -> tuple[dict, str]:
    run_tournament(cfg)
    with ReadOnlyResults(cfg.db_path) as db:
        report = build_report(db, cfg)
    return report, format_report(report)


def test_the_default_tournaments_report_fits_in_120_columns_with_each_bot_once(
    tmp_path: Path,
) -> None:
    """`make run`'s config, played tiny: every line of its report (tables and wrapped notes)
    is at most 120 columns, its bots are shown by their short names in the tables (no
    fallback legend needed), the strongest bot plays, and no bot plays under two names."""
    cfg = load_config(
        ROOT / "configs" / "tournament_default.yaml",
        dict(matches=1, max_hands=1, workers=1, progress=False, bootstrap=0,
             out_dir=str(tmp_path)),
    )  # fmt: skip
    assert not {"heuristic", "heuristic-v1"} <= set(cfg.labels)  # the same bot, once
    assert "search:fast" in cfg.labels
    report, text = _report_text(cfg)
    lines = text.splitlines()
    assert MAX_WIDTH == 120 and max(map(len, lines)) <= 120, max(lines, key=len)
    assert "Agents (their names are too long" not in text
    shown = {r["agent"] for r in report["leaderboard"]}
    assert len(shown) == len(cfg.agents) and all(len(name) <= 16 for name in shown)
    head = next(line for line in lines if line.lstrip().startswith("# agent"))
    rows = lines[lines.index(head) + 2 : lines.index(head) + 2 + len(shown)]
    assert {row.split()[1] for row in rows} == shown
    assert any(line.startswith("Elo: ") for line in lines)  # the footnote, wrapped


def test_games_all_stopped_at_max_hands_are_reported_as_draws_not_win_rates(
    tmp_path: Path,
) -> None:
    cfg = load_config(None, dict(agents=["heuristic", "random"], matches=2, max_hands=1,
                                 mirror=["random"], workers=1, progress=False, bootstrap=0,
                                 out_dir=str(tmp_path)))  # fmt: skip
    report, text = _report_text(cfg)
    assert report["unfinished"] == report["games"] == 8
    lines = text.splitlines()
    assert "all 8 are draws, so there are no win rates" in text
    head = next(line for line in lines if line.lstrip().startswith("# agent"))
    for row in lines[lines.index(head) + 2 : lines.index(head) + 4]:
        assert row.split()[5:8] == ["-", "all", "drawn"]  # win%, win-95%: no 50.0
    assert "  heuristic v random: all 4 games drawn (stopped at 1 hand)" in lines
    assert "Mirror random v random: all 4 games drawn" in lines
    assert not any(line.startswith("Seat balance") for line in lines)
    start = next(i for i, line in enumerate(lines) if line.startswith("Pairwise win rate"))
    matrix = lines[start + 2 : start + 4]
    assert [line.split()[2:] for line in matrix] == [["-", "drawn"], ["drawn", "drawn"]]


def test_a_decided_game_keeps_the_win_rates(tmp_path: Path) -> None:
    """One finished game among draws: rates again (draws count one half, as documented)."""
    cfg = load_config(None, dict(agents=["heuristic", "random"], matches=2, max_hands=200,
                                 workers=1, progress=False, bootstrap=0,
                                 out_dir=str(tmp_path)))  # fmt: skip
    report, text = _report_text(cfg)
    assert report["unfinished"] < report["games"]
    assert "no win rates" not in text and "all drawn" not in text
    assert re.search(r"heuristic v random: \d+\.\d% \[", text)
    assert "Seat balance: team 0" in text
