"""A few updates of a tiny self-play config: events, a loadable checkpoint, exact resume,
and clear errors for bad configs and checkpoints. Long training is never part of the tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_train.config import ConfigError, load_config  # noqa: E402
from fourhundred_train.ppo import Trainer  # noqa: E402

TINY = [
    "num_tables=16", "rollout_steps=64", "total_decisions=4096", "hidden=32", "layers=1",
    "opponent=random", "eval_every=0", "checkpoint_every=1", "snapshot_every=2",
    "num_minibatches=2", "update_epochs=1",
]  # fmt: skip


def _assert_resume_is_exact(config, straight: Trainer, folder: Path, stop_at: int) -> Trainer:
    """A second run of `config` stopped after `stop_at` updates and resumed ends with the
    uninterrupted run's weights (policy and critic), bit for bit; returns the resumed run."""
    crashed = Trainer(config, folder)
    crashed.train(progress=False, stop_at=stop_at)
    resumed = Trainer(config, folder, resume=True)
    assert resumed.update == stop_at
    resumed.train(progress=False)
    for a, b in zip(straight.params, resumed.params, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    return resumed


def test_tiny_run_writes_events_and_a_loadable_checkpoint_and_resumes_exactly(
    tmp_path: Path,
) -> None:
    config = load_config(None, TINY)
    straight = Trainer(config, tmp_path / "a")
    history = straight.train(progress=False)
    assert len(history) == 4 and straight.update == 4
    assert list((tmp_path / "a").glob("events.out.tfevents.*"))
    assert (tmp_path / "a" / "config.yaml").is_file()
    assert len(straight.pool) == 2  # snapshots at updates 2 and 4

    # the checkpoint plays: an agent from it acts legally on a batch of views
    agent = make_agent(f"neural:{tmp_path / 'a' / 'policy.pt'}", Rules(), seed=0)
    engine = Engine()
    state = engine.init(8, seed=1)
    engine.deal(state)
    view = seat_view(engine, state)
    actions = agent.act(view)
    assert view.legal_mask[np.arange(8), actions].all()

    # crash after update 2, resume: the same weights as the run that never stopped
    _assert_resume_is_exact(config, straight, tmp_path / "b", stop_at=2)


def test_bad_configs_and_checkpoints_are_refused(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError,
        match=r"lerning_rate=0.1 \(command line\): unknown key 'lerning_rate': did you mean 'learning_rate'",
    ):
        load_config(None, ["lerning_rate=0.1"])
    with pytest.raises(ConfigError, match="mode='sefplay'"):
        load_config(None, ["mode=sefplay"])
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError, match="unreadable or corrupt"):
        load_policy(bad)
    with pytest.raises(CheckpointError, match="does not exist"):
        load_policy(tmp_path / "missing.pt")
    config = load_config(None, [*TINY, "total_decisions=1024"])
    trainer = Trainer(config, tmp_path / "c")
    trainer.train(progress=False)
    with pytest.raises(CheckpointError, match="trained under other rules"):
        load_policy(tmp_path / "c" / "policy.pt", rules=Rules.preset("pagat"))
    data = torch.load(tmp_path / "c" / "policy.pt", weights_only=True)
    data["obs_version"] = 999
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="observation layout version 999"):
        load_policy(tmp_path / "old.pt")


def test_cli_trains_evaluates_by_tournament_and_resumes(tmp_path: Path, capsys) -> None:
    """`fourhundred train configs/tiny.yaml`: events, eval/win_rate from the tournament runner."""
    from fourhundred_cli import main

    assert main(["train", "configs/tiny.yaml", f"runs_dir={tmp_path}", "eval_matches=2"]) == 0
    out = capsys.readouterr().out
    assert "eval/win_rate" in out
    (run,) = tmp_path.glob("tiny__1__*")
    assert (run / "eval" / "update_00004" / "results.sqlite").is_file()
    assert main(["train", "--resume", str(run), "total_decisions=6144"]) == 0
    assert "6 updates" in capsys.readouterr().out
    # the override is now the run's config: a further resume keeps it, and has nothing to do
    assert load_config(run / "config.yaml").total_decisions == 6144
    assert main(["train", "--resume", str(run)]) == 0
    assert "6 updates" in capsys.readouterr().out
    assert main(["train", "--resume", str(tmp_path / "nope")]) == 2


def test_bidder_comparison_is_paired_on_the_same_hands() -> None:
    from fourhundred_train.evaluate import compare_bidders

    same = compare_bidders("heuristic", "heuristic", tables=64, rounds=2, seed=3)
    assert same["difference"] == 0.0 and same["changed_bids_share"] == 0.0
    worse = compare_bidders("minbid", "heuristic", tables=256, rounds=2, seed=3)
    assert worse["difference_high"] < 0  # always bidding the minimum loses points
    assert worse["hands"] == 512


def test_evaluate_run_logs_eval_scalars_of_every_snapshot(tmp_path: Path, capsys) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from fourhundred_cli import main

    config = load_config("configs/tiny.yaml", ["eval_every=0"])
    Trainer(config, tmp_path / "run").train(progress=False)
    assert main(["evaluate-run", str(tmp_path / "run"), "--matches", "2"]) == 0
    assert "update     4: win rate" in capsys.readouterr().out
    events = EventAccumulator(str(tmp_path / "run"))
    events.Reload()
    # at updates 2 and 4, TensorBoard's step the decisions then (16 tables x 64 steps each)
    assert [e.step for e in events.Scalars("eval/win_rate")] == [2048, 4096]
    assert main(["evaluate-run", str(tmp_path / "nothing")]) == 2


def test_kickstarting_labels_the_learners_states_with_legal_teacher_actions(
    tmp_path: Path,
) -> None:
    """The teacher labels every learner decision from that seat's own view, legally, and
    its cross-entropy pulls the policy toward it: agreement rises over a few updates."""
    with pytest.raises(ConfigError, match="needs a teacher"):
        load_config(None, [*TINY, "kickstart_coef=1.0"])
    with pytest.raises(ConfigError, match=r"kickstart_coef=-1\.0"):
        load_config(None, [*TINY, "teacher=heuristic", "kickstart_coef=-1"])
    config = load_config(None, [*TINY, "teacher=heuristic-v1", "kickstart_coef=2.0",
                                "kickstart_decisions=16384", "total_decisions=16384",
                                "learning_rate=0.003", "update_epochs=4", "num_minibatches=8"])  # fmt: skip
    trainer = Trainer(config, tmp_path / "k")
    rollout = trainer.collect()
    t_steps, b = rollout.action.shape
    flat_mask = rollout.mask.reshape(-1, 66)
    assert flat_mask[np.arange(t_steps * b), rollout.teacher.reshape(-1)].all()
    assert trainer.kickstart_weight() == 2.0
    history = trainer.train(progress=False)
    agreement = [h["charts/teacher_agreement"] for h in history]
    # +0.04 to +0.10 over seeds 0-3 (the random opponents' draws move it between versions)
    assert np.mean(agreement[-4:]) > np.mean(agreement[:2]) + 0.03
    assert trainer.kickstart_weight() == 0.0  # fell linearly to zero at 8192 decisions


def test_oracle_critic_sees_the_other_hands_and_resumes_exactly(tmp_path: Path) -> None:
    """The critic's extra input is the other three hands, seat-relative; the policy
    checkpoint holds no critic; a run resumes bit for bit, and only with its own kind."""
    from fourhundred_train.objectives import other_hands

    engine = Engine()
    state = engine.init(32, seed=5)
    engine.deal(state)
    seat = state.to_play.copy()
    others = other_hands(state, seat)
    rows = np.arange(32)
    for rel in range(1, 4):  # right, partner, left: the encoder's rel_seat order
        np.testing.assert_array_equal(others[:, rel - 1], state.hand_set[rows, (seat + rel) % 4])
    assert not (others & state.hand_set[rows, seat][:, None]).any()

    config = load_config(None, [*TINY, "oracle_critic=true", "total_decisions=3072"])
    straight = Trainer(config, tmp_path / "a")
    rollout = straight.collect()
    assert rollout.hidden.shape == (*rollout.action.shape, 3)
    straight.train(progress=False)
    policy = torch.load(tmp_path / "a" / "policy.pt", weights_only=True)
    assert not any(k.startswith("body") for k in policy["state_dict"])
    _assert_resume_is_exact(config, straight, tmp_path / "b", stop_at=1)
    plain = load_config(None, [*TINY, "total_decisions=3072"])
    with pytest.raises(CheckpointError, match="oracle_critic=True: expected oracle_critic=False"):
        Trainer(plain, tmp_path / "b", resume=True)


def test_match_bonus_goes_to_the_partnership_whose_hand_wins_the_match(tmp_path: Path) -> None:
    """Checked hand by hand against the scalar rules (rules.end_of_game) on the new scores."""
    from fourhundred_env.rules import end_of_game
    from fourhundred_train.objectives import MatchBonus

    # pre-hand scores from 25 up: enough hands end a match (2-10 in 48 over seeds 0-4)
    config = load_config(None, [*TINY, "match_bonus=40", "rollout_steps=128", "hand_scores_low=25"])
    trainer = Trainer(config, tmp_path / "m")
    r = trainer.collect()
    bonus = trainer.objective(MatchBonus).rewards(r)
    ended = np.argwhere(r.done & ~r.thrown_in)
    wins = 0
    for t, b in ended:
        scores = r.scores_before[t, b] + r.seat_rewards[t, b].astype(np.int32)
        winner, _ = end_of_game([int(s) for s in scores], int(r.target[t, b]), Rules())
        expected = np.zeros(4) if winner is None else np.where(np.arange(4) % 2 == winner, 40, -40)
        np.testing.assert_array_equal(bonus[t, b], expected)
        wins += winner is not None
    assert wins > 0 and len(ended) > wins  # some hands end the match, most do not
    assert not bonus[~(r.done & ~r.thrown_in)].any()


def test_rollout_values_train_the_policy_and_resume_exactly(tmp_path: Path) -> None:
    """A share of the learner's decisions get rollout values (finite exactly at the
    legal actions), the policy's gain on them is logged, and a resumed run ends the same."""
    with pytest.raises(ConfigError, match=r"rollout_share=0\.5 needs a teacher"):
        load_config(None, [*TINY, "rollout_share=0.5"])
    with pytest.raises(ConfigError, match=r"rollout_share=1\.5"):
        load_config(None, [*TINY, "teacher=heuristic-v1", "rollout_share=1.5"])
    config = load_config(None, [*TINY, "teacher=heuristic-v1", "rollout_share=0.5"])
    trainer = Trainer(config, tmp_path / "a")
    rollout = trainer.collect()
    labelled = rollout.rollout_row >= 0
    assert labelled.any() and (~labelled).any()
    q = rollout.rollout_q[rollout.rollout_row[labelled]]
    np.testing.assert_array_equal(np.isfinite(q), rollout.mask[labelled])
    assert (rollout.mask[labelled].sum(1) > 1).all()  # only decisions with a choice
    assert (rollout.mask[labelled][:, 52:].any(1)).any()  # bids too
    learner = rollout.learner[np.arange(rollout.seat.shape[1])[None, :], rollout.seat]
    assert learner[labelled].all()  # only the learner's own decisions
    history = trainer.train(progress=False)
    assert all("losses/rollout_policy_gain" in h for h in history)

    _assert_resume_is_exact(config, trainer, tmp_path / "b", stop_at=2)


def test_a_live_agent_plays_a_copy_of_the_trainers_network() -> None:
    """NeuralAgent.from_net: the same greedy actions as the network in float32, legal ones in
    bfloat16, and a copy, so that learning goes on without changing the play-out policy."""
    from fourhundred_agents.neural.agent import NeuralAgent
    from fourhundred_env.observation import encode_observation
    from fourhundred_train.network import NetConfig, PolicyValueNet, masked_logits

    torch.manual_seed(0)
    net = PolicyValueNet(NetConfig(hidden=32, layers=1))
    engine = Engine()
    state = engine.init(64, seed=2)
    engine.deal(state)
    view = seat_view(engine, state)
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(encode_observation(view)))
        expected = masked_logits(logits, torch.from_numpy(view.legal_mask)).argmax(-1).numpy()
    agent = NeuralAgent.from_net(net, Rules())
    np.testing.assert_array_equal(agent.act(view), expected)
    fast = NeuralAgent.from_net(net, Rules(), dtype=torch.bfloat16)
    fast_actions = fast.act(view)
    assert view.legal_mask[np.arange(64), fast_actions].all()
    with torch.no_grad():
        for p in net.parameters():
            p.add_(1.0)  # the trainer learns on
    np.testing.assert_array_equal(agent.act(view), expected)


def test_policy_iteration_rollouts_are_played_by_the_learner_and_resume_exactly(
    tmp_path: Path,
) -> None:
    """rollout_team_from: from that many decisions on, the learner's own network plays its
    partnership in the rollouts (the values change), and a resumed run ends the same."""
    base = [*TINY, "teacher=heuristic-v1", "rollout_share=0.5"]
    for bad, expected in (
        ("rollout_team_from=-1", "rollout_team_from=-1: expected a number of decisions"),
        ("rollout_team_from=soon", "rollout_team_from='soon': expected"),
        ("rollout_team_from=true", "rollout_team_from='true': expected"),
        ("rollout_team_dtype=float16", "rollout_team_dtype='float16': expected 'bfloat16'"),
    ):
        with pytest.raises(ConfigError, match=expected):
            load_config(None, [*base, bad])
    teacher_only = Trainer(load_config(None, base), tmp_path / "t").collect()
    for dtype in ("float32", "bfloat16"):
        config = load_config(None, [*base, "rollout_team_from=0", f"rollout_team_dtype={dtype}"])
        learner = Trainer(config, tmp_path / dtype).collect()
        np.testing.assert_array_equal(learner.rollout_row, teacher_only.rollout_row)
        q, q0 = learner.rollout_q, teacher_only.rollout_q
        np.testing.assert_array_equal(np.isfinite(q), np.isfinite(q0))
        assert (q != q0)[np.isfinite(q)].any()  # the learner played its own seats

    config = load_config(None, [*base, "rollout_team_from=2048"])  # from the third update
    straight = Trainer(config, tmp_path / "a")
    straight.train(progress=False)
    _assert_resume_is_exact(config, straight, tmp_path / "b", stop_at=3)


def test_weight_averaging_makes_policy_pt_the_mean_and_leaves_training_alone(
    tmp_path: Path,
) -> None:
    """average_from: policy.pt is the uniform mean of the weights after every
    average_every-th update from then on; the run itself (last weights, snapshots) is the
    same as without it, and a resumed run ends with the same mean, bit for bit."""
    for bad, expected in (
        ("average_from=-1", "average_from=-1: expected a number of decisions >= 0"),
        ("average_from=late", "average_from='late': expected"),
        ("average_every=0", "average_every=0: expected a positive integer"),
    ):
        with pytest.raises(ConfigError, match=expected):
            load_config(None, [*TINY, bad])
    base = [*TINY, "snapshot_every=1", "total_decisions=5120"]  # 5 updates of 1024
    plain = Trainer(load_config(None, base), tmp_path / "plain")
    plain.train(progress=False)
    config = load_config(None, [*base, "average_from=2048", "average_every=2"])
    folder = tmp_path / "a"
    straight = Trainer(config, folder)
    history = straight.train(progress=False)
    for a, b in zip(plain.params, straight.params, strict=True):  # training is untouched
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    assert [h.get("charts/averaged_policies") for h in history] == [None, 1.0, None, 2.0, None]

    net, _, meta = load_policy(folder / "policy.pt")
    assert meta["extra"]["averaged"] == 2 and meta["extra"]["update"] == 5
    snaps = [load_policy(folder / "checkpoints" / f"policy_{u:05d}.pt")[0] for u in (2, 4)]
    for name, value in net.state_dict().items():
        mean = (snaps[0].state_dict()[name] + snaps[1].state_dict()[name]) / 2
        np.testing.assert_allclose(value.numpy(), mean.numpy(), rtol=0, atol=1e-7)
    last, _, _ = load_policy(folder / "checkpoints" / "latest.pt")  # resumes from the last
    for a, b in zip(last.parameters(), plain.net.parameters(), strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())

    resumed = _assert_resume_is_exact(config, straight, tmp_path / "b", stop_at=3)
    assert resumed.averaged == 2
    for a, b in zip(
        straight.average.model.parameters(), resumed.average.model.parameters(), strict=True
    ):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_bundled_training_configs_load() -> None:
    from fourhundred_train.bid_q import is_bid_q, load_bid_q_config
    from fourhundred_train.exit import is_exit, load_exit_config

    root = Path(__file__).resolve().parents[1] / "configs"
    names = sorted(p.name for p in root.glob("*.yaml") if not p.name.startswith("tournament"))
    assert {"selfplay.yaml", "bidding.yaml", "tiny.yaml"} <= set(names)
    for name in names:
        if is_bid_q(root / name):  # the fitted-Q bidder's own config (train/bid_q.py)
            config = load_bid_q_config(root / name)
        elif is_exit(root / name):  # expert iteration's own config (train/exit/)
            config = load_exit_config(root / name)
        else:
            config = load_config(root / name)
        assert config.name == name.removesuffix(".yaml")
