"""``neural:PATH,symmetric=true``: the policy averaged over the six renamings of the plain
suits plays a renamed game as the renamed moves of the game itself."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents.neural.bid_net import SHARED_GATHERS, BidFeatures  # noqa: E402
from fourhundred_agents.registry import make_agent  # noqa: E402
from fourhundred_env.cards import card_text, parse_card  # noqa: E402
from fourhundred_env.rules import Rules  # noqa: E402
from fourhundred_env.symmetry import (  # noqa: E402
    SUIT_MAPS,
    SUIT_PERMUTATIONS,
    card_permutation,
)
from fourhundred_env.table import Table  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402

EXIT = "agents/pretrained/exit.pt"
SELFPLAY = "agents/pretrained/selfplay.pt"


def _play(spec: str, perm: tuple[int, ...], seed: int) -> list[int]:
    """One hand at a table dealt `seed`'s cards renamed by `perm`, every seat `spec`; the
    moves, renamed back."""
    agent = make_agent(spec, Rules(), seed=0)
    agent.reset(1)
    action_src = SUIT_MAPS[SUIT_PERMUTATIONS.index(perm)][1]  # renamed action -> real one
    table = _renamed_table(seed, perm)
    moves = []
    while table.phase in ("bid", "play"):
        action = int(agent.act(seat_view(table.engine, table.state, np.array([0])))[0])
        table.act(action)
        moves.append(int(action_src[action]))
    return moves


@pytest.mark.parametrize("path", [SELFPLAY, EXIT])
def test_the_symmetric_policy_plays_every_renaming_alike(path: str) -> None:
    spec = f"neural:{path},symmetric=true"
    for seed in (1, 2):
        moves = [_play(spec, perm, seed) for perm in SUIT_PERMUTATIONS]
        assert all(m == moves[0] for m in moves[1:])


def test_the_network_alone_does_not() -> None:
    """The reason for the setting: selfplay.pt plays some renamed hand differently."""
    differ = any(
        len({tuple(_play(f"neural:{SELFPLAY}", perm, seed)) for perm in SUIT_PERMUTATIONS}) > 1
        for seed in (1, 2, 3)
    )
    assert differ


def test_the_symmetric_policy_is_a_distribution_and_differs_from_the_network() -> None:
    plain = make_agent(f"neural:{SELFPLAY}", Rules(), seed=0)
    sym = make_agent(f"neural:{SELFPLAY},symmetric=true", Rules(), seed=0)
    table = Table(seed=4)
    table.deal(seed=4)
    gaps = []
    while table.phase in ("bid", "play"):
        view = seat_view(table.engine, table.state, np.array([0]))
        actions, probs = sym.act_with_probs(view)
        assert np.isclose(probs.sum(), 1) and view.legal_mask[0, actions[0]]
        assert (probs[~view.legal_mask] == 0).all()
        gaps.append(np.abs(probs - plain.act_with_probs(view)[1]).max())
        table.act(int(actions[0]))
    assert max(gaps) > 0.05


def _renamed_table(seed: int, perm: tuple[int, ...]) -> Table:
    """A table at its first bid, dealt `seed`'s cards renamed by `perm`."""
    new = card_permutation(perm)
    first = Table(seed=seed)
    first.deal(seed=seed)
    table = Table(seed=seed)
    table.deal([[card_text(int(new[parse_card(c)])) for c in first.hand(s)] for s in range(4)])
    return table


@pytest.mark.parametrize("seed", range(6))
def test_the_bidders_features_are_the_renamed_features_of_the_renamed_deal(seed: int) -> None:
    """What SHARED_GATHERS claims: renaming the deal renames the shared entries by the
    gather and leaves every per-bid entry as it was."""
    features = BidFeatures(Rules())
    views = [seat_view(t.engine, t.state, np.array([0]))
             for t in (_renamed_table(seed, p) for p in SUIT_PERMUTATIONS)]  # fmt: skip
    shared, per = features(views[0])
    for gather, view in zip(SHARED_GATHERS[1:], views[1:], strict=True):
        renamed_shared, renamed_per = features(view)
        assert np.array_equal(shared[:, gather], renamed_shared)
        assert np.array_equal(per, renamed_per)


def test_a_symmetric_bidding_network_bids_every_renaming_alike() -> None:
    """bidder.pt's bids averaged over the renamings: the same bid values for each renaming
    of a hand, where the network alone gives them different values."""
    sym = make_agent(
        "neural:agents/pretrained/bidder.pt,symmetric=true", Rules(), seed=0, decides="bid"
    )
    plain = make_agent("neural:agents/pretrained/bidder.pt", Rules(), seed=0, decides="bid")
    spread = []
    for seed in range(4):
        views = [seat_view(t.engine, t.state, np.array([0]))
                 for t in (_renamed_table(seed, p) for p in SUIT_PERMUTATIONS)]  # fmt: skip
        bids = np.stack([sym.outputs(v)[0][0, 52:].numpy() for v in views])
        assert np.allclose(bids, bids[0], atol=1e-4)
        plain_bids = np.stack([plain.outputs(v)[0][0, 52:].numpy() for v in views])
        spread.append(np.abs(plain_bids - plain_bids[0]).max())
    assert max(spread) > 1e-3


def test_a_table_gets_the_same_policy_alone_and_in_a_batch() -> None:
    """The six renamings are read in one call and the bidding network only at the bidding
    decisions: a table's policy (bids and cards) does not depend on the other tables (to
    float32's rounding, which a batch's size moves in the plain network too) and neither
    does its move."""
    from fourhundred_env.engine import Engine
    from fourhundred_env.view import SeatView
    from tests.test_rollout import _mid_hand_states

    engine = Engine(Rules())
    agent = make_agent(f"neural:{EXIT},symmetric=true", engine.rules, seed=0)
    cards = _mid_hand_states(engine, make_agent("heuristic-v1", engine.rules, seed=0), 12, 3)
    bids = engine.init(4, seed=8)
    engine.deal(bids)
    view = SeatView.concat([seat_view(engine, cards), seat_view(engine, bids)])
    together = agent.outputs(view)[0].numpy()
    alone = np.concatenate([agent.outputs(view.select([i]))[0].numpy() for i in range(view.size)])
    np.testing.assert_allclose(together, alone, atol=1e-4)
    moves = [int(agent.act(view.select([i]))[0]) for i in range(view.size)]
    np.testing.assert_array_equal(agent.act(view), moves)
