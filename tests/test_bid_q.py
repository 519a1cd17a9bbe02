"""The fitted-Q bidder (train/bid_q.py, ``mode: bid_q``) and the match-win estimate fitted on
heuristic-v1's matches (train/matchwin.py ``--model heuristic-v1``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.value.matchwin import MatchWin  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.cards import NUM_CARDS  # noqa: E402
from fourhundred_env.errors import ConfigError  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.bid_q import (  # noqa: E402
    BidQTrainer,
    QBidder,
    load_bid_q_config,
    play_out_values,
    record_positions,
    relative_targets,
    world_values,
)
from fourhundred_train.matchwin import self_play  # noqa: E402

# the plain network on true-deal play-outs (the shipped config's are in test_bid_net.py)
TINY = ["positions=600", "num_tables=64", "hidden=32", "layers=1", "epochs=1",
        "batch_size=128", "net=mlp", "bid_head=value", "worlds=0", "workers=1", "per_point=0"]  # fmt: skip


def _weights(path: Path) -> dict:
    return torch.load(path, weights_only=False)["state_dict"]


def test_positions_are_the_learners_bids_in_real_matches() -> None:
    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 300, seed=3, tables=32, max_hands=200,
                           first_match=0)  # fmt: skip
    assert pos.batch_size == 300
    assert set(np.unique(pos.to_play)) <= {0, 2} and (pos.phase == 0).all()
    assert (pos.scores_before != 0).any()  # hands after the first of a match are recorded


def test_every_legal_bid_is_played_out_on_the_same_deal() -> None:
    engine = Engine(Rules())
    model = MatchWin("agents/pretrained/matchwin_h1.npz")
    pos = record_positions(engine, QBidder(engine), 64, 5, 16, 200, 0)
    before = pos.records.copy()
    q = play_out_values(engine, pos, QBidder(engine), "match_value", model)
    legal = engine.legal_mask(pos)[:, NUM_CARDS:]
    np.testing.assert_array_equal(np.isfinite(q), legal)
    assert (pos.records == before).all()  # the positions are left as they were
    assert (np.abs(q[legal]) <= 100).all()
    pts = play_out_values(engine, pos, QBidder(engine), "team_points", None)
    assert (pts[legal] == np.round(pts[legal])).all()


def test_world_values_are_the_bid_search_of_a_heuristic_v1_table(tmp_path: Path) -> None:
    """worlds=K: each legal bid valued by the search over K worlds with heuristic-v1 at every
    seat, in percentage points; a run with it is seeded like the others."""
    from fourhundred_agents.search.agent import SearchAgent, SearchSettings

    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 24, 5, 8, 200, 0)
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1", "worlds=3"])
    q = world_values(engine, pos, cfg, chunk=10)
    np.testing.assert_array_equal(np.isfinite(q), engine.legal_mask(pos)[:, NUM_CARDS:])
    search = SearchAgent(
        engine.rules,
        cfg.seed,
        SearchSettings(
            models="heuristic-v1", own="heuristic-v1", bid_worlds=3, matchwin=cfg.matchwin
        ),
    )
    ref = 100.0 * search.action_values(seat_view(engine, pos))[:, NUM_CARDS:]
    np.testing.assert_allclose(q, ref.astype(np.float32))
    cfg = load_bid_q_config("configs/bidding_q.yaml",
                            [*TINY, "positions=200", "iterations=1", "worlds=2"])  # fmt: skip
    for run in ("a", "b"):
        BidQTrainer(cfg, tmp_path / run).train()
    a, b = (_weights(tmp_path / run / "policy.pt") for run in "ab")
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_relative_targets_subtract_the_own_bid_and_floor() -> None:
    q = np.array([[1.0, 5.0, -20.0, -np.inf]], np.float32)
    out = relative_targets(q, np.array([1]), clip=8.0)
    np.testing.assert_array_equal(out, [[-4.0, 0.0, -8.0, -np.inf]])
    np.testing.assert_array_equal(relative_targets(q, np.array([1]), 0.0)[0, :3], [-4, 0, -25])


def test_a_bid_q_run_is_seeded_resumes_exactly_and_bids_with_neural_bid(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=2"])
    BidQTrainer(cfg, tmp_path / "a").train()
    again = BidQTrainer(cfg, tmp_path / "b")
    again.train()
    one = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1"])
    BidQTrainer(one, tmp_path / "c").train()
    BidQTrainer(cfg, tmp_path / "c", resume=True).train()
    a = _weights(tmp_path / "a" / "policy.pt")
    for other in ("b", "c"):
        b = _weights(tmp_path / other / "policy.pt")
        assert all(torch.equal(a[k], b[k]) for k in a)
    assert_bids_as_its_network(tmp_path / "a" / "policy.pt", again.net)


def assert_bids_as_its_network(path: Path, net) -> None:
    """The checkpoint at `path`, as ``neural-bid:`` with heuristic-v1's cards, bids the argmax
    of `net`'s fitted values at 16 seeded first bids, each legal."""
    agent = make_agent(f"compose:bid=neural-bid:{path},play=heuristic-v1", Rules(), seed=0)
    engine = Engine()
    state = engine.init(16, seed=2)
    engine.deal(state)
    view = seat_view(engine, state)
    bids = agent.act(view)
    assert view.legal_mask[np.arange(16), bids].all()
    np.testing.assert_array_equal(bids, QBidder(engine, net)(state, np.arange(16)))


def test_a_window_keeps_only_the_last_iterations_and_resumes_exactly(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=3", "window=1"])
    BidQTrainer(cfg, tmp_path / "a").train()
    two = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=2", "window=1"])
    BidQTrainer(two, tmp_path / "b").train()
    BidQTrainer(cfg, tmp_path / "b", resume=True).train()
    every = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=3"])
    BidQTrainer(every, tmp_path / "c").train()
    a, b, c = (_weights(tmp_path / x / "policy.pt") for x in "abc")
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)  # the window changed the fit


def test_without_match_features_the_checkpoint_blanks_them(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml",
                            [*TINY, "iterations=1", "match_features=false"])  # fmt: skip
    BidQTrainer(cfg, tmp_path).train()
    extra = torch.load(tmp_path / "policy.pt", weights_only=False)["extra"]
    assert extra["blank_fields"] == ["scores", "at_target", "positive", "target"]
    assert extra["play_policy"] == "heuristic-v1"


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            "positionz=3",
            "positionz=3 (command line): unknown key 'positionz': did you mean 'positions'?",
        ),
        ("value=tricks", "value='tricks'"),
        ("clip=-1", "clip=-1.0: expected 0 (none) or more"),
        ("iterations=0", "iterations=0: expected at least 1"),
        ("window=-1", "window=-1: expected 0 (all iterations) or more"),
        ("worlds=-2", "worlds=-2: expected 0 (the true deal) or more"),
    ],
)
def test_bad_bid_q_configs_are_one_clear_line(override: str, message: str, capsys) -> None:
    with pytest.raises(ConfigError):
        load_bid_q_config("configs/bidding_q.yaml", [override])
    code = main(["train", "configs/bidding_q.yaml", override, "runs_dir=/nonexistent/never"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0]


def test_heuristic_v1_matches_for_the_match_win_estimate() -> None:
    data = self_play("heuristic-v1", matches=40, seed=1, tables=16)
    assert len(np.unique(data["match"])) == 40 and (data["winner"] >= 0).all()
    again = self_play("heuristic-v1", matches=40, seed=1, tables=7)
    for key in ("scores", "target", "dealer", "winner"):
        a = np.lexsort((np.arange(len(data["match"])), data["match"]))
        b = np.lexsort((np.arange(len(again["match"])), again["match"]))
        np.testing.assert_array_equal(data[key][a], again[key][b])
    assert MatchWin("agents/pretrained/matchwin_h1.npz", rules=Rules()).rules == Rules()


def test_a_bid_q_run_writes_curves_judges_its_bids_and_plots(tmp_path: Path, capsys) -> None:
    """Events at every iteration (x: positions fitted), the bidding benchmark's eval/bid_*
    every eval_every, `fourhundred plot` on the run folder; the evaluations change no weight."""
    from fourhundred_train.bid_report import BidEval
    from fourhundred_train.plots import read_scalars

    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=2", "eval_deals=2"])
    rows = BidQTrainer(cfg, tmp_path / "a", progress=False).train()
    scalars = read_scalars(tmp_path / "a")
    assert scalars["charts/positions"].steps.tolist() == [600, 1200]
    assert scalars["losses/fit_loss"].values.tolist() == pytest.approx([r["loss"] for r in rows])
    for tag in ("charts/mean_best_minus_own", "charts/own_bid_value", "eval/bid_made_rate",
                "eval/bid_thrown_in_rate", "eval/bid_points_per_hand"):  # fmt: skip
        assert scalars[tag].steps.tolist() == [600, 1200], tag
    dwin = scalars["eval/bid_dwin_pp"].values
    assert (scalars["eval/bid_dwin_pp_low"].values <= dwin).all()
    assert (dwin <= scalars["eval/bid_dwin_pp_high"].values).all()
    # what bid-eval --report's hands say of the final policy, on the same hands
    judged = BidEval("heuristic-v1", 2, cfg.seed, "wiki")(
        f"neural-bid:{tmp_path / 'a' / 'policy.pt'}"
    )
    assert judged["eval/bid_dwin_pp"] == pytest.approx(dwin[-1], rel=1e-5)
    off = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=2", "eval_every=0"])
    BidQTrainer(off, tmp_path / "b", progress=False).train()
    a, b = _weights(tmp_path / "a" / "policy.pt"), _weights(tmp_path / "b" / "policy.pt")
    assert all(torch.equal(a[k], b[k]) for k in a)
    capsys.readouterr()
    assert main(["plot", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "bid_eval.png" in out and "bid_q.png" in out
    assert (tmp_path / "a" / "plots" / "bid_eval.png").is_file()
