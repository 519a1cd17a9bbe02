"""A checkpoint knows what it can decide (agents/neural/checkpoint.py `checkpoint_decides`):
a bidding-only checkpoint named as a card player is refused in one line naming
``neural-bid:`` and ``compose:``, wherever specs are resolved (fourhundred_env/registry.py
`make_agent`), and ``evaluate-run`` plays a bidding run's model as the bidder it is."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Rules  # noqa: E402
from fourhundred_env.configs import save_yaml  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402

BIDDER = "agents/pretrained/bidder.pt"


def _one_line_naming_both(text: str) -> None:
    lines = text.strip().splitlines()
    assert len(lines) == 1, lines
    assert "Traceback" not in lines[0]
    assert f"neural-bid:{BIDDER}" in lines[0] and "compose:bid=" in lines[0], lines[0]


def test_a_bidding_only_checkpoint_is_refused_as_a_player_and_accepted_as_a_bidder() -> None:
    with pytest.raises(ConfigError) as e:
        make_agent(f"neural:{BIDDER}", Rules(), seed=0)
    _one_line_naming_both(str(e.value))
    # the same checkpoint where only its bids are asked, or with card play of its own
    for spec in (f"neural-bid:{BIDDER}", f"compose:bid=neural:{BIDDER},play=heuristic-v1",
                 f"compose:bid=neural-bid:{BIDDER},play=heuristic-v1"):  # fmt: skip
        assert make_agent(spec, Rules(), seed=0).decides == "both"
    assert make_agent(f"neural:{BIDDER}", Rules(), seed=0, decides="bid").decides == "bid"
    assert make_agent("neural:agents/pretrained/exit.pt", Rules(), seed=0).decides == "both"


def test_every_command_and_environment_refuses_it_alike(tmp_path: Path, capsys) -> None:
    import gymnasium as gym

    import fourhundred_env.envs  # noqa: F401  (registers the environments)

    spec = f"neural:{BIDDER}"
    out = tmp_path / "t"
    for argv in (
        ["tournament", "--agents", spec, "heuristic-v1", "--matches", "1", "--out", str(out)],
        ["bot-check", "heuristic-v1", "--opponent", spec],
        ["play", "--bots", spec],
    ):
        capsys.readouterr()
        assert main(argv) == 2, argv
        _one_line_naming_both(capsys.readouterr().err)
    assert not (out / "results.sqlite").exists()
    with pytest.raises(ConfigError) as e:
        env = gym.make("FourHundred-v0", opponents=spec)
        env.reset(seed=0)
    _one_line_naming_both(str(e.value))


def test_evaluate_run_plays_a_fitted_q_run_as_the_bidder_it_is(tmp_path: Path, capsys) -> None:
    """A fitted-Q run folder (config.yaml of mode bid_q, policy.pt, one iteration): its model
    is played as neural-bid: (heuristic-v1's cards) and wins a share of its matches against
    heuristic-v1, where playing it as neural: won none."""
    from fourhundred_train.bid_q import BidQConfig
    from fourhundred_train.plots import read_scalars

    run = tmp_path / "bidding_q__1__x"
    run.mkdir()
    shutil.copy(BIDDER, run / "policy.pt")
    (run / "iter_0.pt").write_bytes(b"")  # one iteration done
    save_yaml(BidQConfig(positions=1000, iterations=1).to_dict(), run / "config.yaml")
    assert main(["evaluate-run", str(run), "--matches", "8", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert f"neural-bid:{run / 'policy.pt'} against heuristic-v1" in text
    rate = float(re.search(r"win rate\s+([\d.]+)%", text).group(1))
    assert rate >= 25.0, text  # bidder.pt with heuristic-v1's cards: about 57% (README)
    scalars = read_scalars(run)
    assert scalars["eval/win_rate"].steps.tolist() == [1000]  # positions fitted
    np.testing.assert_allclose(scalars["eval/win_rate"].values, rate / 100, atol=1e-3)
