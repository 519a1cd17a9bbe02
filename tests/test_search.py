"""The `search` bot (agents/search/agent.py) and its parts: worlds, their weights, policy play-outs,
the match-win estimate, settings and the time budget. Small worlds, few positions: seconds."""

from __future__ import annotations

import itertools
import time
from collections import Counter
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from fourhundred_agents import make_agent
from fourhundred_agents.scripted.heuristic_bid import HEURISTIC_V1_PARAMS, params_record
from fourhundred_agents.search.agent import SearchAgent, SearchSettings
from fourhundred_agents.search.worlds import deal_worlds, observed_rows
from fourhundred_agents.value.matchwin import MatchWin, features, matchwin_path
from fourhundred_env import Engine, Rules
from fourhundred_env.cards import FULL_DECK, SUIT_SETS
from fourhundred_env.engine import Phase, State
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, encode_observation
from fourhundred_env.view import SeatView, seat_view, world_state
from tests.test_rollout import _mid_hand_states

BASE = "search:worlds=3,candidates=6,bid_candidates=2,top_actions=3"
# Every part switched on (the defaults leave the endgame off).
SMALL = BASE + ",endgame=3,bids=true"
MODEL = "agents/pretrained/selfplay.pt"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(Rules())


@pytest.fixture(scope="module")
def positions(engine: Engine) -> State:
    """Card-play decisions of hands played by heuristic-v1, at every stage of the hand."""
    return _mid_hand_states(engine, make_agent("heuristic-v1", engine.rules, seed=0), 40, 7)


@pytest.fixture(scope="module", params=["policy", "policy+heuristic-v1"])
def small(engine: Engine, request) -> SearchAgent:
    """Every part switched on; the other seats modelled as the policy, or inferred to be the
    policy or heuristic-v1."""
    return make_agent(f"{SMALL},models={request.param}", engine.rules, seed=3)


def test_legal_moves_the_same_alone_and_in_a_batch(engine, positions, small) -> None:
    view = seat_view(engine, positions)
    batch = small.act(view)
    assert view.legal_mask[np.arange(view.size), batch].all()
    assert small.last_stats["searched"] > view.size // 2
    alone = [small.act(view.select([j]))[0] for j in range(0, view.size, 3)]
    np.testing.assert_array_equal(batch[::3], alone)
    reversed_ = small.act(view.select(np.arange(view.size)[::-1]))[::-1]
    np.testing.assert_array_equal(batch, reversed_)


def test_bids_are_searched_and_legal(engine) -> None:
    state = engine.init(12, seed=5)
    engine.deal(state)
    for _ in range(2):  # the first two bids of each table: the second sees one bid
        view = seat_view(engine, state)
        agent = make_agent(SMALL, engine.rules, seed=0)
        actions = agent.act(view)
        assert view.legal_mask[np.arange(view.size), actions].all()
        assert agent.last_stats["searched"] == view.size
        engine.step(state, actions)
    off = make_agent(BASE + ",bids=false", engine.rules, seed=0)
    off.act(seat_view(engine, state))
    assert off.last_stats["searched"] == 0


def _swap_hidden(state: State, viewer: int) -> State | None:
    """The same public position and the viewer's hand, with two other seats' unplayed cards of
    one suit exchanged (voids stay true): None if no such pair exists."""
    out = state.copy()
    others = [s for s in range(4) if s != viewer]
    for a, b in itertools.combinations(others, 2):
        for suit in range(4):
            ha = int(out.hand_set[0, a]) & int(SUIT_SETS[suit])
            hb = int(out.hand_set[0, b]) & int(SUIT_SETS[suit])
            if ha and hb:
                ca, cb = ha & -ha, hb & -hb
                out.hand_set[0, a] ^= np.uint64(ca | cb)
                out.hand_set[0, b] ^= np.uint64(ca | cb)
                out.dealt_set[0, a] ^= np.uint64(ca | cb)
                out.dealt_set[0, b] ^= np.uint64(ca | cb)
                return out
    return None


def test_the_other_seats_models_are_inferred_from_their_actions(engine, positions) -> None:
    """Hands played by heuristic-v1 are explained by heuristic-v1 in more worlds than hands
    played by the policy; with the policy alone nothing is taken for a scripted bot."""
    share = {}
    by_policy = _mid_hand_states(engine, make_agent(f"neural:{MODEL}", engine.rules, seed=0), 40, 7)
    for name, where in (("heuristic-v1", positions), ("policy", by_policy)):
        agent = make_agent("search:models=policy+heuristic-v1", engine.rules, seed=3)
        agent.act(seat_view(engine, where))
        share[name] = agent.last_stats["scripted_share"]
    assert share["heuristic-v1"] > share["policy"] + 0.1
    alone = make_agent("search:models=policy", engine.rules, seed=3)
    alone.act(seat_view(engine, positions))
    assert "scripted_share" not in alone.last_stats


def test_hidden_cards_never_change_a_decision(engine, positions, small) -> None:
    """Two deals that differ only in other seats' unplayed cards: the same decisions for the
    same game stream (and different ones are possible for another stream)."""
    checked = 0
    for j in range(positions.batch_size):
        one = positions.select([j])
        viewer = int(one.to_play[0])
        other = _swap_hidden(one, viewer)
        if other is None:
            continue
        assert not np.array_equal(other.hand_set, one.hand_set)
        a = seat_view(engine, one)
        b = seat_view(engine, other)
        for f in fields(SeatView):
            np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name), f.name)
        assert small.act(a)[0] == small.act(b)[0]
        checked += 1
    assert checked > 10


@pytest.mark.parametrize(
    "spec, message",
    [
        ("search:worlds=0", "worlds=0: expected 1 to 65,536"),
        ("search:worlds=1e9", "worlds=1000000000: expected 1 to 65,536"),
        ("search:candidates=100000", "candidates=100000: expected 1 to 65,536"),
        ("search:bidder,bid_worlds=70000", "bid_worlds=70000: expected 1 to 65,536"),
        ("search:depth=2", r"'search:depth=2': unknown key\(s\) \['depth'\]: expected some of"),
        ("search:time_per_move=-1", "time_per_move=-1.0: expected 0 or more"),
        ("search:margin=-0.1", "margin=-0.1: expected 0 or more"),
        ("search:endgame=14", "endgame=14: expected 0 to 13"),
        ("search:weighting=magic", "weighting='magic': expected one of 'uniform', 'policy'"),
        ("search:quick", "preset='quick': expected one of 'default', 'strong', 'fast'"),
        ("search:tricks=14", "tricks=14: expected 0 to 13"),
        ("search:model=missing.pt", "checkpoint 'missing.pt' does not exist"),
        ("search:fast,bid_model=nobid.pt", "checkpoint 'nobid.pt' does not exist"),
        ("search:bid_model=nobid.pt", "bid_model='nobid.pt': the bids are searched; expected bids"),
        ("search:models=policy+bogus", r"models='policy\+bogus': expected distinct names from"),
        ("search:models=policy+policy", r"models='policy\+policy': expected distinct names"),
        ("search:weighting=uniform,models=heuristic-v1", "needs weighting=policy"),
        ("search:own=minbid", "own='minbid': expected policy or one of the scripted names"),
        ("search:models=policy,own=minbid", "own='minbid': expected policy or one of the"),
        (
            "search:weighting=uniform,own=heuristic-v1",
            r"own='heuristic-v1': expected .* \(policy\)",
        ),
        ("search:matchwin=nowhere.npz", "match-win weights '.*nowhere.npz' do not exist"),
        ("search:per_point=-0.01", "per_point=-0.01: expected 0 or more"),
        ("search:symmetric=true", "symmetric='true': expected one of 'none', 'prior', 'all'"),
    ],
)
def test_bad_settings_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(FourHundredError, match=message):
        make_agent(spec, Rules(), seed=0)


def test_tricks_limits_the_searched_cards_to_the_last_ones(engine, positions) -> None:
    """With tricks=K the cards of the last K tricks are searched as by the full search and the
    earlier ones are the policy's; search:fast bids as the bundled bidder does, and as its
    policy, exit.pt, with bid_model=policy."""
    view = seat_view(engine, positions)
    full = make_agent(BASE, engine.rules, seed=4)
    late = make_agent(BASE + ",tricks=6", engine.rules, seed=4)
    policy = make_agent(f"neural:{MODEL}", engine.rules, seed=4)
    every, last = full.act(view), late.act(view)
    assert late.last_stats["searched"] < full.last_stats["searched"]
    is_late = view.num_tricks >= 7
    assert is_late.any() and (~is_late).any()
    np.testing.assert_array_equal(last[is_late], every[is_late])
    np.testing.assert_array_equal(last[~is_late], policy.act(view)[~is_late])
    state = engine.init(6, seed=5)
    engine.deal(state)
    bids = seat_view(engine, state)
    fast = make_agent("search:fast", engine.rules, seed=0)
    bidder = make_agent("neural-bid:agents/pretrained/bidder.pt", engine.rules, seed=0)
    np.testing.assert_array_equal(fast.act(bids), bidder.act(bids))
    assert fast.last_stats["searched"] == 0
    plain = make_agent("search:fast,bid_model=policy", engine.rules, seed=0)
    exit_policy = make_agent("neural:agents/pretrained/exit.pt", engine.rules, seed=0)
    np.testing.assert_array_equal(plain.act(bids), exit_policy.act(bids))


def test_presets_and_overrides() -> None:
    assert SearchSettings().resolved()["worlds"] == 32
    strong = SearchSettings(preset="strong").resolved()
    assert strong["worlds"] > 32 and strong["time_per_move"] == 1.0
    mixed = SearchSettings(preset="strong", worlds=8).resolved()
    assert mixed["worlds"] == 8 and mixed["endgame"] == strong["endgame"]
    bidder = SearchSettings(preset="bidder").resolved()
    assert bidder["own"] == bidder["models"] == "heuristic-v1"
    assert bidder["matchwin"] == "matchwin_h1.npz" and bidder["bid_candidates"] == 14
    assert bidder["per_point"] > 0 and SearchSettings().resolved()["per_point"] == 0
    fast, default = SearchSettings(preset="fast").resolved(), SearchSettings().resolved()
    changed = {k for k in fast if fast[k] != default[k]}
    assert changed == {"preset", "model", "bids", "tricks", "bid_model"}
    assert (fast["bids"], fast["tricks"], default["tricks"]) == (False, 6, 13)
    assert Path(fast["model"]).name == "exit.pt" and Path(default["model"]).name == "selfplay.pt"
    assert Path(strong["model"]).name == "selfplay.pt"
    assert SearchSettings(preset="fast", model=MODEL).resolved()["model"] == MODEL
    assert SearchSettings().resolved()["own"] == "policy"


def test_checkpoints_for_other_rules_or_observations_are_refused(tmp_path: Path) -> None:
    import torch

    with pytest.raises(FourHundredError, match="trained under other rules"):
        make_agent(SMALL, Rules.preset("pagat"), seed=0)
    data = torch.load(MODEL, weights_only=True)
    data["obs_version"] = 999
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(FourHundredError, match="observation layout version 999"):
        make_agent(f"{SMALL},model={tmp_path / 'old.pt'}", Rules(), seed=0)
    # the time limits are not rules of the game: a tournament may change them
    make_agent(SMALL, Rules(move_time_limit_s=1.0, move_hard_limit_s=2.0), seed=0)


def test_the_time_budget_returns_the_best_so_far(engine, positions) -> None:
    view = seat_view(engine, positions)
    none = make_agent("search:worlds=16,time_per_move=0", engine.rules, seed=0)
    policy = none.act(view)
    assert none.last_stats["worlds"] == 0  # no time at all: the policy's own choices
    assert view.legal_mask[np.arange(view.size), policy].all()
    tiny = make_agent("search:worlds=16,candidates=16,time_per_move=1e-6", engine.rules, seed=0)
    full = make_agent("search:worlds=16,candidates=16,time_per_move=100", engine.rules, seed=0)
    t0 = time.perf_counter()
    rushed = tiny.act(view)
    assert view.legal_mask[np.arange(view.size), rushed].all()
    full.act(view)
    # one chunk of worlds (8 per decision) is always scored, then the budget stops it
    assert 0 < tiny.last_stats["worlds"] < full.last_stats["worlds"]
    assert time.perf_counter() - t0 < 120


# -- worlds -------------------------------------------------------------------------------
def test_worlds_agree_with_the_view_and_do_not_depend_on_the_batch(engine, positions) -> None:
    view = seat_view(engine, positions)
    num = 8
    hands = np.empty((view.size * num, 4), np.uint64)
    assert deal_worlds(view.records, np.uint64(5), 0, num, hands) == 0
    rep = np.repeat(np.arange(view.size), num)
    worlds = world_state(engine, view, hands, rep)
    again = seat_view(engine, worlds)
    for f in ("hand_set", "played_set", "bids", "trick_cards", "shown_void", "legal_mask"):
        np.testing.assert_array_equal(getattr(again, f), getattr(view, f)[rep], f)
    true = positions.select(rep)
    np.testing.assert_array_equal(np.bitwise_count(hands), np.bitwise_count(true.hand_set))
    assert (np.bitwise_or.reduce(worlds.dealt_set, axis=1) == FULL_DECK).all()
    suits = (hands[:, :, None] & SUIT_SETS[None, None, :]) != 0
    void = ((true.shown_void[:, :, None] >> np.arange(4, dtype=np.uint8)) & 1).astype(bool)
    assert not (suits & void).any()
    # world w of a position is the same alone, later in the list, or among fewer worlds
    one = np.empty((4, 4), np.uint64)
    deal_worlds(view.select([3]).records, np.uint64(5), 4, 4, one)
    np.testing.assert_array_equal(one, hands[3 * num + 4 : 3 * num + 8])


def test_worlds_are_uniform_among_the_deals_that_fit(engine, positions) -> None:
    """A late position with a shown void: every consistent deal about equally often."""
    view = seat_view(engine, positions)
    unseen = 52 - np.bitwise_count(view.hand_set) - np.bitwise_count(view.played_set).sum(1)
    small = np.flatnonzero((unseen >= 5) & (unseen <= 7) & (view.shown_void.sum(1) > 0))
    assert small.size
    v = view.select([int(small[0])])
    n = 6000
    hands = np.empty((n, 4), np.uint64)
    deal_worlds(v.records, np.uint64(11), 0, n, hands)
    seen = Counter(map(tuple, hands.tolist()))
    me = int(v.seat[0])
    others = [(me + i) % 4 for i in (1, 2, 3)]
    cards = [c for c in range(52) if int(FULL_DECK & ~np.bitwise_or.reduce(v.played_set[0])
                                         & ~v.hand_set[0]) >> c & 1]  # fmt: skip
    need = [13 - int(np.bitwise_count(v.played_set[0, s])) for s in others]
    deals = [
        a for a in itertools.product(range(3), repeat=len(cards))
        if [a.count(i) for i in range(3)] == need
        and not any(int(v.shown_void[0, others[i]]) >> (c // 13) & 1 for c, i in zip(cards, a, strict=True))
    ]  # fmt: skip
    assert len(seen) == len(deals) > 1
    expected = n / len(deals)
    chi2 = sum((k - expected) ** 2 / expected for k in seen.values())
    assert chi2 < len(deals) - 1 + 5 * np.sqrt(2 * (len(deals) - 1))


def test_rebuilt_views_are_the_views_the_seats_had(engine) -> None:
    """In the true deal, the views rebuilt for the others' bids and plays to the trick are the
    observations and legal actions those seats had when they acted (bar the shown voids, which
    the rebuilt play views drop for the suit the play itself showed)."""
    base = make_agent("heuristic-v1", engine.rules, seed=0)
    state = engine.init(16, seed=21)
    engine.deal(state)
    seen: dict[tuple, tuple] = {}  # (table, bids made, cards played) -> (observation, mask)
    while True:
        played = state.num_tricks * 4 + state.trick_size
        go = (state.phase == Phase.BID) | ((state.phase == Phase.PLAY) & (played < 6))
        if not go.any():
            break
        rows = np.flatnonzero(go)
        view = seat_view(engine, state, index=rows)
        obs = encode_observation(view)
        for j, t in enumerate(rows):
            cards = int(np.bitwise_count(view.played_set[j]).sum())
            seen[(int(t), int(view.num_bids[j]), cards)] = (obs[j], view.legal_mask[j])
        actions = np.zeros(16, np.int64)
        actions[rows] = base.act(view)
        engine.step(state, actions, active=go)
    live = np.flatnonzero(state.phase == Phase.PLAY)
    assert live.size > 8
    worlds = state.select(live)
    n = worlds.batch_size * 6
    obs = np.empty((n, OBS_SIZE), np.float32)
    legal = np.empty(n, np.uint64)
    acts = np.empty(n, np.int64)
    owners = np.empty(n, np.int64)
    actors = np.empty(n, np.int64)
    known = np.empty((n, 1), np.int64)
    viewer = worlds.to_play.astype(np.int64)
    m = observed_rows(worlds.records, viewer, engine._r, np.zeros(1, State.DTYPE),
                      np.zeros(1, SeatView.DTYPE), obs, legal, acts, owners, actors,
                      params_record(HEURISTIC_V1_PARAMS), known)  # fmt: skip
    # heuristic-v1 played these hands: in the true world, its model takes every action it took
    np.testing.assert_array_equal(known[:m, 0], acts[:m])
    keys = []
    for j, t in enumerate(live):
        first = (int(worlds.dealer[j]) + 1) % 4
        keys += [(int(t), k, 0) for k in range(4) if (first + k) % 4 != viewer[j]]
        keys += [(int(t), 4, 4 + p) for p in (1, 0)]  # the trick's plays, the last first
    assert m == len(keys)
    keep = np.ones(OBS_SIZE, bool)
    keep[568:584] = False  # shown voids
    for r, key in enumerate(keys):
        want_obs, want_mask = seen[key]
        np.testing.assert_array_equal(obs[r][keep], want_obs[keep], str(key))
        offset = 0 if key[1] == 4 else 52
        mask = np.zeros(66, bool)
        mask[offset + np.flatnonzero((int(legal[r]) >> np.arange(14 if offset else 52)) & 1)] = 1
        np.testing.assert_array_equal(mask, want_mask, str(key))
        assert want_mask[acts[r]]
        first = (int(worlds.dealer[owners[r]]) + 1) % 4
        want_seat = (first + key[1]) % 4 if key[1] < 4 else None
        assert want_seat is None or actors[r] == want_seat


# -- play-outs, the network, the match-win estimate ------------------------------------------
@pytest.mark.parametrize("symmetric", [False, True])
def test_float32_playouts_play_what_the_neural_agent_plays(engine, symmetric: bool) -> None:
    """Play-outs of the network, or of its policy averaged over the renamings of the plain
    suits (symmetric=all), play as the neural agent with the same setting."""
    from fourhundred_agents.neural.checkpoint import load_policy
    from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout

    net, _, _ = load_policy(MODEL)
    playout = PolicyPlayout(NetRunner(net, "float32", symmetric=symmetric), engine._r)
    spec = f"neural:{MODEL}" + (",symmetric=true" if symmetric else "")
    agent = make_agent(spec, engine.rules, seed=0)
    state = engine.init(12, seed=9)
    engine.deal(state)
    ref = state.copy()
    playout.run(state)
    while (ref.phase <= Phase.PLAY).any():
        live = ref.phase <= Phase.PLAY
        actions = np.zeros(ref.batch_size, np.int64)
        actions[live] = agent.act(seat_view(engine, ref, index=np.flatnonzero(live)))
        engine.step(ref, actions, active=live)
    assert state.equals(ref)


@pytest.mark.parametrize("model", [MODEL, "agents/pretrained/exit.pt"])
def test_a_symmetric_prior_is_the_symmetric_networks_policy(engine, positions, model) -> None:
    """symmetric=prior: the policy at the real table (cards, and the bids of a checkpoint
    with a bidding network) is neural:PATH,symmetric=true's; the play-outs keep the plain
    network."""
    state = engine.init(6, seed=5)
    engine.deal(state)
    for view in (seat_view(engine, positions), seat_view(engine, state)):
        search = make_agent(f"search:model={model},symmetric=prior,dtype=float32", engine.rules)
        neural = make_agent(f"neural:{model},symmetric=true", engine.rules)
        want = neural._log_probs(view).numpy()
        got = search._policy(view)
        np.testing.assert_array_equal(np.isfinite(got), view.legal_mask)
        np.testing.assert_allclose(got[view.legal_mask], want[view.legal_mask], atol=1e-4)
        assert not search.runner.symmetric and search.prior.symmetric


def test_playouts_play_a_seat_as_its_scripted_model(engine) -> None:
    """Seats modelled as heuristic-v1 play exactly as heuristic-v1; the others by the network."""
    from fourhundred_agents.neural.checkpoint import load_policy
    from fourhundred_agents.search.policy_playout import NetRunner, PolicyPlayout

    playout = PolicyPlayout(NetRunner(load_policy(MODEL)[0], "float32"), engine._r)
    agents = [make_agent(f"neural:{MODEL}", engine.rules, seed=0),
              make_agent("heuristic-v1", engine.rules, seed=0)]  # fmt: skip
    state = engine.init(12, seed=19)
    engine.deal(state)
    models = np.zeros((12, 4), np.int8)
    models[:, 1] = 1
    models[::2, 2] = 1
    ref = state.copy()
    playout.run(state, models=models, scripted=params_record(HEURISTIC_V1_PARAMS))
    while (ref.phase <= Phase.PLAY).any():
        live = np.flatnonzero(ref.phase <= Phase.PLAY)
        actions = np.zeros(ref.batch_size, np.int64)
        who = models[live, ref.to_play[live]]
        for m, agent in enumerate(agents):
            rows = live[who == m]
            if rows.size:
                actions[rows] = agent.act(seat_view(engine, ref, index=rows))
        engine.step(ref, actions, active=ref.phase <= Phase.PLAY)
    assert state.equals(ref)


def test_bfloat16_logits_do_not_depend_on_the_batch(engine, positions) -> None:
    from fourhundred_agents.neural.checkpoint import load_policy
    from fourhundred_agents.search.policy_playout import NetRunner

    runner = NetRunner(load_policy(MODEL)[0], "bfloat16")
    obs = encode_observation(seat_view(engine, positions))
    whole, _ = runner(np.concatenate([obs] * 20))
    for start, size in ((0, 1), (5, 7), (100, 300)):
        part, _ = runner(np.concatenate([obs] * 20)[start : start + size])
        np.testing.assert_array_equal(part, whole[start : start + size])


def test_the_match_win_estimate_reads_the_scores() -> None:
    model = MatchWin(rules=Rules())
    # dealer 3: seat 0 bids first; its team is seats 0 and 2
    p = model.first_team(np.array([[0, 0, 0, 0], [35, 0, 10, 0], [0, 35, 0, 10],
                                   [35, 0, -5, 0], [-20, 0, -20, 0]]), 41, 3)  # fmt: skip
    assert ((p > 0) & (p < 1)).all()
    assert abs(p[0] - 0.5) < 0.05
    assert p[1] > 0.8 and p[2] < 0.2 and p[3] < p[1] and p[4] < 0.4
    with pytest.raises(FourHundredError, match="fitted under other rules"):
        MatchWin(rules=Rules.preset("pagat"))


@pytest.mark.parametrize("name", ["", "matchwin_h1.npz"])
def test_the_match_win_estimate_is_its_network(name: str) -> None:
    """The compiled estimate is the ReLU MLP of its weights with a sigmoid output, as numpy
    computes it in float64 (float32 sums differ by rounding only), for every seat to deal."""
    model = MatchWin(matchwin_path(name))
    rng = np.random.default_rng(7)
    n = 500
    scores = rng.integers(-80, 70, size=(n, 4))
    target = rng.choice([41, 51, 61], n)
    dealer = rng.integers(0, 4, n)
    got = model.first_team(scores, target, dealer)
    x = features(scores, target, dealer).astype(np.float64)
    w1, b1, w2, b2, w3, b3 = (np.asarray(w, np.float64) for w in model.weights)
    h = np.maximum(np.maximum(x @ w1 + b1, 0) @ w2 + b2, 0)
    want = 1 / (1 + np.exp(-(h @ w3 + b3)))
    np.testing.assert_allclose(got, want, atol=1e-5)
    assert got.std() > 0.1  # the scores drawn reach far apart estimates


def _bidding_views(engine: Engine, n: int, seed: int) -> SeatView:
    """Bids of n fresh hands, after 0 to 3 bids by heuristic-v1."""
    state = engine.init(n, seed=seed)
    engine.deal(state)
    h1 = make_agent("heuristic-v1", engine.rules, seed=0)
    for k in range(3):
        live = np.arange(n) % 4 > k  # table j waits at its (j % 4)-th bid
        engine.step(state, np.where(live, h1.act(seat_view(engine, state)), 0), active=live)
    assert (state.phase == Phase.BID).all()
    return seat_view(engine, state)


def test_a_search_for_a_scripted_player_plays_every_seat_as_it(engine) -> None:
    """own=heuristic-v1 with models=heuristic-v1: each bid's value is its mean, over the
    weighted worlds, of the rest of the hand played by heuristic-v1 at every seat (the
    searching seat included; valued as the preset does, points included); the search bids
    the best of them."""
    from fourhundred_agents.search.agent import playout_values

    view = _bidding_views(engine, 8, seed=23)
    spec = "search:bidder,bid_worlds=5,candidates=20"
    agent = make_agent(spec, engine.rules, seed=4)
    values = agent.action_values(view)
    np.testing.assert_array_equal(np.isfinite(values), view.legal_mask)
    best = np.argmax(values, axis=1)
    np.testing.assert_array_equal(agent.act(view), best)
    # by hand: the same worlds, every seat played by a heuristic-v1 agent
    picks, counts = agent._worlds(view, agent.bid_worlds, agent.bid_pool)
    hands = agent._hands
    h1 = make_agent("heuristic-v1", engine.rules, seed=0)
    rows, worlds, bids = [], [], []
    for j in range(view.size):
        for w in np.flatnonzero(picks[j] >= 0):
            for b in np.flatnonzero(view.legal_mask[j]):
                rows.append(j), worlds.append(j * agent.bid_pool + picks[j, w]), bids.append(b)
    rows = np.array(rows)
    state = world_state(engine, view, hands[worlds], rows)
    engine.step(state, np.array(bids))
    while (state.phase <= Phase.PLAY).any():
        live = state.phase <= Phase.PLAY
        acts = np.zeros(state.batch_size, np.int64)
        acts[live] = h1.act(seat_view(engine, state, index=np.flatnonzero(live)))
        engine.step(state, acts, active=live)
    v = np.empty(state.batch_size)
    playout_values(state.records, np.ascontiguousarray(view.seat[rows], np.int64), False,
                   agent.per_point, *agent.matchwin.weights, v)  # fmt: skip
    weight = np.array([counts[j, list(picks[j]).index(worlds[i] - j * agent.bid_pool)]
                       for i, j in enumerate(rows)], np.float64)  # fmt: skip
    for j in range(view.size):
        for b in np.flatnonzero(view.legal_mask[j]):
            k = (rows == j) & (np.array(bids) == b)
            assert values[j, b] == pytest.approx((weight[k] * v[k]).sum() / weight[k].sum())


def test_the_match_win_weights_are_a_setting() -> None:
    h1 = MatchWin("agents/pretrained/matchwin_h1.npz")
    agent = make_agent("search:matchwin=matchwin_h1.npz", Rules(), seed=0)
    np.testing.assert_array_equal(agent.matchwin.w1, h1.w1)
    assert not np.array_equal(make_agent("search", Rules(), seed=0).matchwin.w1, h1.w1)


def test_points_add_to_the_match_value_by_per_point(engine) -> None:
    """per_point=c values a bid at its match-win value plus c times its points (the same
    worlds: they are drawn from the position)."""
    view = _bidding_views(engine, 6, seed=31)
    legal = view.legal_mask
    spec = "search:bidder,bid_worlds=6,candidates=24"
    match = make_agent(spec + ",per_point=0", engine.rules, seed=4).action_values(view)
    assert ((match[legal] >= 0) & (match[legal] <= 1)).all()
    points = make_agent(spec + ",value=points", engine.rules, seed=4).action_values(view)
    both = make_agent(spec + ",per_point=0.01", engine.rules, seed=4).action_values(view)
    np.testing.assert_allclose(both[legal], match[legal] + 0.01 * points[legal], atol=1e-9)
    assert np.abs(points[legal]).max() > 0  # the points are not all zero


def test_views_searched_in_chunks_decide_as_in_one_piece(engine, monkeypatch) -> None:
    """Large batches are searched a few views at a time (memory); the decisions and values
    are those of one piece."""
    import fourhundred_agents.search.agent as search

    view = _bidding_views(engine, 6, seed=29)
    agent = make_agent("search:bidder,bid_worlds=4,candidates=16", engine.rules, seed=4)
    whole, values = agent.act(view), agent.action_values(view)
    monkeypatch.setattr(search, "MAX_DEALS", 2 * agent.bid_pool)  # two views at a time
    np.testing.assert_array_equal(agent.act(view), whole)
    np.testing.assert_array_equal(agent.action_values(view), values)
