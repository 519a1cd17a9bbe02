"""Match-aware bidding: the match-value reward, the learner bidding for its partnership, the
blanked match features, the `compose:` agent, the bidding report and the bid analyser."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.bid_analysis import (  # noqa: E402
    BID_ACTION0,
    analyse_bid,
    position_from_seed,
    position_from_text,
)
from fourhundred_agents.value.match_value import hand_value_change, team_values  # noqa: E402
from fourhundred_agents.value.matchwin import MatchWin  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.cards import NUM_CARDS  # noqa: E402
from fourhundred_env.errors import FourHundredError  # noqa: E402
from fourhundred_env.observation import OBS_FIELDS, encode_observation  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.config import ConfigError, load_config  # noqa: E402
from fourhundred_train.ppo import Trainer  # noqa: E402

TINY_BID = [
    "mode=bidding", "num_tables=64", "rollout_steps=8", "total_decisions=1024", "hidden=32",
    "layers=1", "eval_every=0", "checkpoint_every=1", "num_minibatches=2", "update_epochs=1",
    "play_policy=heuristic-v1",
]  # fmt: skip
HAND = "AH KH QH JH 10H 9H AS KS 2C 3C 4D 5D 6D"


# -- the match value -----------------------------------------------------------------------
def test_team_values_are_complementary_and_a_won_match_is_worth_one() -> None:
    model = MatchWin()
    scores = np.array([[0, 0, 0, 0], [33, 12, 24, 6], [12, 33, 6, 24]])
    v = team_values(model, scores, np.full(3, 41), np.array([0, 1, 2]))
    np.testing.assert_allclose(v[:, 0] + v[:, 1], 1.0, atol=1e-6)
    np.testing.assert_array_equal(v[:, 0], v[:, 2])
    assert v[1, 0] > 0.6 > 0.4 > v[2, 0]  # ahead is worth more than behind
    over = team_values(model, scores, np.full(3, 41), np.zeros(3), winner=np.array([1, -1, 0]))
    assert over[0].tolist() == [0.0, 1.0, 0.0, 1.0] and over[2].tolist() == [1.0, 0.0, 1.0, 0.0]


def test_hand_value_change_wins_the_match_or_only_passes_the_deal() -> None:
    engine, model = Engine(), MatchWin()
    before = np.array([[35, 10, 6, 0], [20, 20, 20, 20]])
    points = np.array([[10, -4, 2, 3], [0, 0, 0, 0]])
    change = hand_value_change(engine, model, before, points, np.full(2, 41), np.array([0, 2]),
                               np.array([True, False]))  # fmt: skip
    # seat 0 reaches 45 with its partner above zero: the match is won, worth 1 - V(before)
    v0 = team_values(model, before[:1], np.full(1, 41), np.zeros(1))[0, 0]
    assert change[0, 0] == pytest.approx(1.0 - v0) and change[0, 1] == pytest.approx(v0 - 1.0)
    # a hand thrown in: the same scores, the next dealer
    v_next = team_values(model, before[1:], np.full(1, 41), np.array([3]))[0]
    v_now = team_values(model, before[1:], np.full(1, 41), np.array([2]))[0]
    np.testing.assert_allclose(change[1], v_next - v_now)


def test_match_value_reward_in_a_bidding_run_is_the_teams_change(tmp_path: Path) -> None:
    from fourhundred_train.objectives import MatchValue

    config = load_config(None, [*TINY_BID, "reward=match_value", "match_value_points=40",
                                "learner_partnership=true", "hand_scores_low=20"])  # fmt: skip
    trainer = Trainer(config, tmp_path / "mv")
    r = trainer.collect()
    assert r.learner[0].tolist() == [True, False, True, False]  # the partnership bids
    assert set(np.unique(r.seat[:, :])) <= {0, 2}
    rewards = trainer.rewards(r)
    objective = trainer.objective(MatchValue)
    ended = r.done
    expected = 40 * hand_value_change(
        trainer.engine, objective.model, r.scores_before[ended], r.seat_rewards[ended],
        r.target[ended], r.dealer[ended], ~r.thrown_in[ended],
    )  # fmt: skip
    np.testing.assert_allclose(rewards[ended], config.reward_scale * expected, rtol=1e-5, atol=1e-6)
    assert not rewards[~ended].any()  # no points: the change is the whole reward
    np.testing.assert_allclose(rewards[ended][:, 0], rewards[ended][:, 2])
    trainer.train(progress=False)
    extra = torch.load(tmp_path / "mv" / "policy.pt", weights_only=True)["extra"]
    assert extra["reward"] == "match_value" and extra["blank_fields"] == []


def test_without_match_features_the_learner_and_its_agent_never_see_the_scores(
    tmp_path: Path,
) -> None:
    config = load_config(None, [*TINY_BID, "match_features=false"])
    trainer = Trainer(config, tmp_path / "nf")
    r = trainer.collect()
    for name in ("scores", "at_target", "positive", "target"):
        assert not r.obs[..., OBS_FIELDS[name].slice].any(), name
    assert r.obs[..., OBS_FIELDS["min_bid"].slice].any()  # this hand's rules stay
    trainer.train(progress=False)
    path = tmp_path / "nf" / "policy.pt"
    agent = make_agent(f"neural-bid:{path}", Rules(), seed=0)
    assert agent.bidder.blank == ("scores", "at_target", "positive", "target")
    # two tables that differ only in the scores get the same probabilities
    engine = Engine()
    low = engine.init(2, seed=4, dealer=3, scores=np.array([[0, 0, 0, 0], [25, 3, 18, 9]]))
    engine.deal(low)
    high = engine.init(2, seed=4, dealer=3, scores=np.array([[5, 9, 1, 2], [28, 1, 15, 7]]))
    engine.deal(high)
    _, p_low = agent.bidder.act_with_probs(seat_view(engine, low))
    _, p_high = agent.bidder.act_with_probs(seat_view(engine, high))
    np.testing.assert_array_equal(p_low, p_high)
    assert encode_observation(seat_view(engine, low))[:, OBS_FIELDS["scores"].slice].any()


def test_match_value_options_are_checked() -> None:
    with pytest.raises(ConfigError, match="match_value_points"):
        load_config(None, ["mode=bidding", "reward=match_value"])
    with pytest.raises(ConfigError, match="match_value_points"):
        load_config(None, ["match_value_points=-1"])
    with pytest.raises(ConfigError, match="for mode='bidding'"):
        load_config(None, ["learner_partnership=true"])


# -- compose -------------------------------------------------------------------------------
def test_compose_bids_as_one_bot_and_plays_as_another() -> None:
    rules = Rules()
    both = make_agent("compose:bid=minbid,play=heuristic-v1", rules, seed=3)
    minbid, heuristic = make_agent("minbid", rules, 3), make_agent("heuristic-v1", rules, 4)
    engine = Engine()
    state = engine.init(64, seed=11)
    engine.deal(state)
    saw_bids = saw_cards = False
    while engine.legal_mask(state).any():
        view = seat_view(engine, state)
        bidding = view.legal_mask[:, NUM_CARDS:].any(1)
        expected = np.where(bidding, minbid.act(view), heuristic.act(view))
        np.testing.assert_array_equal(both.act(view), expected)
        saw_bids |= bidding.any()
        saw_cards |= (~bidding).any()
        engine.step(state, expected)
    assert saw_bids and saw_cards


def test_analyser_shows_what_a_search_bidder_maximizes(tmp_path: Path) -> None:
    """For a search bidder (here inside a composition) the table and the plot have the
    search's own value of each bid, and the bid it makes is the best of them."""
    from fourhundred_train.bid_report import plot_bid_analysis

    pos = position_from_seed(7, seat=2, scores=(18, 36, 9, 31), dealer=1)
    spec = "compose:bid=search:bidder,bid_worlds=6,candidates=24,play=heuristic-v1"
    a = analyse_bid(pos, spec, worlds=4)
    assert a.search_value is not None and a.search_value.shape == a.actions.shape
    assert a.actions[int(np.argmax(a.search_value))] == a.chosen
    assert "search" in a.table().splitlines()[4] and "per point" in a.table()
    assert analyse_bid(pos, "minbid", worlds=4).search_value is None
    assert plot_bid_analysis(a, tmp_path / "a.png").stat().st_size > 10_000


def test_the_plot_title_wraps_a_long_spec_after_commas_and_cuts_it_visibly() -> None:
    from fourhundred_train.bid_report import _wrap_spec

    spec = ("compose:bid=search:bidder,bid_worlds=6,candidates=24,per_point=0.003,"
            "own=heuristic-v1,matchwin=matchwin_h1.npz,play=heuristic-v1")  # fmt: skip
    lines = _wrap_spec(spec).split("\n")
    assert len(lines) == 2 and lines[0].endswith(",") and "".join(lines) == spec
    assert _wrap_spec("heuristic-v1") == "heuristic-v1"
    long = _wrap_spec("x" * 250).split("\n")
    assert len(long) == 2 and all(len(x) == 100 for x in long) and long[1].endswith("…")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("compose:bid=minbid,foo=heuristic", "unknown part 'foo'"),
        ("compose:bid=minbid,kind=x,play=heuristic", "unknown part 'kind'"),
        ("compose:bid=minbid", "no play= part"),
        ("compose:bid=minbid,play=heuristic,play=random", "part 'play' given twice"),
        ("compose:bid=,play=heuristic", "bid= is empty"),
        ("compose", "expected compose:bid=SPEC,play=SPEC"),
        ("compose:bid=nobody,play=heuristic", "unknown agent 'nobody'"),
    ],
)
def test_bad_compositions_are_one_clear_line(spec: str, message: str, capsys) -> None:
    with pytest.raises(FourHundredError, match=message):
        make_agent(spec)
    code = main(["tournament", "--agents", spec, "heuristic", "--matches", "1", "--workers", "1",
                 "--no-progress", "--out", "/nonexistent/never"])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0]


def test_a_bidder_checkpoint_for_other_rules_is_refused_in_one_line(capsys) -> None:
    spec = "compose:bid=neural-bid:agents/pretrained/bidder.pt,play=heuristic"
    code = main(["bid-eval", spec, "--rules", "pagat", "--tables", "4", "--rounds", "1"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "trained under other rules" in err[0]


def test_compose_with_a_neural_bidder_bids_as_the_checkpoint() -> None:
    rules = Rules()
    path = "agents/pretrained/bidder.pt"
    both = make_agent(f"compose:bid=neural-bid:{path},play=heuristic-v1", rules, seed=0)
    alone = make_agent(f"neural:{path}", rules, seed=0, decides="bid")  # asked for bids only
    engine = Engine()
    state = engine.init(32, seed=2)
    engine.deal(state)
    view = seat_view(engine, state)
    np.testing.assert_array_equal(both.act(view), alone.act(view))


# -- the bidding report --------------------------------------------------------------------
def test_bid_report_is_seeded_and_paired(tmp_path: Path) -> None:
    from fourhundred_train.bid_report import SITUATIONS, bid_report, format_report

    a = bid_report("heuristic-v1", deals=4, matches=0, seed=5, out_dir=tmp_path)
    b = bid_report("heuristic-v1", deals=4, matches=0, seed=5, out_dir=tmp_path)
    assert a == b
    # the bidder is heuristic-v1 itself: paired differences are exactly 0
    assert a["differences"]["heuristic-v1"]["points_per_hand"][0] == 0.0
    assert a["hands"]["heuristic-v1"]["hands"] == len(SITUATIONS) * 4 * 4
    # minbid bids less, and throws more hands in (the same deals)
    assert a["hands"]["minbid"]["mean_bid"] < a["hands"]["heuristic-v1"]["mean_bid"]
    text = format_report(a)
    assert "minbid" in text and "close race" in text


def test_bid_eval_report_from_the_cli_plays_the_matches(tmp_path: Path, capsys) -> None:
    code = main(["bid-eval", "minbid", "--report", "--deals", "2", "--matches", "2",
                 "--out", str(tmp_path)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "bids of minbid against heuristic-v1's bids: won" in out
    assert "against minbid's bids" not in out  # itself: not played
    assert (tmp_path / "bid_report.json").is_file() and (tmp_path / "vs-heuristic-v1").is_dir()


# -- the bid analyser ----------------------------------------------------------------------
def test_analyser_values_every_legal_bid_and_marks_the_bidders_own() -> None:
    pos = position_from_text(HAND, scores=(25, 10, 12, 30), dealer=1, bids=(3,))
    assert pos.seat == 3
    a = analyse_bid(pos, "minbid", worlds=8, seed=1)
    assert a.actions[0] - BID_ACTION0 == 3  # score 30: minimum bid 3
    assert a.chosen == a.actions[0] and a.probs[0] == 1.0 and a.probs.sum() == 1.0
    # with six top hearts, bidding 13 loses its value in every world
    assert a.points[-1] < 0 and a.made[-1] == 0.0
    again = analyse_bid(pos, "minbid", worlds=8, seed=1)
    np.testing.assert_array_equal(a.value_change, again.value_change)
    assert "<- bids" in a.table()


def test_analyser_reads_a_fitted_q_bidders_values_and_a_policys_value_head(
    tmp_path: Path,
) -> None:
    from fourhundred_train.bid_report import plot_bid_analysis

    pos = position_from_seed(3, seat=0, dealer=2)
    assert len(pos.bids) == 1  # seat 3 bid first, as heuristic-v1
    # the bundled bidder is a fitted Q (train/bid_q.py): its bid logits are its bids' values
    a = analyse_bid(pos, "neural-bid:agents/pretrained/bidder.pt", worlds=4)
    assert a.net_value is not None and a.value_head is None
    assert a.actions[int(np.argmax(a.net_value))] == a.chosen  # it bids its best value
    assert a.probs.sum() == 1.0 and a.probs[a.actions == a.chosen][0] == 1.0
    assert "net Q" in a.table() and "pp of match-win change" in a.table()
    png = plot_bid_analysis(a, tmp_path / "a.png")
    assert png.stat().st_size > 10_000
    # a policy network has a distribution over bids and a fitted value head instead
    p = analyse_bid(pos, "neural:agents/pretrained/selfplay.pt", worlds=4)
    assert p.net_value is None and p.value_head is not None
    assert p.probs.sum() == pytest.approx(1.0, abs=1e-5) and "net Q" not in p.table()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hand", "AH KH QH"], "has 3 cards: expected 13"),
        (["--hand", HAND.replace("6D", "AH")], "duplicate card 'AH'"),
        (["--hand", HAND.replace("6D", "1Z")], "1Z"),
        (["--hand", HAND, "--bids", "1"], "bid 1 of seat 0 is not legal here"),
        (["--hand", HAND, "--scores", "1,2,3"], "expected four scores"),
        (["--hand", HAND, "--dealer", "7"], "dealer=7"),
    ],
)
def test_analyser_bad_input_is_one_clear_line(args: list[str], message: str, capsys) -> None:
    code = main(["bid-analyse", "minbid", *args, "--worlds", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


def test_rollout_values_of_bids_are_match_value_changes_under_match_value(tmp_path: Path) -> None:
    from fourhundred_agents.search.rollout import rollout_values
    from fourhundred_agents.value.match_value import hand_value_change
    from fourhundred_train.objectives import RolloutValues, _match_value_of_playouts

    config = load_config(None, [*TINY_BID, "reward=match_value", "match_value_points=40",
                                "learner_partnership=true", "teacher=heuristic-v1",
                                "rollout_share=1.0"])  # fmt: skip
    trainer = Trainer(config, tmp_path / "ro")
    r = trainer.collect()
    q = r.rollout_q
    assert len(q) > 0 and trainer.objective(RolloutValues).value is not None
    legal = np.isfinite(q)
    assert legal[:, :NUM_CARDS].sum() == 0 and legal.sum(1).min() >= 2  # bids only, a choice
    assert np.abs(q[legal]).max() <= 40.0  # a probability change x 40
    # one position by hand: each bid made on a copy and played out by the teacher
    engine = Engine()
    state = engine.init(4, seed=9, dealer=3, scores=np.array([30, 12, 25, 8]))
    engine.deal(state)
    teacher = make_agent("heuristic-v1", Rules(), 0)
    values = rollout_values(engine, state, teacher, value=_match_value_of_playouts(engine, 40.0))
    points = rollout_values(engine, state, teacher)
    assert (np.isfinite(values) == np.isfinite(points)).all()
    # a bid whose play-out scores more team points is worth more of the match here
    table, action = np.nonzero(np.isfinite(values))
    branch = state.select(table)
    engine.step(branch, action)
    from fourhundred_agents.bid_analysis import play_hand

    play_hand(engine, branch, [teacher] * 4, [teacher] * 4)
    change = hand_value_change(engine, MatchWin(), state.scores_before[table], branch.hand_points,
                               state.target[table], state.dealer[table], ~branch.thrown_in)  # fmt: skip
    np.testing.assert_allclose(values[table, action], 40 * change[:, 0], rtol=1e-5, atol=1e-5)


def test_match_aware_bidding_run_resumes_exactly(tmp_path: Path) -> None:
    config = load_config(None, [*TINY_BID, "total_decisions=2048", "reward=match_value",
                                "match_value_points=40", "learner_partnership=true",
                                "teacher=heuristic-v1", "kickstart_coef=1", "rollout_share=0.5",
                                "match_features=false"])  # fmt: skip
    straight = Trainer(config, tmp_path / "a")
    straight.train(progress=False)
    crashed = Trainer(config, tmp_path / "b")
    crashed.train(progress=False, stop_at=2)
    resumed = Trainer(config, tmp_path / "b", resume=True)
    resumed.train(progress=False)
    for a, b in zip(straight.params, resumed.params, strict=True):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def test_a_bidding_run_logs_its_match_value_and_the_bidding_benchmark(tmp_path: Path) -> None:
    """PPO bidding with the match-value reward logs what it optimises (charts/win_change_pp)
    and, at each evaluation, its bids judged as bid-eval --report judges them (eval/bid_*);
    the value loss is labelled in match value, not points."""
    from fourhundred_train.evaluate import make_evaluator
    from fourhundred_train.plots import load_runs
    from fourhundred_train.plots.ppo import value_loss_label

    config = load_config(None, [*TINY_BID, "reward=match_value", "match_value_points=40",
                                "learner_partnership=true", "eval_every=1", "eval_matches=1",
                                "eval_bid_deals=1", "eval_opponent=heuristic-v1"])  # fmt: skip
    run = tmp_path / "bid"
    history = Trainer(config, run).train(make_evaluator(config, run), progress=False)
    last = history[-1]
    assert np.isfinite(last["charts/win_change_pp"])
    assert last["eval/bid_hands"] == 28  # 7 situations x 4 dealers x 1 deal
    assert last["eval/bid_dwin_pp_low"] <= last["eval/bid_dwin_pp"] <= last["eval/bid_dwin_pp_high"]
    (loaded,) = load_runs([run])
    assert loaded.has("eval/bid_dwin_pp") and loaded.has("charts/win_change_pp")
    assert "match value" in value_loss_label([loaded])
