"""Your own reward for PPO bidding (``reward=package.module:function``), the fitted-Q bidder's
hook (train/bid_q/hooks.py) with its contract: the function is what PPO is paid for a hand
and what the rollout values value a play-out by; a reward that does not answer is one line
before any work; a run stays the same for the same seed; the reward is recorded."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_bid_hooks import BAD_REWARDS, write_bad_rewards  # noqa: E402

from fourhundred_cli import main  # noqa: E402
from fourhundred_train.config import ConfigError, load_config  # noqa: E402
from fourhundred_train.objectives import BidReward, MatchValue, RolloutValues  # noqa: E402
from fourhundred_train.ppo import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "bid_reward.py"
TINY_BID = [
    "mode=bidding", "num_tables=64", "rollout_steps=8", "total_decisions=1024", "hidden=32",
    "layers=1", "eval_every=0", "checkpoint_every=1", "num_minibatches=2", "update_epochs=1",
    "play_policy=heuristic-v1", "learner_partnership=true", "match_value_points=40",
]  # fmt: skip
REWARDS = """
import numpy as np

def same(outcome):
    return outcome.value

def const(outcome):
    return np.full(outcome.seat.size, 3.0)

def echo(outcome):
    # all of the outcome, so that a test can read it back from the rewards
    rows = np.arange(outcome.seat.size)
    made = outcome.made[rows, outcome.seat]
    return (outcome.value + 1000 * outcome.bid + 100 * outcome.tricks[rows, outcome.seat]
            + 10000 * made + 20000 * outcome.thrown_in + 0 * outcome.target)
"""


@pytest.fixture
def rewards(tmp_path: Path) -> Path:
    path = tmp_path / "rewards.py"
    path.write_text(textwrap.dedent(REWARDS))
    return path


def _trainer(run: Path, *overrides: str) -> Trainer:
    return Trainer(load_config(None, [*TINY_BID, *overrides]), run)


def test_your_reward_is_what_ppo_is_paid_for_a_hand(rewards: Path, tmp_path: Path) -> None:
    trainer = _trainer(tmp_path / "echo", f"reward={rewards}:echo", "match_value_points=0")
    assert trainer.objective(BidReward) is not None and trainer.objective(MatchValue) is None
    r = trainer.collect()
    paid = trainer.rewards(r) / np.float32(trainer.config.reward_scale)
    step, table = np.nonzero(r.done)
    assert step.size > 20 and r.thrown_in[step, table].any() and (~r.thrown_in[step, table]).any()
    for seat in (0, 2):  # the learner's seats; the others are paid nothing
        points = r.seat_rewards[step, table]
        bids = r.hand_bids[step, table].astype(np.int64)
        tricks = r.hand_tricks[step, table].astype(np.int64)
        thrown = r.thrown_in[step, table]
        made = (tricks[:, seat] >= bids[:, seat]) & ~thrown
        team = points[:, seat] + points[:, (seat + 2) % 4]  # the value: the team's points
        expected = (team + 1000 * bids[:, seat] + 100 * tricks[:, seat] + 10000 * made
                    + 20000 * thrown)  # fmt: skip
        np.testing.assert_allclose(paid[step, table, seat], expected, rtol=1e-5)
        np.testing.assert_array_equal(made[~thrown], points[~thrown, seat] > 0)
    assert not paid[:, :, [1, 3]].any()
    ended = np.zeros(r.done.shape, bool)
    ended[step, table] = True
    assert not paid[~ended].any()  # nothing before a hand ends


def test_a_constant_reward_is_all_ppo_sees_and_values_every_bid_played_out(
    rewards: Path, tmp_path: Path
) -> None:
    trainer = _trainer(tmp_path / "const", f"reward={rewards}:const", "teacher=heuristic-v1",
                       "rollout_share=1.0")  # fmt: skip
    r = trainer.collect()
    paid = trainer.rewards(r)
    scale = np.float32(trainer.config.reward_scale)
    np.testing.assert_array_equal(paid[r.done][:, [0, 2]], np.float32(3.0) * scale)
    q = r.rollout_q
    legal = np.isfinite(q)
    assert len(q) > 0 and (q[legal] == 3.0).all()  # every play-out of every bid is paid 3
    assert trainer.objective(RolloutValues).value is not None


def test_the_trainers_own_value_as_your_reward_is_the_match_value_run_bit_for_bit(
    rewards: Path, tmp_path: Path
) -> None:
    """A reward that returns ``outcome.value`` pays what reward match_value pays (the rollout
    values too) and trains the very same weights: the outcome's value is the trainer's own."""
    extra = ["teacher=heuristic-v1", "rollout_share=0.5", "total_decisions=1536"]
    runs = {}
    for name, reward in (("match_value", "match_value"), ("same", f"{rewards}:same")):
        trainer = _trainer(tmp_path / name, f"reward={reward}", *extra)
        r = trainer.collect()
        runs[name] = (trainer.rewards(r)[..., [0, 2]], r.rollout_q)
        history = trainer.train(progress=False)
        runs[name] += ([p.detach().numpy() for p in trainer.params], history[-1])
    (paid_a, q_a, weights_a, last_a), (paid_b, q_b, weights_b, last_b) = runs.values()
    assert np.abs(paid_a).max() > 0
    np.testing.assert_array_equal(paid_a, paid_b)
    np.testing.assert_array_equal(q_a, q_b)
    for a, b in zip(weights_a, weights_b, strict=True):
        np.testing.assert_array_equal(a, b)
    # the match value is still logged beside your reward's mean, which is it here
    assert last_b["charts/win_change_pp"] == last_a["charts/win_change_pp"]
    assert np.isfinite(last_b["charts/bid_reward_per_hand"])


def test_the_example_pays_its_bonus_for_bold_bids_made(tmp_path: Path) -> None:
    plain = _trainer(tmp_path / "plain", "reward=match_value")
    bonus = _trainer(tmp_path / "bonus", f"reward={EXAMPLE}:big_bid_bonus")
    r_plain, r_bonus = plain.collect(), bonus.collect()
    np.testing.assert_array_equal(r_plain.action, r_bonus.action)  # the same rollout
    scale = np.float32(plain.config.reward_scale)
    extra = (bonus.rewards(r_bonus) - plain.rewards(r_plain))[..., [0, 2]] / scale
    bids, tricks = r_bonus.hand_bids[..., [0, 2]], r_bonus.hand_tricks[..., [0, 2]]
    made = (tricks >= bids) & ~r_bonus.thrown_in[..., None] & r_bonus.done[..., None]
    expected = np.where(made & (bids >= 5), 5.0, 0.0)
    assert expected.any()
    np.testing.assert_allclose(extra, expected, atol=1e-3)


def test_same_seed_same_weights_with_your_reward(tmp_path: Path) -> None:
    weights = []
    for name in ("a", "b"):
        trainer = _trainer(tmp_path / name, f"reward={EXAMPLE}:big_bid_bonus")
        trainer.train(progress=False)
        weights.append([p.detach().numpy() for p in trainer.params])
    for a, b in zip(*weights, strict=True):
        np.testing.assert_array_equal(a, b)
    other = _trainer(tmp_path / "c", f"reward={EXAMPLE}:big_bid_bonus", "seed=2")
    other.train(progress=False)
    assert any(
        not np.array_equal(a, p.detach().numpy())
        for a, p in zip(weights[0], other.params, strict=True)
    )


def test_the_reward_is_recorded_and_labels_the_value_loss(tmp_path: Path) -> None:
    from fourhundred_train.plots import load_runs
    from fourhundred_train.plots.ppo import value_loss_label

    reward = f"{EXAMPLE}:big_bid_bonus"
    run = tmp_path / "run"
    _trainer(run, f"reward={reward}").train(progress=False)
    checkpoint = torch.load(run / "policy.pt", weights_only=True)
    assert checkpoint["extra"]["reward"] == reward
    (loaded,) = load_runs([run])
    assert loaded.config["reward"] == reward and loaded.has("charts/bid_reward_per_hand")
    assert value_loss_label([loaded]) == "0.5 · MSE (scaled big_bid_bonus reward²)"


@pytest.mark.parametrize(("reward", "said"), BAD_REWARDS)
def test_a_bad_reward_is_one_line_before_any_work(
    reward: str, said: str, tmp_path: Path, capsys
) -> None:
    write_bad_rewards(tmp_path)
    runs = tmp_path / "runs"
    code = main(["train", *TINY_BID, f"reward={reward.format(tmp=tmp_path)}", f"runs_dir={runs}"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not runs.exists() or not any(runs.iterdir())


def test_your_reward_is_for_bidding_and_a_misspelt_one_names_the_choices() -> None:
    with pytest.raises(ConfigError, match="is for mode 'bidding'"):
        load_config(None, [f"reward={EXAMPLE}:big_bid_bonus"])
    with pytest.raises(ConfigError, match="expected one of team_points, hand_points"):
        load_config(None, ["reward=team_point"])
