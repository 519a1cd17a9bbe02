"""The batched engine against the independent plain-Python oracle, over thousands of hands.

Every table of a batch is mirrored by an `OracleMatch` dealt the same cards. At every step
the legal actions must agree, then the same (random legal) action is applied to both and
every public fact is compared: phase, seat to play, bids, tricks, scores, dealer, target,
winner. Starting scores are drawn wide so that escalating minimum bids, required totals,
the thirty rule and every end-of-game branch are exercised.
"""

from __future__ import annotations

import numpy as np
import pytest

from fourhundred_env.cards import set_to_cards
from fourhundred_env.engine import PHASE_NAMES, Engine, Phase
from fourhundred_env.rules import Rules
from tests.oracle import OracleMatch

PROFILES = {
    "wiki": Rules(),
    "pagat": Rules.preset("pagat"),
    "five_to_run": Rules(five_to_run=True),
    "partner_may_be_negative": Rules(partner_must_be_positive=False),
    "highest_player": Rules(simultaneous_finish="highest_player"),
    "highest_team_total": Rules(simultaneous_finish="highest_team_total"),
    "no_redeal_no_thirty": Rules(no_face_redeal=False, five_six_face_value_from=None),
    "flat_bids": Rules(min_bid_escalates=False, escalate_total=False, min_total_bids=9),
}


def _compare(engine_state, t: int, oracle: OracleMatch, context: str) -> None:
    s = engine_state
    phase = PHASE_NAMES[s.phase[t]]
    assert phase == oracle.phase, context
    assert s.scores[t].tolist() == list(oracle.scores), context
    assert int(s.dealer[t]) == oracle.dealer, context
    assert int(s.target[t]) == oracle.target, context
    winner = int(s.winner[t])
    assert (None if winner < 0 else winner) == oracle.winner, context
    if phase in ("bid", "play"):
        assert int(s.to_play[t]) == oracle.to_play, context
        assert s.bids[t].tolist() == list(oracle.bids), context
        assert s.tricks_won[t].tolist() == list(oracle.tricks_won), context
    if phase == "hand_over":
        assert bool(s.thrown_in[t]) == oracle.thrown_in, context


def _run(rules: Rules, batch: int, steps: int, seed: int, max_bid: int | None) -> int:
    """Play `steps` batched steps; returns the number of hands finished and checked."""
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    scores = rng.integers(-25, 62, size=(batch, 4))
    state = engine.init(batch, seed=seed, scores=scores)
    oracles = [
        OracleMatch(rules, dealer=int(state.dealer[t]), scores=tuple(int(x) for x in scores[t]))
        for t in range(batch)
    ]

    def deal(index: np.ndarray) -> None:
        engine.deal(state, index)
        for t in index:
            oracles[t].deal([set_to_cards(h) for h in state.dealt_set[t]])

    deal(np.arange(batch))
    hands_checked = 0
    for step in range(steps):
        mask = engine.legal_mask(state)
        actions = engine.random_actions(state, rng, max_bid=max_bid)
        for t in range(batch):
            pending = state.phase[t] <= Phase.PLAY
            legal = np.flatnonzero(mask[t]).tolist()
            assert legal == (oracles[t].legal() if pending else []), f"table {t} step {step}"
        engine.step(state, actions)
        for t in range(batch):
            if actions[t] >= 0:
                oracles[t].act(int(actions[t]))
                _compare(state, t, oracles[t], f"table {t} step {step} action {actions[t]}")
        over = np.flatnonzero(state.phase >= Phase.HAND_OVER)
        hands_checked += over.size
        finished = np.flatnonzero(state.phase == Phase.MATCH_OVER)
        if finished.size:  # start new matches on fresh scores
            engine.new_match(state, finished, state.match_id[finished] + batch)
            for t in finished:
                oracles[t] = OracleMatch(rules, dealer=int(state.dealer[t]))
        if over.size:
            deal(over)
    return hands_checked


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_engine_matches_oracle(name: str) -> None:
    seed = sorted(PROFILES).index(name)  # fixed per profile (str hash() varies per process)
    hands = _run(PROFILES[name], batch=64, steps=700, seed=seed, max_bid=5)
    assert hands >= 500  # thousands over all profiles


def test_engine_matches_oracle_with_any_bid() -> None:
    """Uniformly random bids up to 13: high contracts, big losses, deep negative scores."""
    assert _run(Rules(), batch=64, steps=400, seed=5, max_bid=None) >= 300


def test_auto_claim_gives_what_playing_out_gives() -> None:
    """With auto_claim, a claimed hand ends with the tricks and scores that every play-out gives.

    The oracle (which never claims) plays the rest out with random legal cards: the claimer
    must take every remaining trick, and the final scores must be the engine's.
    """
    rules = Rules(auto_claim=True)
    engine = Engine(rules)
    rng = np.random.default_rng(11)
    batch = 256
    state = engine.init(batch, seed=11)
    engine.deal(state)
    oracles = [OracleMatch(Rules(), dealer=int(state.dealer[t])) for t in range(batch)]
    for t in range(batch):
        oracles[t].deal([set_to_cards(h) for h in state.dealt_set[t]])
    claims = 0
    pyrng = np.random.default_rng(12)
    for _ in range(60):
        actions = engine.random_actions(state, rng, max_bid=4)
        engine.step(state, actions)
        for t in range(batch):
            if actions[t] < 0:
                continue
            o = oracles[t]
            o.act(int(actions[t]))
            if state.claim_seat[t] >= 0 and o.phase == "play":
                claims += 1
                claimer = int(state.claim_seat[t])
                before = o.tricks_won[claimer]
                remaining = 13 - sum(o.tricks_won)
                while o.phase == "play":
                    legal = o.legal()
                    o.act(int(legal[pyrng.integers(len(legal))]))
                assert o.tricks_won[claimer] == before + remaining
            _compare(state, t, o, f"table {t}")
        if (state.phase >= Phase.HAND_OVER).all():
            break
    assert claims >= 20
