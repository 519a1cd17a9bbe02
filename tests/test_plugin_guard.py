"""Code of your own (``features=``, ``reward=``) that ends the program or never returns at the
start is one line and an error status, never a silent status 0 or a hang (agents/hooks.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fourhundred_agents import hooks
from fourhundred_agents.neural.extra_features import load_features
from fourhundred_cli import main
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules

EXITS = "import sys\nsys.exit(0)\ndef f(view):\n    return [[0.0]] * view.size\n"
LOOPS = "def f(view):\n    while True:\n        pass\n"
HANGS_AT_IMPORT = "import time\nwhile True:\n    time.sleep(0.01)\ndef f(view):\n    return 0\n"
CATCHES_ALL = (
    "def f(view):\n    while True:\n        try:\n            pass\n"
    "        except Exception:\n            pass\n"
)


def _module(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return f"{path}:f"


def test_a_features_module_that_exits_at_import_ends_the_tournament_with_one_line(
    tmp_path: Path, capsys
) -> None:
    spec = _module(tmp_path, "exits", EXITS)
    code = main(["tournament", "--agents", f"neural-bid:agents/pretrained/bidder.pt,"
                 f"features={spec}", "heuristic-v1", "--matches", "1", "--db",
                 str(tmp_path / "t.db"), "--out", str(tmp_path / "out"), "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert err.count("\n") == 0 and "ended the program (sys.exit(0)) at import" in err, err


def test_a_reward_that_exits_on_its_sample_is_an_error_line(tmp_path: Path) -> None:
    from fourhundred_train.bid_q.hooks import load_reward

    path = tmp_path / "quits.py"
    path.write_text("import sys\ndef f(outcome):\n    sys.exit(3)\n")
    with pytest.raises(ConfigError, match=r"ended the program \(sys.exit\(3\)\) on its sample"):
        load_reward(f"{path}:f")


@pytest.mark.parametrize(
    ("text", "doing"),
    [(LOOPS, "on its sample views"), (CATCHES_ALL, "on its sample views"),
     (HANGS_AT_IMPORT, "at import")],
)  # fmt: skip
def test_an_endless_feature_function_is_stopped_by_the_time_limit(
    tmp_path: Path, monkeypatch, text: str, doing: str
) -> None:
    monkeypatch.setattr(hooks, "CHECK_SECONDS", 0.5)
    spec = _module(tmp_path, f"endless_{len(text)}", text)
    with pytest.raises(ConfigError) as e:
        load_features(spec, Rules())
    message = str(e.value)
    assert "\n" not in message
    assert f"did not finish {doing} within 0.5 s (CHECK_SECONDS" in message, message


def test_the_guard_gives_back_an_alarm_it_found(monkeypatch) -> None:
    import signal

    monkeypatch.setattr(hooks, "CHECK_SECONDS", 5.0)
    seen: list[int] = []
    old = signal.signal(signal.SIGALRM, lambda *_: seen.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with hooks.guarded("features", "x", "at import"):
            pass
        left = signal.setitimer(signal.ITIMER_REAL, 0)[0]
        assert 25.0 < left <= 30.0
        assert signal.getsignal(signal.SIGALRM) is not None and not seen
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
