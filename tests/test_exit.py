"""Expert iteration (train/exit/, ``mode: exit``): positions from the network's matches,
every legal action valued by the search over it, the fit, and a run that resumes exactly."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet  # noqa: E402
from fourhundred_agents.search.agent import SearchAgent, SearchSettings  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.cards import NUM_ACTIONS  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402
from fourhundred_env.observation import encode_observation  # noqa: E402
from fourhundred_env.symmetry import SUIT_MAPS, inverse  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.checkpoint import save_policy  # noqa: E402
from fourhundred_train.exit import (  # noqa: E402
    BID_GROUP,
    DEFAULT_INIT,
    ExitTrainer,
    fit_temperature,
    fit_temperatures,
    improved_policy,
    label_positions,
    load_exit_config,
    record_positions,
    resume_config,
    search_gain,
    symmetric_log_policy,
    target_worth,
    temperature_groups,
)
from fourhundred_train.exit.targets import fit  # noqa: E402

TINY = ["positions=40", "bid_share=0.25", "bidder=", "num_tables=8", "worlds=2", "bid_worlds=2",
        "candidates=2", "chunk=8", "workers=1", "epochs=1", "batch_size=16",
        "eval_matches=0", "gate=null", "progress=false", "distill=0"]  # fmt: skip


def _weights(path: Path) -> dict:
    return torch.load(path, weights_only=False)["state_dict"]


def _same(a: Path, b: Path) -> bool:
    x, y = _weights(a), _weights(b)
    return all(torch.equal(x[k], y[k]) for k in x)


def test_positions_are_every_seats_bids_and_cards_in_the_networks_matches() -> None:
    config = load_exit_config("exit", [*TINY, "positions=400", "num_tables=16"])
    engine = Engine()
    net, _, _ = load_policy(DEFAULT_INIT)
    positions = record_positions(engine, net, config, seed=3)
    assert positions.batch_size == 400
    bids = positions.phase == 0
    assert bids.sum() == 100 and (positions.phase[~bids] == 1).all()
    assert (engine.legal_mask(positions).sum(axis=1) > 1).all()  # a real choice each
    assert set(np.unique(positions.to_play)) == {0, 1, 2, 3}
    assert (positions.scores != 0).any(axis=1).mean() > 0.3  # match situations, not 0-0 only
    again = record_positions(engine, net, config, seed=3)
    np.testing.assert_array_equal(again.records, positions.records)


def test_labels_are_the_searchs_values_whatever_the_chunk_and_workers(tmp_path: Path) -> None:
    config = load_exit_config("exit", TINY)
    engine = Engine()
    net, _, _ = load_policy(DEFAULT_INIT)
    positions = record_positions(engine, net, config, seed=4)
    one, n = label_positions(engine, positions, DEFAULT_INIT, config, 0, tmp_path / "a")
    assert n == 40 and len(list((tmp_path / "a").glob("chunk_*.npz"))) == 5
    other = load_exit_config("exit", [*TINY, "chunk=16", "workers=2"])
    two, _ = label_positions(engine, positions, DEFAULT_INIT, other, 0, tmp_path / "b")
    for key in one:
        np.testing.assert_array_equal(one[key], two[key])
    values = one["values"]
    assert values.shape == (2, 40, NUM_ACTIONS)
    np.testing.assert_array_equal(np.isfinite(values[0]), one["legal"])
    # each half is the search over the network, at that half's worlds and key
    half = SearchAgent(Rules(), seed=1 * 1_000_003,
                       settings=SearchSettings(model=DEFAULT_INIT, worlds=1, bid_worlds=1,
                                               candidates=1))  # fmt: skip
    expect = half.action_values(seat_view(engine, positions)).astype(np.float32)
    np.testing.assert_array_equal(values[0], expect)
    assert not np.array_equal(values[0], values[1])  # the halves' worlds differ


_values = st.lists(st.integers(-100, 100).map(lambda x: x / 100), min_size=2, max_size=8,
                   unique=True)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(_values, st.floats(1e-3, 10), st.integers(0, 2**31))
def test_the_improved_policy_is_a_distribution_over_the_legal_actions(values, t, seed) -> None:
    rng = np.random.default_rng(seed)
    row = np.full((1, NUM_ACTIONS), -np.inf)
    legal = rng.choice(NUM_ACTIONS, len(values), replace=False)
    row[0, legal] = values
    prior = np.log(rng.dirichlet(np.ones(NUM_ACTIONS)))[None]
    for p in (improved_policy(row, t), improved_policy(row, t, prior)):
        assert p[0, legal].sum() == pytest.approx(1.0)
        assert (p[0, np.setdiff1d(np.arange(NUM_ACTIONS), legal)] == 0).all()
    cold = improved_policy(row, 1e-9)[0]
    assert cold[legal[int(np.argmax(values))]] == pytest.approx(1.0)
    hot = improved_policy(row, 1e9, prior)[0, legal]
    expect = np.exp(prior[0, legal]) / np.exp(prior[0, legal]).sum()
    np.testing.assert_allclose(hot, expect, rtol=1e-6)


def test_the_temperature_follows_the_noise_of_the_values() -> None:
    rng = np.random.default_rng(0)
    n = 4000
    true = np.full((n, NUM_ACTIONS), -np.inf)
    true[:, :5] = rng.normal(0, 0.01, (n, 5))
    prior = np.log(np.full((n, NUM_ACTIONS), 1 / 5))
    quiet = np.stack([true + rng.normal(0, 0.001, true.shape) for _ in range(2)])
    loud = np.stack([true + rng.normal(0, 0.2, true.shape) for _ in range(2)])
    t_quiet, t_loud = fit_temperature(quiet, prior), fit_temperature(loud, prior)
    assert t_quiet < 0.002 and t_loud > 0.02
    # judged by the other half, the quiet values' policy is worth about the best action
    best = np.where(np.isfinite(true), true, -np.inf).max(1).mean()
    assert target_worth(quiet, t_quiet, prior) == pytest.approx(best, abs=0.001)


def test_each_trick_gets_the_temperature_of_its_own_noise() -> None:
    rng = np.random.default_rng(1)
    n = 3000
    true = np.full((n, NUM_ACTIONS), -np.inf)
    true[:, :5] = rng.normal(0, 0.01, (n, 5))
    prior = np.log(np.full((n, NUM_ACTIONS), 1 / 5))
    # early tricks loud, late ones quiet, the bids in between: one temperature for all
    # would follow the noise of none of them
    groups = rng.choice([0, 11, BID_GROUP], n)
    noise = np.select([groups == 0, groups == 11], [0.2, 0.001], 0.05)[:, None]
    values = np.stack([true + rng.normal(0, 1, true.shape) * noise for _ in range(2)])
    by_group = fit_temperatures(values, groups, prior)
    assert sorted(by_group) == [0, 11, BID_GROUP]
    assert by_group[11] < 0.002 and by_group[0] > 0.02
    assert by_group[11] <= by_group[BID_GROUP] < by_group[0]
    per_row = np.array([by_group[g] for g in groups])
    one = fit_temperature(values, prior)
    assert target_worth(values, per_row, prior) > target_worth(values, one, prior)
    for g in by_group:  # each group's policy worth at least its prior's
        rows = groups == g
        kept = target_worth(values[:, rows], 1e9, prior[rows])
        assert target_worth(values[:, rows], by_group[g], prior[rows]) >= kept


def test_the_temperature_groups_are_the_bids_and_each_trick() -> None:
    config = load_exit_config("exit", [*TINY, "positions=400", "num_tables=16"])
    engine = Engine()
    net, _, _ = load_policy(DEFAULT_INIT)
    positions = record_positions(engine, net, config, seed=3)
    obs = encode_observation(seat_view(engine, positions), dtype=np.int8)
    groups = temperature_groups(obs)
    bids = positions.phase == 0
    assert (groups[bids] == BID_GROUP).all()
    np.testing.assert_array_equal(groups[~bids], positions.num_tricks[~bids])
    assert len(np.unique(groups[~bids])) > 6


def test_the_search_gain_judges_each_halfs_best_by_the_other_half() -> None:
    a = np.full((2, 66), -np.inf)
    a[:, :3] = [[0.5, 0.6, 0.4], [0.5, 0.4, 0.7]]
    b = a.copy()
    b[0, :3] = [0.5, 0.4, 0.4]  # half b disagrees at position 0
    gain = search_gain(np.stack([a, b]), np.array([0, 0]))
    # position 0: a's best (1) is worth 0.4 to b, b's best (0) 0.5 to a; own 0.5 both
    # position 1: both halves' best is 2 (0.7), own 0.5
    assert gain["gain_pp"] == pytest.approx(100 * ((0.45 - 0.5) + 0.2) / 2)
    assert gain["agreement"] == 0.5


def _card_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """int8 observations and legal masks of `n` positions of selfplay.pt's matches."""
    config = load_exit_config("exit", [*TINY, f"positions={n}", "bid_share=0"])
    engine = Engine()
    net, _, _ = load_policy(DEFAULT_INIT)
    view = seat_view(engine, record_positions(engine, net, config, seed=seed))
    return encode_observation(view, dtype=np.int8), view.legal_mask


def _renaming_gap(net, obs: np.ndarray, legal: np.ndarray) -> float:
    """Mean over renamings and positions of the total variation between the network's policy
    at a position and its policy at the renamed position, mapped back."""
    from fourhundred_train.exit import log_policy

    own = np.exp(log_policy(net, obs, legal))
    gaps = []
    for obs_src, action_src in SUIT_MAPS[1:]:
        renamed = np.exp(log_policy(net, obs[:, obs_src], legal[:, action_src]))
        gaps.append(0.5 * np.abs(renamed[:, inverse(action_src)] - own).sum(1).mean())
    return float(np.mean(gaps))


def test_the_symmetric_prior_is_one_policy_for_all_six_renamings() -> None:
    obs, legal = _card_positions(60, seed=8)
    net, _, _ = load_policy(DEFAULT_INIT)
    sym = symmetric_log_policy(net, obs, legal)
    assert np.allclose(np.exp(sym).sum(1), 1) and (np.isfinite(sym) == legal).all()
    assert _renaming_gap(net, obs, legal) > 0.05  # selfplay.pt itself is not symmetric
    for obs_src, action_src in SUIT_MAPS:
        renamed = symmetric_log_policy(net, obs[:, obs_src], legal[:, action_src])
        np.testing.assert_allclose(renamed, sym[:, action_src], atol=1e-9)


def test_the_symmetric_prior_in_chunks_is_the_same_bits() -> None:
    """The average is worked out a chunk of positions at a time (memory): the same bits."""
    obs, legal = _card_positions(2100, seed=10)
    net, _, _ = load_policy(DEFAULT_INIT)
    whole = symmetric_log_policy(net, obs, legal, chunk=4096)
    assert len(obs) > 2048
    np.testing.assert_array_equal(symmetric_log_policy(net, obs, legal, chunk=2048), whole)
    with pytest.raises(ValueError, match="multiple of 2048"):
        symmetric_log_policy(net, obs, legal, chunk=1000)


def test_a_fit_with_the_suit_symmetry_learns_one_policy_for_the_renamings() -> None:
    """Fitted to targets that favour clubs, the network learns them for clubs only; with
    symmetry "suits" it learns the renamed targets too, so it plays alike in each renaming."""
    obs, legal = _card_positions(200, seed=9)
    pi = np.where(legal, 1.0, 0.0)
    pi[:, :13] *= 20  # clubs preferred: no symmetric policy can be this target
    pi = (pi / pi.sum(1, keepdims=True)).astype(np.float32)
    gaps = {}
    for symmetry in ("none", "suits"):
        config = load_exit_config("exit", [*TINY, "epochs=30", "learning_rate=0.003",
                                           "objective=cross_entropy", f"symmetry={symmetry}"])  # fmt: skip
        torch.manual_seed(1)
        net = PolicyValueNet(NetConfig(hidden=64, layers=2))
        fit(net, obs, legal, pi, np.zeros(len(obs), np.float32), config, seed=2)
        gaps[symmetry] = _renaming_gap(net, obs, legal)
    assert gaps["suits"] < gaps["none"] / 3, gaps


def test_an_exit_run_resumes_with_the_weights_of_a_straight_run(tmp_path: Path) -> None:
    config = load_exit_config("exit", [*TINY, "iterations=3", "window=2"])
    straight = ExitTrainer(config, tmp_path / "a")
    rows = straight.train()
    assert [r["iteration"] for r in rows] == [0, 1, 2]
    assert all(np.isfinite(r["search_gain_pp"]) and r["temperature"] > 0 for r in rows)
    assert any(k.startswith("temperature_trick_") for k in rows[0])  # one per trick
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    b = tmp_path / "b"
    for name in ("iter_2.pt", "iter_1.pt", "policy.pt"):  # killed in iteration 1's labels
        (b / name).unlink()
    chunks = sorted((b / "labels_1").glob("chunk_*.npz"))
    for path in chunks[2:]:
        path.unlink()
    chunks[1].write_bytes(chunks[1].read_bytes()[:100])  # damaged mid-write
    shutil.rmtree(b / "labels_2")
    resumed = ExitTrainer(resume_config(b, ["workers=2"]), b, resume=True).train()
    assert [r["iteration"] for r in resumed] == [0, 1, 2]
    for name in ("iter_1.pt", "iter_2.pt", "policy.pt"):
        assert _same(tmp_path / "a" / name, b / name)
    lines = (b / "metrics.jsonl").read_text().splitlines()
    assert len(lines) >= 3


def test_a_distilled_start_moves_to_its_average_and_resumes_bit_for_bit(tmp_path: Path) -> None:
    config = load_exit_config("exit", [*TINY, "distill=200", "distill_epochs=20", "holdout=0.3",
                                       "learning_rate=0.001", "iterations=1", "window=1"])  # fmt: skip
    a = tmp_path / "a"
    trainer = ExitTrainer(config, a)
    rows = trainer.train()
    assert trainer.teacher_path(0) == str(a / "distilled.pt")  # iteration 0 searches over it
    numbers = torch.load(a / "distilled.pt", weights_only=False)["extra"]["distil"]
    assert numbers["distil_positions"] == 200
    assert numbers["distil_kl_after"] < numbers["distil_kl_before"]  # held out
    assert not _same(a / "distilled.pt", Path(DEFAULT_INIT))
    assert rows[0]["minutes"] * 60 > numbers["distil_s"] > 0  # the curve counts its time
    # killed in the first iteration, or before the distilled network was written
    for lost in (("iter_0.pt", "policy.pt"), ("iter_0.pt", "policy.pt", "distilled.pt")):
        b = tmp_path / f"lost{len(lost)}"
        shutil.copytree(a, b)
        for name in lost:
            (b / name).unlink()
        (b / "metrics.jsonl").write_text("")
        ExitTrainer(resume_config(b), b, resume=True).train()
        for name in ("distilled.pt", "iter_0.pt", "policy.pt"):
            assert _same(a / name, b / name), (lost, name)


def test_a_network_below_the_gate_is_not_kept_and_the_next_fits_its_teacher(
    tmp_path: Path,
) -> None:
    # no network wins 99.9% of 4 games against its teacher: every iteration searches over
    # and fits the run's start again, and policy.pt stays the start
    config = load_exit_config("exit", [*TINY, "iterations=3", "window=2", "eval_matches=2",
                                       "gate=0.999"])  # fmt: skip
    trainer = ExitTrainer(config, tmp_path / "a")
    rows = trainer.train()
    assert [r["kept"] for r in rows] == [False, False, False]
    assert trainer.teacher_path(3) == DEFAULT_INIT
    assert _same(tmp_path / "a" / "policy.pt", Path(DEFAULT_INIT))
    assert torch.load(tmp_path / "a" / "policy.pt", weights_only=False)["extra"]["iteration"] == -1
    assert not _same(tmp_path / "a" / "iter_1.pt", Path(DEFAULT_INIT))  # each fits again
    # with a gate every network passes, each is kept
    passed = ExitTrainer(load_exit_config("exit", [*TINY, "iterations=2", "window=2",
                                                   "eval_matches=2", "gate=0.001"]),
                         tmp_path / "b").train()  # fmt: skip
    assert [r["kept"] for r in passed] == [True, True]
    assert _same(tmp_path / "b" / "policy.pt", tmp_path / "b" / "iter_1.pt")


def test_a_run_stopped_in_an_evaluation_does_that_iteration_again(tmp_path: Path) -> None:
    config = load_exit_config("exit", [*TINY, "iterations=2", "window=2", "eval_matches=2",
                                       "gate=0.999"])  # fmt: skip
    ExitTrainer(config, tmp_path / "a").train()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    b = tmp_path / "b"
    lines = (b / "metrics.jsonl").read_text().splitlines()
    (b / "metrics.jsonl").write_text(lines[0] + "\n")  # iter_1.pt written, its row not
    resumed = ExitTrainer(resume_config(b), b, resume=True)
    assert resumed.done() == 1
    rows = resumed.train()
    assert [r["iteration"] for r in rows] == [0, 1]
    for name in ("iter_1.pt", "policy.pt"):
        assert _same(tmp_path / "a" / name, b / name)


def test_an_exit_network_plays_bids_and_cards_and_plots(tmp_path: Path) -> None:
    from fourhundred_agents.registry import make_agent
    from fourhundred_train.plots import write_training_plots

    config = load_exit_config("exit", [*TINY, "iterations=2", "window=2", "eval_matches=2"])
    rows = ExitTrainer(config, tmp_path / "run").train()
    assert 0 <= rows[-1]["vs_opponent_win_rate"] <= 1
    agent = make_agent(f"neural:{tmp_path / 'run' / 'policy.pt'}", Rules(), seed=0)
    engine = Engine()
    state = engine.init(8, seed=5)
    engine.deal(state)
    view = seat_view(engine, state)
    assert view.legal_mask[np.arange(8), agent.act(view)].all()
    written = write_training_plots([tmp_path / "run"], tmp_path / "plots")
    assert tmp_path / "plots" / "exit.png" in written
    # the tags every trainer logs: x in learner decisions, the win rate with its bounds
    from fourhundred_train.plots import read_scalars

    scalars = read_scalars(tmp_path / "run")
    decisions = scalars["charts/decisions"]
    assert decisions.steps.tolist() == [1, 2]
    assert decisions.values.tolist() == np.cumsum([r["positions"] for r in rows]).tolist()
    assert scalars["eval/win_rate"].values[-1] == pytest.approx(rows[-1]["vs_opponent_win_rate"])
    assert {"eval/win_rate_low", "eval/win_rate_high", "losses/fit_policy_loss"} <= set(scalars)
    assert tmp_path / "plots" / "win_rate.png" in written


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "positionz=3",
            "positionz=3 (command line): unknown key 'positionz': did you mean 'positions'?",
        ),
        ("workers=0", "workers=0: expected at least 1"),
        ("temperature=0", "temperature=0.0: expected a value > 0"),
        ("temperature=-1", "temperature=-1.0: expected a value > 0"),
        ("temperature_by=hand", "temperature_by"),
        ("gate=1.5", "gate=1.5: expected a win rate above 0 and below 1"),
        (
            "gate=0.55 eval_matches=0",
            "gate=0.55 with eval_matches=0: expected eval_matches of 1 or more",
        ),
        ("window=9", "window=9: expected at most iterations=5"),
        ("worlds=3", "worlds=3: expected an even number"),
        ("holdout=0.7", "holdout=0.7: expected a share above 0 and below 0.5"),
        ("ray_address=auto", "ray_address='auto': expected backend 'ray'"),
        ("symmetry=colours", "symmetry"),
        ("distill=-1", "distill=-1: expected 0 (none) or more positions"),
        ("distill_epochs=0", "distill_epochs=0: expected at least 1"),
    ],
)
def test_bad_exit_configs_are_one_clear_line(override: str, message: str, capsys) -> None:
    with pytest.raises(ConfigError):
        load_exit_config("exit", override.split())
    code = main(["train", "exit", *override.split(), "runs_dir=/nonexistent/never"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


def test_a_resume_with_another_config_names_the_keys(tmp_path: Path, capsys) -> None:
    config = load_exit_config("exit", TINY)
    ExitTrainer(config, tmp_path)  # writes config.yaml
    assert resume_config(tmp_path, ["workers=2"]).workers == 2
    code = main(["train", "--resume", str(tmp_path), "positions=50", "epochs=3"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "epochs, positions" in err[0] and "start a new run" in err[0]


def test_a_checkpoint_of_other_rules_or_a_bidder_is_refused(tmp_path: Path) -> None:
    net = PolicyValueNet(NetConfig(hidden=8, layers=1))
    pagat = Rules.preset("pagat")
    save_policy(tmp_path / "pagat.pt", net, pagat)
    config = load_exit_config("exit", [*TINY, f"init={tmp_path / 'pagat.pt'}"])
    with pytest.raises(CheckpointError, match="trained under other rules"):
        ExitTrainer(config, tmp_path / "run")
    from fourhundred_agents.neural.bid_net import BidNet, BidNetConfig

    save_policy(tmp_path / "bidder.pt", BidNet(BidNetConfig(hidden=8, head=8)), Rules())
    config = load_exit_config("exit", [*TINY, f"init={tmp_path / 'bidder.pt'}"])
    with pytest.raises(CheckpointError, match="bidding network"):
        ExitTrainer(config, tmp_path / "run2")


def test_ray_tasks_give_the_labels_of_local_processes(tmp_path: Path, ray_instance) -> None:
    config = load_exit_config("exit", [*TINY, "positions=16"])
    engine = Engine()
    net, _, _ = load_policy(DEFAULT_INIT)
    positions = record_positions(engine, net, config, seed=6)
    local, _ = label_positions(engine, positions, DEFAULT_INIT, config, 0, tmp_path / "a")
    ray_config = load_exit_config("exit", [*TINY, "positions=16", "backend=ray"])
    remote, _ = label_positions(engine, positions, DEFAULT_INIT, ray_config, 0, tmp_path / "b")
    for key in local:
        np.testing.assert_array_equal(local[key], remote[key])
