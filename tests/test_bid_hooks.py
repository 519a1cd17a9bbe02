"""Your own reward for the fitted-Q bidder (train/bid_q/hooks.py), without editing the source:
a reward that pays for bold bids made changes what the bidder learns; a reward that does not
import, is not a function or answers the wrong shape is one line before any work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402
from fourhundred_train.bid_q import (  # noqa: E402
    BidQTrainer,
    QBidder,
    load_bid_q_config,
    record_positions,
)
from fourhundred_train.bid_q.hooks import load_reward, sample_outcome  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bid_reward.py"
TINY = ["positions=3000", "num_tables=128", "hidden=32", "layers=1", "epochs=4",
        "batch_size=256", "net=mlp", "bid_head=value", "worlds=0", "workers=1", "per_point=0",
        "iterations=1", "eval_every=0"]  # fmt: skip


def _bold_share(policy: Path) -> float:
    """The share of bids of 5 or more the learned bidder makes on fixed positions."""
    from fourhundred_agents.neural.checkpoint import load_policy

    engine = Engine(Rules())
    positions = record_positions(engine, QBidder(engine), 2000, seed=99, tables=64,
                                 max_hands=200, first_match=10**6)  # fmt: skip
    net, _, _ = load_policy(str(policy))
    actions = QBidder(engine, net)(positions, np.arange(positions.batch_size))
    bids = actions - 51  # BID_OFFSET: bids 1..13 (65, a redeal, reads 14: not bold)
    return float(((bids >= 5) & (bids <= 13)).mean())


def test_a_reward_that_pays_for_bold_bids_makes_the_bidder_bolder(tmp_path: Path) -> None:
    bonus = tmp_path / "bonus.py"
    bonus.write_text(
        textwrap.dedent("""
        import numpy as np

        def big(outcome):
            made = outcome.made[np.arange(outcome.seat.size), outcome.seat]
            return outcome.value + 40.0 * (made & (outcome.bid >= 5))
    """)
    )
    shares = {}
    for name, extra in (("plain", []), ("bonus", [f"reward={bonus}:big"])):
        cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, *extra])
        BidQTrainer(cfg, tmp_path / name, progress=False).train()
        shares[name] = _bold_share(tmp_path / name / "policy.pt")
    assert shares["bonus"] > shares["plain"] + 0.05, shares


def test_the_example_reward_answers_the_contract() -> None:
    fn = load_reward(f"{EXAMPLE}:big_bid_bonus")
    sample = sample_outcome()
    out = fn(sample)
    # row 0: bid 4 made (no bonus); row 1: bid 6, four tricks, not made (no bonus)
    np.testing.assert_array_equal(out, sample.value)


BAD_REWARDS = [
    ("no_such_module_x:f", "cannot import 'no_such_module_x'"),
    ("numpy:no_such_thing", "module 'numpy' has no 'no_such_thing'"),
    ("numpy:pi", "is a float: expected a function"),
    ("justaword", "expected 'package.module:function'"),
    ("{tmp}/shape.py:wrong", "returned shape (3,) for 2 outcomes"),
    ("{tmp}/shape.py:fails", "failed on a sample of 2 outcomes (ZeroDivisionError"),
    ("{tmp}/shape.py:nan", "values that are not finite"),
]
"""(reward, what its one line says): rewards refused before any work (`{tmp}`: a folder
holding `write_bad_rewards`'s file)."""


def write_bad_rewards(folder: Path) -> None:
    """shape.py in `folder`: rewards that answer the wrong shape, fail, or are not finite."""
    (folder / "shape.py").write_text(
        textwrap.dedent("""
        import numpy as np

        def wrong(outcome):
            return np.zeros(3)

        def fails(outcome):
            return 1 / 0

        def nan(outcome):
            return outcome.value * np.nan
    """)
    )


@pytest.mark.parametrize(("reward", "said"), BAD_REWARDS)
def test_a_bad_reward_is_one_line_before_any_work(
    reward: str, said: str, tmp_path: Path, capsys
) -> None:
    write_bad_rewards(tmp_path)
    reward = reward.format(tmp=tmp_path)
    runs = tmp_path / "runs"
    code = main(["train", "bidding_q", *TINY, f"reward={reward}", f"runs_dir={runs}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not runs.exists() or not any(runs.iterdir())


def test_a_custom_reward_values_every_world_of_the_bid_search(tmp_path: Path) -> None:
    """worlds > 0: every play-out of every world goes through the reward. One that returns
    `outcome.value` (the match-win change) gives the search's own values less the estimate
    before the hand, the same for every bid of a position; one that pays for bold bids made
    adds to exactly those bids."""
    from fourhundred_train.bid_q import world_values

    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 24, 5, 8, 200, 0)
    code = tmp_path / "rewards.py"
    code.write_text(
        textwrap.dedent("""
        import numpy as np

        def own(outcome):
            return outcome.value

        def bold(outcome):
            made = outcome.made[np.arange(outcome.seat.size), outcome.seat]
            return outcome.value + 40.0 * (made & (outcome.bid >= 5))
    """)
    )
    base = [*TINY, "worlds=4", "per_point=0.003"]
    q = {name: world_values(engine, pos, load_bid_q_config("configs/bidding_q.yaml",
                                                           [*base, *extra]), chunk=10)
         for name, extra in (("search", []), ("own", [f"reward={code}:own"]),
                             ("bold", [f"reward={code}:bold"]))}  # fmt: skip
    legal = np.isfinite(q["search"])
    np.testing.assert_array_equal(np.isfinite(q["own"]), legal)
    q = {name: np.where(legal, v, 0.0) for name, v in q.items()}
    shift = np.where(legal, q["search"] - q["own"], np.nan)  # 100 x the estimate before
    spread = np.nanmax(shift, axis=1) - np.nanmin(shift, axis=1)
    assert spread.max() < 1e-3, spread.max()
    assert ((np.nanmean(shift, axis=1) > 0) & (np.nanmean(shift, axis=1) < 100)).all()
    bonus = q["bold"] - q["own"]
    bids = np.arange(q["own"].shape[1]) + 1  # column j: bid j + 1; the last asks for a redeal
    assert (np.abs(bonus[:, bids < 5]) < 1e-3).all()
    assert (bonus[:, (bids >= 5) & (bids <= 13)] >= -1e-3).all()
    assert bonus[:, (bids >= 5) & (bids <= 13)].max() > 1.0


def test_your_own_card_player_plays_the_matches_and_the_play_outs(tmp_path: Path) -> None:
    """play=SPEC: the bot that plays every card (and the other side's bids) in the positions'
    matches and the play-outs; the bidder's checkpoint records it as its card player."""
    from fourhundred_agents import make_agent

    small = [a for a in TINY if not a.startswith(("positions", "worlds"))]
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*small, "positions=300", "worlds=0",
                                                          "play=heuristic", "eval_every=1",
                                                          "eval_deals=1", "eval_matches=1"])  # fmt: skip
    rows = BidQTrainer(cfg, tmp_path / "run", progress=False).train()
    assert np.isfinite(rows[-1]["eval/bid_dwin_pp"]) and "eval/win_rate" in rows[-1]
    checkpoint = torch.load(tmp_path / "run" / "policy.pt", weights_only=False)
    assert checkpoint["extra"]["play_policy"] == "heuristic"
    agent = make_agent(f"neural-bid:{tmp_path / 'run' / 'policy.pt'}", Rules(), 0)
    assert type(agent.player).__name__ == "HeuristicAgent"
    with pytest.raises(ConfigError, match="expected worlds: 0"):
        load_bid_q_config("configs/bidding_q.yaml", ["play=heuristic"])


def test_a_card_player_that_is_no_bot_is_one_line_before_any_work(tmp_path: Path, capsys) -> None:
    runs = tmp_path / "runs"
    code = main(["train", "bidding_q", *TINY, "play=no-such-bot", f"runs_dir={runs}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "unknown agent 'no-such-bot'" in err, err
    assert not runs.exists() or not any(runs.iterdir())
