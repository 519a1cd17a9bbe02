"""The bidding network that reads each bid's consequences (agents/neural/bid_net.py), trained by
``net: bid_features`` of train/bid_q.py and played by ``neural-bid:PATH``."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.bid_analysis import (  # noqa: E402
    analyse_bid,
    position_from_seed,
    position_from_text,
    start,
)
from fourhundred_agents.neural.bid_net import (  # noqa: E402
    MATCHWIN,
    OTHERS_MADE,
    PER_BID,
    SHARED_SIZE,
    BidFeatures,
    BidNet,
    BidNetConfig,
)
from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent  # noqa: E402
from fourhundred_agents.value.match_value import team_values  # noqa: E402
from fourhundred_agents.value.matchwin import MatchWin, matchwin_path  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.cards import NUM_CARDS  # noqa: E402
from fourhundred_env.rules import bid_value, min_bid  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.bid_q import (  # noqa: E402
    BidQTrainer,
    QBidder,
    bid_inputs,
    load_bid_q_config,
    record_positions,
    world_values,
)
from tests.test_bid_q import assert_bids_as_its_network  # noqa: E402

STRONG = "AH KH QH JH 10H 9H AS KS AD KD AC KC QC"
WEAK = "2H 3S 4S 5S 6D 7D 8D 2C 3C 4C 5C 6C 7C"
TINY = ["positions=240", "num_tables=32", "hidden=32", "head=16", "epochs=1", "batch_size=64",
        "worlds=2", "workers=1"]  # fmt: skip
# the per-bid entries (agents/neural/bid_net.py), by index
POINTS, FINISH, P_MAKE, PLAYED, LEGAL, HEURISTIC = 15, 16, 19, 21, 23, 24
MADE, MISSED, MIXED, NOW = 26, 27, 28, 29  # version 2: the match-win estimate (x 5, minus now)
MADE_JOINT, MISSED_JOINT, MIXED_JOINT = 30, 31, 32  # version 3: counting the others' outcomes


def _features(hand: str, scores=(0, 0, 0, 0), dealer=3, bids=()):
    rules = Rules()
    engine = Engine(rules)
    pos = position_from_text(hand, scores, dealer, bids, rules)
    view = seat_view(engine, start(engine, pos))
    return view, *BidFeatures(rules)(view)


@pytest.mark.parametrize(
    ("scores", "bid", "points", "finish"),
    [
        # (scores by seat, the bidder is seat 0 and its partner seat 2), bid, its points, wins
        ((0, 0, 0, 0), 5, 10, False),
        ((35, 0, 10, 0), 5, 5, False),  # the thirty rule: 5 and 6 at face value from 30
        ((35, 0, 10, 0), 6, 6, True),  # 35 + 6 = 41, the partner above zero
        ((35, 0, 0, 0), 6, 6, False),  # the partner is not above zero
        ((31, 0, 5, 0), 10, 40, True),
    ],
)
def test_each_bid_reads_its_points_and_whether_it_wins_the_match(
    scores, bid, points, finish
) -> None:
    view, shared, per = _features(STRONG, scores)
    assert shared.shape == (1, SHARED_SIZE) and per.shape == (1, 14, PER_BID)
    assert per[0, bid - 1, POINTS] * 40 == pytest.approx(points)
    assert per[0, bid - 1, FINISH] == float(finish)
    np.testing.assert_array_equal(per[0, :, LEGAL], view.legal_mask[0, NUM_CARDS:])


@pytest.mark.parametrize(
    ("scores", "bid", "made", "missed"),
    [
        # (scores by seat; the bidder is seat 0, the dealer seat 3), bid, scores after it
        # is made and after it is missed, the others' scores as they are (None: match won)
        ((0, 0, 0, 0), 5, (10, 0, 0, 0), (-10, 0, 0, 0)),
        ((35, 0, 10, 0), 6, None, (29, 0, 10, 0)),  # 35 + 6 wins, the partner above zero
        ((35, 0, 0, 0), 6, (41, 0, 0, 0), (29, 0, 0, 0)),  # the partner at zero: no win
        ((35, 0, 10, 0), 5, (40, 0, 10, 0), (30, 0, 10, 0)),  # the thirty rule: 5 for 5
    ],
)
def test_each_bid_reads_the_match_win_estimate_if_made_and_if_missed(
    scores, bid, made, missed
) -> None:
    model = MatchWin(matchwin_path(MATCHWIN), rules=Rules())

    def ours(after) -> float:  # the bidder's team's chance, the next hand dealt by seat 0
        first = model.first_team(np.array(after), np.array([41]), np.array([0]))[0]
        return 1.0 - first  # seat 0's team is not the first to bid (seat 1 is)

    _, _, per = _features(STRONG, scores)
    # now, seat 3 deals: seat 0, the bidder, bids first
    now = model.first_team(np.array(scores), np.array([41]), np.array([3]))[0]
    row = per[0, bid - 1]
    assert row[NOW] == pytest.approx(now, abs=1e-6)
    win = 1.0 if made is None else ours(made)
    assert row[MADE] / 5 == pytest.approx(win - now, abs=1e-5)
    assert row[MISSED] / 5 == pytest.approx(ours(missed) - now, abs=1e-5)
    p = row[P_MAKE]
    assert row[MIXED] == pytest.approx(p * row[MADE] + (1 - p) * row[MISSED], abs=1e-5)


@pytest.mark.parametrize(
    ("scores", "dealer", "bids"),
    [
        ((0, 0, 0, 0), 2, (3,)),  # seat 3 bid 3; seats 1 and 2 bid after the bidder (seat 0)
        ((31, 5, 5, 38), 2, (3,)),  # seat 3 at 38 bid 3: made, it wins
        ((36, 4, 9, 20), 2, (8,)),  # the bidder at 36 wins with 5 (the thirty rule: 5 points)
        ((7, -7, 38, 40), 0, (2, 3, 4)),  # the dealer: the partner at 38 bid 3, seat 3 at 40 4
        ((33, 35, 12, 30), 3, ()),  # the first to bid: the three others bid their minimum
    ],
)
def test_each_bid_reads_the_match_win_estimate_counting_the_other_seats_outcomes(
    scores, dealer, bids
) -> None:
    rules = Rules()
    engine, model = Engine(rules), MatchWin(matchwin_path(MATCHWIN), rules=rules)
    view, _, per = _features(STRONG, scores, dealer, bids)
    assert view.seat[0] == 0

    def points(seat: int, bid: int) -> int:
        return bid_value(bid, scores[seat], rules)

    their = {(dealer + 1 + i) % 4: b for i, b in enumerate(bids)}
    their.update({s: min_bid(scores[s], rules) for s in (1, 2, 3) if s not in their})
    now = per[0, 4, NOW]
    expected = []
    for mine in (points(0, 5), -points(0, 5)):  # the bidder bids 5: makes it, misses it
        total = 0.0
        for made in itertools.product((True, False), repeat=3):
            after = np.array(scores) + np.array([mine, 0, 0, 0])
            chance = 1.0
            for s, ok in zip((1, 2, 3), made, strict=True):
                after[s] += points(s, their[s]) if ok else -points(s, their[s])
                chance *= OTHERS_MADE if ok else 1 - OTHERS_MADE
            winner, target = engine.end_of_game(after[None], np.array([41]))
            v = team_values(model, after[None], target, np.array([dealer + 1]), winner)[0, 0]
            total += chance * (v - now)
        expected.append(total)
    row = per[0, 4]  # bid 5
    assert row[MADE_JOINT] / 5 == pytest.approx(expected[0], abs=1e-5)
    assert row[MISSED_JOINT] / 5 == pytest.approx(expected[1], abs=1e-5)
    p = row[P_MAKE]
    assert row[MIXED_JOINT] == pytest.approx(p * row[MADE_JOINT] + (1 - p) * row[MISSED_JOINT],
                                             abs=1e-5)  # fmt: skip


def test_a_checkpoint_of_the_first_layout_still_loads_and_bids(tmp_path: Path) -> None:
    from fourhundred_train.checkpoint import save_policy

    torch.manual_seed(0)
    old = BidNet(BidNetConfig(bid_features=1, hidden=32, head=16))
    save_policy(tmp_path / "v1.pt", old, Rules(), {"play_policy": "heuristic-v1"})
    view, _, _ = _features(STRONG)
    _, per = BidFeatures(Rules(), version=1)(view)
    assert per.shape == (1, 14, 26)
    net, _, _ = load_policy(tmp_path / "v1.pt")
    assert net.config.bid_features == 1
    assert_bids_as_its_network(tmp_path / "v1.pt", old)


@pytest.mark.parametrize(
    ("logit", "chance"),
    [(0.0, 0.5), (40.0, 1.0), (-40.0, 0.0)],  # the head's make logit
)
def test_the_outcome_head_mixes_the_match_win_change_by_its_chance_of_making(logit, chance) -> None:
    # a player near 41: making a bid ends the match, missing it does not
    _, shared, per = _features(STRONG, scores=(31, 0, 5, 0))
    net = BidNet(BidNetConfig(hidden=16, head=8, head_version=2))
    last = net.bid_head[-1]
    with torch.no_grad():  # the head says: made with this chance, correction 0
        last.weight.zero_()
        last.bias.copy_(torch.tensor([logit, 0.0]))
        net.point_weight.fill_(0.25)
    q = net(torch.from_numpy(shared), torch.from_numpy(per))[0][0, NUM_CARDS:].detach().numpy()
    row = per[0].astype(np.float64)
    # in percentage points: 20 x the entries (x 5 of a fraction), 0.25 a point won or lost
    v = row[:, PLAYED] * (
        20 * (chance * row[:, MADE_JOINT] + (1 - chance) * row[:, MISSED_JOINT])
        + 0.25 * 40 * row[:, POINTS] * (2 * chance - 1)
    )
    own = int(np.argmax(row[:, HEURISTIC]))
    np.testing.assert_allclose(q, v - v[own], atol=1e-3)
    assert q[own] == 0.0  # relative to heuristic-v1's bid, as the fitted values are


def test_an_outcome_head_run_trains_and_bids_with_neural_bid(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1",
                                                       "bid_head=outcome"])  # fmt: skip
    trainer = BidQTrainer(cfg, tmp_path)
    (row,) = trainer.train()
    assert np.isfinite(row["loss"])
    net, _, _ = load_policy(tmp_path / "policy.pt")
    assert net.config.head_version == 2
    assert_bids_as_its_network(tmp_path / "policy.pt", trainer.net)


def test_the_dealer_reads_which_bids_get_the_hand_played() -> None:
    # seats 1, 2, 3 bid 3, 2, 2 (total 7); the dealer (seat 0) must bring it to 11
    _, _, per = _features(STRONG, dealer=0, bids=(3, 2, 2))
    played = per[0, :13, PLAYED]
    assert played[3 - 1] == 0 and played[4 - 1] == 1 and played[13 - 1] == 1
    _, _, first = _features(STRONG)  # not the dealer: every bid is played
    assert (first[0, :13, PLAYED] == 1).all()


@pytest.mark.parametrize("hand", [STRONG, WEAK])
def test_the_heuristic_v1_bid_is_marked(hand: str) -> None:
    view, _, per = _features(hand)
    own = HeuristicV1Agent(Rules()).act(view)[0] - NUM_CARDS
    assert per[0, :, HEURISTIC].tolist() == [float(i == own) for i in range(14)]


def test_the_features_of_a_table_do_not_depend_on_the_batch() -> None:
    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 40, 5, 8, 200, 0)
    features = BidFeatures(Rules())
    shared, per = features(seat_view(engine, pos))
    for rows in (np.arange(7), np.array([39, 3, 12])):
        s, p = features(seat_view(engine, pos, index=rows))
        np.testing.assert_array_equal(s, shared[rows])
        np.testing.assert_array_equal(p, per[rows])


def test_world_values_are_the_same_in_two_worker_processes() -> None:
    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 30, 5, 8, 200, 0)
    one = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "workers=1"])
    two = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "workers=2"])
    alone = world_values(engine, pos, one)
    np.testing.assert_array_equal(world_values(engine, pos, two, chunk=7), alone)
    np.testing.assert_array_equal(world_values(engine, pos, one, chunk=4), alone)


def test_the_inputs_of_saved_views_are_the_same_in_two_worker_processes() -> None:
    engine = Engine(Rules())
    pos = record_positions(engine, QBidder(engine), 30, 6, 8, 200, 0)
    views = seat_view(engine, pos).records
    alone = BidFeatures(Rules())(seat_view(engine, pos))
    for got in (bid_inputs(Rules(), views, workers=2, chunk=7), bid_inputs(Rules(), views)):
        assert len(got) == 2
        for a, b in zip(got, alone, strict=True):
            np.testing.assert_array_equal(a, b)


def _weights(path: Path) -> dict:
    return torch.load(path, weights_only=False)["state_dict"]


def test_a_bid_features_run_resumes_exactly_and_bids_with_neural_bid(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=2"])
    assert cfg.net == "bid_features" and cfg.per_point > 0  # the shipped config's network
    BidQTrainer(cfg, tmp_path / "a").train()
    one = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1"])
    BidQTrainer(one, tmp_path / "b").train()
    resumed = BidQTrainer(cfg, tmp_path / "b", resume=True)
    resumed.train()
    a, b = (_weights(tmp_path / x / "policy.pt") for x in "ab")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    path = tmp_path / "a" / "policy.pt"
    assert_bids_as_its_network(path, resumed.net)
    # the analyser shows its values as net Q, and it bids the best of them
    a = analyse_bid(position_from_seed(3, seat=0, dealer=2), f"neural-bid:{path}", worlds=4)
    assert a.net_value is not None and a.actions[int(np.argmax(a.net_value))] == a.chosen
    assert "net Q" in a.table()


def test_a_run_stopped_in_its_fit_resumes_from_its_saved_values(tmp_path, monkeypatch) -> None:
    import fourhundred_train.bid_q.trainer as bid_q

    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1"])
    BidQTrainer(cfg, tmp_path / "a").train()
    fit = bid_q.fit

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bid_q, "fit", stopped)
    with pytest.raises(KeyboardInterrupt):
        BidQTrainer(cfg, tmp_path / "b").train()
    assert (tmp_path / "b" / "iter_0.npz").is_file() and not (tmp_path / "b" / "iter_0.pt").exists()

    def never(*args, **kwargs):
        raise AssertionError("the saved values were computed again")

    monkeypatch.setattr(bid_q, "fit", fit)
    monkeypatch.setattr(bid_q, "world_values", never)
    BidQTrainer(cfg, tmp_path / "b", resume=True).train()
    a, b = (_weights(tmp_path / x / "policy.pt") for x in "ab")
    assert all(torch.equal(a[k], b[k]) for k in a)
    # the values do not depend on the fit's settings: fitted again with others, they give
    # what a straight run with those settings gives
    wider = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1", "hidden=48",
                                                         "head=24"])  # fmt: skip
    (tmp_path / "b" / "iter_0.pt").unlink()
    BidQTrainer(wider, tmp_path / "b", resume=True).train()
    monkeypatch.undo()
    BidQTrainer(wider, tmp_path / "c").train()  # a straight run of those settings
    b, c = (_weights(tmp_path / x / "policy.pt") for x in "bc")
    assert b["trunk.0.weight"].shape[0] == 48 and b["bid_head.0.weight"].shape[0] == 24
    assert all(torch.equal(b[k], c[k]) for k in b)
    # saved values of another size are refused in one line
    more = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1", "positions=300"])
    (tmp_path / "b" / "iter_0.pt").unlink()
    with pytest.raises(bid_q.ConfigError, match=r"iter_0\.npz: values of shape \(240, 14\)"):
        BidQTrainer(more, tmp_path / "b", resume=True).train()


def test_a_bid_features_checkpoint_of_another_layout_is_refused(tmp_path: Path) -> None:
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "iterations=1"])
    BidQTrainer(cfg, tmp_path).train()
    data = torch.load(tmp_path / "policy.pt", weights_only=False)
    for change, message in (
        ({"bid_features": 99}, "bid features version 99: expected 588 and 1 or 2 or 3"),
        ({"colour": 3}, "field(s) ['colour'] this version does not know"),
        ({"hidden": 0}, "expected positive integers"),
        ({"head_version": 3}, "head version 3 with bid features version 3: expected 1, or 2"),
        ({"head_version": 2, "bid_features": 1}, "head version 2 with bid features version 1"),
    ):
        bad = {**data, "net": {**data["net"], **change}}
        torch.save(bad, tmp_path / "bad.pt")
        with pytest.raises(CheckpointError, match=r"bad\.pt") as e:
            load_policy(tmp_path / "bad.pt")
        assert message in str(e.value) and "\n" not in str(e.value)
    # it only bids: a search cannot play its play-outs with it
    with pytest.raises(CheckpointError, match="is a bidding network") as e:
        make_agent(f"search:model={tmp_path / 'policy.pt'}", Rules())
    assert "\n" not in str(e.value)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["net=cnn"], "net='cnn'"),
        (["match_features=false"], "net=bid_features with match_features=false"),
        (["value=team_points"], "per_point=0.003 with value=team_points"),
        (["per_point=-1"], "per_point=-1.0: expected 0 or more"),
        (["workers=0"], "workers=0: expected at least 1"),
        (["candidates=0"], "candidates=0: expected at least 1"),
        (["head=0"], "head=0: expected at least 1"),
        (["bid_head=tree"], "bid_head='tree'"),
        (["bid_head=outcome", "net=mlp"], "bid_head=outcome with net=mlp, value=match_value"),
    ],
)
def test_bad_bid_features_configs_are_one_clear_line(overrides, message, capsys) -> None:
    code = main(["train", "configs/bidding_q.yaml", *overrides, "runs_dir=/nonexistent/never"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0]
