"""Invariants of the batched engine over random legal playouts (hypothesis), determinism,
batch equivalence and seeded deals."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fourhundred_env.cards import FULL_DECK, set_to_cards
from fourhundred_env.engine import Engine, Phase, deal_sets, first_dealers, select_bit
from fourhundred_env.rules import Rules, bid_value, min_bid, required_total
from tests.oracle import trick_winner

RULES_PROFILES = [Rules(), Rules.preset("pagat"), Rules(auto_claim=True), Rules(five_to_run=True)]


def _play_hands(engine: Engine, seed: int, batch: int, max_bid: int | None, scores=None):
    """Play one hand at each of `batch` tables with random legal actions, checking as we go.

    Returns the final state and, per table, the list of (seat, card) plays.
    """
    rng = np.random.default_rng(seed)
    state = engine.init(batch, seed=seed, scores=scores)
    engine.deal(state)
    plays: list[list[tuple[int, int]]] = [[] for _ in range(batch)]
    tricks_seen = np.zeros(batch, int)
    for _ in range(4 + 52):
        pending = state.phase <= Phase.PLAY
        if not pending.any():
            break
        mask = engine.legal_mask(state)
        # masks are never empty while a decision is pending, and empty otherwise
        assert (mask.any(axis=1) == pending).all()
        before_tricks = state.tricks_won.copy()
        leader = state.trick_leader.copy()
        trick = state.trick_cards.copy()
        actions = engine.random_actions(state, rng, max_bid=max_bid)
        assert mask[np.flatnonzero(pending), actions[pending]].all()
        seats = state.to_play.copy()
        engine.step(state, actions)
        for t in np.flatnonzero(pending & (actions < 52)):
            plays[t].append((int(seats[t]), int(actions[t])))
            won = state.tricks_won[t] - before_tricks[t]
            if len(plays[t]) % 4 == 0 and state.claim_seat[t] < 0:
                # the trick just completed: its winner is the oracle's
                order = [(int(leader[t]) + k) % 4 for k in range(4)]
                cards = [int(trick[t, s]) if s != seats[t] else int(actions[t]) for s in order]
                assert won.sum() == 1
                assert int(np.argmax(won)) == order[trick_winner(cards)]
                tricks_seen[t] += 1
    assert (state.phase >= Phase.HAND_OVER).all()
    return state, plays


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    profile=st.sampled_from(range(len(RULES_PROFILES))),
    max_bid=st.sampled_from([None, 3, 4, 6]),
    score_seed=st.integers(0, 1000),
)
def test_random_hands_keep_every_invariant(seed, profile, max_bid, score_seed) -> None:
    rules = RULES_PROFILES[profile]
    engine = Engine(rules)
    batch = 32
    scores = np.random.default_rng(score_seed).integers(-30, 60, size=(batch, 4))
    state, plays = _play_hands(engine, seed, batch, max_bid, scores)
    for t in range(batch):
        dealt = state.dealt_set[t]
        # a deal is the whole pack, 13 cards each
        assert np.bitwise_or.reduce(dealt) == FULL_DECK
        assert np.bitwise_count(dealt).tolist() == [13] * 4
        if state.thrown_in[t]:
            assert state.scores[t].tolist() == scores[t].tolist()
            assert plays[t] == []
            continue
        # every card played exactly once, each from its owner's hand (a claim lays the rest down)
        cards = [c for _, c in plays[t]]
        assert len(cards) == len(set(cards))
        for seat, c in plays[t]:
            assert c in set_to_cards(dealt[seat])
        if state.claim_seat[t] < 0:
            assert len(cards) == 52
        assert int(state.tricks_won[t].sum()) == 13
        assert int(state.num_tricks[t]) == 13
        # scores follow the table from the bids, the tricks and the pre-hand scores
        for seat in range(4):
            bid = int(state.bids[t, seat])
            assert bid >= min_bid(int(scores[t, seat]), rules)
            value = bid_value(bid, int(scores[t, seat]), rules)
            made = state.tricks_won[t, seat] >= bid
            assert state.scores[t, seat] == scores[t, seat] + (value if made else -value)
        if not rules.five_to_run:
            weights = rules.total_weights()
            total = sum(int(weights[b]) for b in state.bids[t])
            assert total >= required_total([int(x) for x in scores[t]], rules)


def _policy_actions(engine: Engine, state) -> np.ndarray:
    """A deterministic policy that depends only on each table's own state (not the batch)."""
    legal, playing = engine.legal_sets(state)
    n = np.bitwise_count(legal).astype(np.int64)
    key = state.hand_index.astype(np.int64) * 31 + state.num_tricks * 7 + state.num_bids * 3
    key = key + state.scores.sum(axis=1) + state.to_play
    k = (key % np.maximum(n, 1)).astype(np.uint8)
    actions = select_bit(legal, k) + np.where(playing, 0, 52)
    # keep bids low so that matches end
    bid_phase = ~playing & (n > 0)
    low = select_bit(legal, np.zeros_like(k)) + 52
    actions = np.where(bid_phase & (key % 3 != 0), low, actions)
    return np.where(n > 0, actions, -1)


def _run_matches(match_ids: np.ndarray, seed: int, rules: Rules, max_steps: int = 3000):
    engine = Engine(rules)
    state = engine.init(len(match_ids), seed=seed, match_id=match_ids)
    engine.deal(state)
    for _ in range(max_steps):
        engine.step(state, _policy_actions(engine, state))
        between = state.phase == Phase.HAND_OVER
        if between.any():
            engine.deal(state, between)
        if (state.phase == Phase.MATCH_OVER).all():
            break
    return state


def test_same_table_alone_and_in_a_batch_of_256() -> None:
    rules = Rules()
    batch = _run_matches(np.arange(256), seed=3, rules=rules)
    assert (batch.hand_index >= 20).all()  # tens of hands, thrown in and played, per table
    for t in (0, 1, 77, 255):
        alone = _run_matches(np.array([t]), seed=3, rules=rules)
        assert alone.equals(batch.select(t)), f"table {t}"


def test_same_seed_same_match_and_different_seeds_differ() -> None:
    a = _run_matches(np.arange(8), seed=42, rules=Rules())
    b = _run_matches(np.arange(8), seed=42, rules=Rules())
    c = _run_matches(np.arange(8), seed=43, rules=Rules())
    assert a.equals(b)
    assert not np.array_equal(a.dealt_set, c.dealt_set)


def test_deals_depend_only_on_seed_match_and_hand() -> None:
    ids = np.array([5, 9, 5, 1000])
    hands = np.array([0, 0, 3, 7])
    together = deal_sets(7, ids, hands)
    for i in range(4):
        alone = deal_sets(7, ids[i : i + 1], hands[i : i + 1])
        assert np.array_equal(alone[0], together[i])
    assert not np.array_equal(together[0], together[2])  # another hand of the same match
    assert not np.array_equal(deal_sets(8, ids, hands), together)  # another seed
    assert first_dealers(7, ids)[0] == first_dealers(7, ids)[2]


def test_deals_are_uniform_enough() -> None:
    """Each card lands on each seat about a quarter of the time (20,000 deals)."""
    deals = deal_sets(1, np.arange(20000), np.zeros(20000, int))
    bits = (deals[:, :, None] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)
    share = bits.mean(axis=0)  # (4, 52)
    assert np.abs(share - 0.25).max() < 0.02
    dealers = first_dealers(1, np.arange(20000))
    assert np.abs(np.bincount(dealers, minlength=4) / 20000 - 0.25).max() < 0.02


def test_select_bit_both_paths_agree() -> None:
    rng = np.random.default_rng(0)
    x = rng.integers(1, 2**63, 1000, dtype=np.uint64)
    k = (rng.random(1000) * np.bitwise_count(x)).astype(np.uint8)
    big = select_bit(x, k)
    small = np.concatenate([select_bit(x[i : i + 10], k[i : i + 10]) for i in range(0, 1000, 10)])
    assert np.array_equal(big, small)
    for i in range(50):
        bits = [b for b in range(64) if int(x[i]) >> b & 1]
        assert big[i] == bits[k[i]]


def test_engine_import_loads_neither_torch_nor_gymnasium() -> None:
    """The rules core and the observation encoder are numpy only."""
    code = (
        "import sys, fourhundred_env, fourhundred_env.engine, fourhundred_env.table,"
        " fourhundred_env.observation;"
        "bad = [m for m in ('torch', 'gymnasium', 'pettingzoo') if m in sys.modules];"
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_new_match_plays_like_a_fresh_table() -> None:
    """A finished table restarted with new_match deals and plays exactly like a new table."""
    engine = Engine(Rules())
    used = _run_matches(np.array([0, 1]), seed=9, rules=Rules(), max_steps=500)
    engine.new_match(used, np.array([1]), np.array([7]))
    fresh = engine.init(1, seed=9, match_id=np.array([7]))
    for state in (used, fresh):
        engine.deal(state, np.array([state.batch_size - 1]))
    for _ in range(60):
        for state in (used, fresh):
            engine.step(state, _policy_actions(engine, state))
    assert used.select(1).equals(fresh)


def test_step_refuses_every_illegal_action_and_changes_nothing() -> None:
    """Out-of-range ids, cards while bidding, bids while playing, cards not held, revoke."""
    import pytest

    from fourhundred_env.errors import IllegalActionError

    engine = Engine(Rules())
    state = engine.init(4, seed=1)
    engine.deal(state)
    rng = np.random.default_rng(0)
    for phase_steps in (0, 6):  # bidding, then trick play
        for _ in range(phase_steps):
            engine.step(state, engine.random_actions(state, rng, max_bid=4))
            engine.deal(state, state.phase == Phase.HAND_OVER)
        mask = engine.legal_mask(state)
        good = engine.random_actions(state, rng, max_bid=4)
        for bad_action in [-1, 66, 70, 1000, *np.flatnonzero(~mask[2])]:
            actions = good.copy()
            actions[2] = bad_action
            before = state.copy()
            with pytest.raises(IllegalActionError, match=f"table 2, seat {state.to_play[2]}"):
                engine.step(state, actions)
            assert state.equals(before)
    with pytest.raises(IllegalActionError, match="got 3 actions for 4 tables"):
        engine.step(state, np.zeros(3, int))


def test_step_with_an_active_mask_leaves_the_other_tables_alone() -> None:
    engine = Engine(Rules())
    rng = np.random.default_rng(4)
    state = engine.init(6, seed=4)
    engine.deal(state)
    for _ in range(10):
        engine.step(state, engine.random_actions(state, rng, max_bid=4))
    active = np.array([True, False, True, False, True, True])
    actions = engine.random_actions(state, rng, max_bid=4)
    full, masked = state.copy(), state.copy()
    engine.step(full, actions)
    bad = actions.copy()
    bad[~active] = 999  # ignored where inactive: not even validated
    engine.step(masked, bad, active=active)
    for t in range(6):
        expected = full if active[t] else state
        assert masked.select(t).equals(expected.select(t))
