"""Record the frozen bots' decisions at a few thousand positions: tests/data/heuristic_positions.npz.

    python -m tests.make_heuristic_fixture          # rewrites the file (only on purpose!)

`heuristic-v1` and `minbid` are yardsticks: they are frozen by their recorded behaviour, not
by a copy of their code. This script made the fixture once, with the implementation of the
day (2026-11-30, the numpy heuristic before the compiled core); `tests/test_heuristic_fixture.py`
asserts that every decision is still the same, bit for bit. Rerun it only to freeze a new
yardstick on purpose, never to make that test pass.

Positions: for each rules profile, 64 tables from seeded deals and random pre-hand scores
(-25..64, so minimum bids, required totals and the thirty rule vary), played by a mix of
`heuristic-v1` (70% of the decisions) and random legal play (bids up to 3, 5 or any); the
view of the seat to act is kept at 40% of the bids and 5% of the cards. The views are
stored field by field, so the fixture does not depend on the engine that made them.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import numpy as np

from fourhundred_agents import make_agent
from fourhundred_env.engine import Engine, Phase
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView, seat_view

PATH = Path(__file__).parent / "data" / "heuristic_positions.npz"
PROFILES: dict[str, dict] = {
    "wiki": {},
    "pagat": {"preset": "pagat"},
    "auto_claim": {"auto_claim": True},
    "five_to_run": {"five_to_run": True},
    "no_redeal_no_thirty": {"no_face_redeal": False, "five_six_face_value_from": None},
}
TUNED = "heuristic:sigma=1.3,bid_bias=0.1,others_bids_weight=0.2,finish_bonus=15,risk_loss_weight=0.8,partner_make_prob=0.6,redeal_below=-1,void_guess=1"
"""A heuristic with every parameter moved: its column checks that parameters reach the code."""
SPECS = {"v1": "heuristic-v1", "minbid": "minbid", "tuned": TUNED}
PER_PROFILE = 1000
BATCH = 64


def positions(rules: Rules, seed: int) -> SeatView:
    """PER_PROFILE seat views of the seat to act, from mixed heuristic-v1 and random play."""
    engine = Engine(rules)
    rng = np.random.default_rng(seed)
    state = engine.init(BATCH, seed=seed, scores=rng.integers(-25, 65, size=(BATCH, 4)))
    engine.deal(state)
    v1 = make_agent("heuristic-v1", rules, seed=0)
    caps = [3, 5, None]
    views: list[SeatView] = []
    kept = 0
    while kept < PER_PROFILE:
        view = seat_view(engine, state)
        actions = v1.act(view)
        rand = engine.random_actions(state, rng, max_bid=caps[int(rng.integers(3))])
        actions = np.where(rng.random(BATCH) < 0.3, rand, actions)
        keep = np.flatnonzero(rng.random(BATCH) < np.where(state.phase == Phase.BID, 0.4, 0.05))
        if keep.size:
            views.append(view.select(keep[: PER_PROFILE - kept]))
            kept += views[-1].size
        engine.step(state, actions)
        over = np.flatnonzero(state.phase == Phase.HAND_OVER)
        if over.size:
            engine.deal(state, over)
        done = np.flatnonzero(state.phase == Phase.MATCH_OVER)
        if done.size:
            engine.new_match(state, done, state.match_id[done] + BATCH)
            state.scores[done] = rng.integers(-25, 65, size=(done.size, 4))
            engine.deal(state, done)
    return SeatView(
        **{f.name: np.concatenate([getattr(v, f.name) for v in views]) for f in fields(SeatView)}
    )


def load_views(data: dict, rows: np.ndarray) -> SeatView:
    """The fixture's views at `rows`; a field added to SeatView after the fixture was made
    (``stream``) is zero there."""
    return SeatView(
        **{
            f.name: data[key][rows] if key in data else np.zeros(rows.size, f.metadata["dtype"])
            for f in fields(SeatView)
            for key in [f"view_{f.name}"]
        }
    )


def main() -> None:
    out: dict[str, list[np.ndarray]] = {}
    for p, (name, flags) in enumerate(PROFILES.items()):
        rules = Rules.from_dict(flags)
        view = positions(rules, seed=100 + p)
        for f in fields(SeatView):
            out.setdefault(f"view_{f.name}", []).append(getattr(view, f.name))
        out.setdefault("profile", []).append(np.full(view.size, p, np.int8))
        for col, spec in SPECS.items():
            out.setdefault(f"action_{col}", []).append(make_agent(spec, rules, seed=0).act(view))
        print(f"{name}: {view.size} positions, {int((view.phase == Phase.BID).sum())} bids")
    arrays = {k: np.concatenate(v) for k, v in out.items()}
    arrays["profile_names"] = np.array(list(PROFILES))
    arrays["tuned_spec"] = np.array(TUNED)
    PATH.parent.mkdir(exist_ok=True)
    np.savez_compressed(PATH, **arrays)
    print(f"wrote {PATH} ({PATH.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
