"""Your own bid features: extra inputs of a bidding network, from code you name
(``fourhundred train bidding_q features=SPEC``, or PPO bidding's ``train bidding_short
features=SPEC``; played by ``neural-bid:PATH,features=SPEC``).

**The contract.** A feature function takes a :class:`~fourhundred_env.view.SeatView` of K
tables, at each of which ``view.seat`` is to bid, and returns a (K, F) array of finite numbers
(converted to float32), the same F for every call; row k is about table k. It is called at
every bid the network makes: in the fitted-Q bidder's training on every recorded position (once
per iteration, and again on a resume) and at the learner's bids of the matches and play-outs;
in PPO bidding at every rollout step, for the seat to bid at every table (the columns stored
with the rollout, which the update reads back); at play time at every bid. It reads only the
view (what that seat may see), so it must be a function of it: the same view, the same row, in
any batch. Its F columns are appended to the network's input (the observation of ``net: mlp``
and of PPO's policy network, the shared entries of ``net: bid_features``); a match field
blanked by ``match_features: false`` is blanked in the observation only.

**Named again at play time.** A checkpoint is data and never names code to import
(docs/security.md): it records only the function's name and F (``extra["features"]``, and
``extra_inputs`` in its network config). The owner names the code again where it is played
(``neural-bid:PATH,features=SPEC``); a checkpoint trained with features is refused without
them, and refused with a function of another name or width (`recorded_problem`).

Name a function as ``package.module:function`` (or ``package.module.function``),
``path/to/file.py:function``, or by the name of an entry point in the group
``fourhundred.bid_features``. It is checked before any work (`load_features`): it must
import, be callable and give (K, F) finite numbers, F fixed, on sample views; anything else is
one line, a ``sys.exit`` in it and a check longer than ``CHECK_SECONDS`` too (agents/hooks.py's
`guarded`). An example: examples/bid_features.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from fourhundred_agents.hooks import first_line, guarded, import_named
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules
from fourhundred_env.view import SeatView

ENTRY_POINT_GROUP = "fourhundred.bid_features"
"""The entry-point group of installed packages' bid features (``features=NAME``)."""
MAX_FEATURES = 1024
"""The most columns a feature function may give (F)."""


@dataclass(frozen=True)
class FeatureHook:
    """A feature function as named by its owner, checked: called, it gives (K, size) float32."""

    spec: str
    """The text that named it (``features=SPEC``)."""
    name: str
    """The function's name (what a checkpoint records and compares)."""
    size: int
    """F: the columns it gives."""
    fn: Callable[[SeatView], Any]
    """The function itself."""

    def __call__(self, view: SeatView) -> np.ndarray:
        """(K, size) float32 at `view`'s K tables; ConfigError in one line if it answers
        otherwise than it did on the sample."""
        return _checked(self.spec, self.fn, view, self.size)

    def record(self) -> dict[str, Any]:
        """What a checkpoint records of it: its name, the text that named it, its width."""
        return {"name": self.name, "spec": self.spec, "size": self.size}


def load_features(text: str, rules: Rules | None = None) -> FeatureHook:
    """The feature function `text` names (see the module docstring), checked on sample views
    under `rules`; ConfigError in one line when it does not import, is not callable or
    answers wrongly."""
    fn = import_named(text, "features", ENTRY_POINT_GROUP)
    if not callable(fn):
        raise ConfigError(f"features={text!r} is a {type(fn).__name__}: expected a function")
    size = None
    views = sample_views(rules or Rules())
    with guarded("features", text, "on its sample views"):  # sys.exit, or an endless loop
        for view in views:
            size = _checked(text, fn, view, size).shape[1]
    name = getattr(fn, "__name__", type(fn).__name__)
    return FeatureHook(text, str(name), int(size), fn)


def _checked(text: str, fn: Callable, view: SeatView, size: int | None) -> np.ndarray:
    """fn(view) as (K, F) float32, F == size if given (else 1 to MAX_FEATURES), finite."""
    k = view.size
    try:
        out = np.asarray(fn(view), np.float32)
    except (Exception, SystemExit) as e:  # the user's code: any failure is one line naming it
        raise ConfigError(
            f"features={text!r} failed on {k} bidding views ({type(e).__name__}: "
            f"{first_line(e)}): expected a function of a SeatView"
        ) from None
    want = f"({k}, {size})" if size is not None else f"({k}, F) with F from 1 to {MAX_FEATURES}"
    ok = out.ndim == 2 and out.shape[0] == k
    ok = ok and (out.shape[1] == size if size is not None else 1 <= out.shape[1] <= MAX_FEATURES)
    if not ok:
        raise ConfigError(
            f"features={text!r} returned shape {out.shape} for {k} tables: expected {want}, "
            "one row of the same F numbers per table"
        )
    if not np.isfinite(out).all():
        raise ConfigError(
            f"features={text!r} returned values that are not finite (NaN or infinity) for {k} "
            "tables: expected finite numbers"
        )
    return out


def sample_views(rules: Rules) -> list[SeatView]:
    """Two batches of bidding views (7 and 3 tables), some before any bid and some after
    others' bids (heuristic-v1's, played through a GameLoop), to check a feature function
    before any work."""
    from fourhundred_agents.scripted.heuristic_v1 import HeuristicV1Agent
    from fourhundred_env.engine import Engine, Phase
    from fourhundred_env.loop import GameLoop
    from fourhundred_env.view import seat_view

    engine = Engine(rules)
    state = engine.init(10, seed=12345)
    loop = GameLoop(engine, state)
    loop.deal()
    bidder = HeuristicV1Agent(rules)
    for num_bids in range(3):  # table t waits for its (t % 4 + 1)-th bid
        bidding = loop.pending() & (state.phase == int(Phase.BID))
        active = bidding & (np.arange(10) % 4 > num_bids)
        if active.any():
            actions = np.full(10, -1, np.int64)
            actions[active] = bidder.act(seat_view(engine, state, index=np.flatnonzero(active)))
            loop.step(actions, active)
    rows = np.flatnonzero(loop.pending() & (state.phase == int(Phase.BID)))
    view = seat_view(engine, state, index=rows)
    return [view.select(np.arange(min(7, view.size))), view.select(np.arange(7, view.size))]


def recorded_problem(hook: FeatureHook | None, record: Any, size: int, where: str,
                     path: str) -> str | None:  # fmt: skip
    """Why the feature function `hook` (None: not named) cannot feed a network with `size`
    extra inputs whose checkpoint (`where`, at `path`) records `record` (its
    ``extra["features"]``), in one line, or None: named where the network reads none, missing
    where it reads some, or of another name or width than it was trained with."""
    if not size:
        if hook is not None:
            return (f"{where} was trained without bid features: expected no features= "
                    f"(features={hook.spec!r} given)")  # fmt: skip
        return None
    if not isinstance(record, Mapping) or not isinstance(record.get("name"), str):
        return (f"{where}: its network reads {size} extra input(s) but the checkpoint records "
                "no feature function's name: expected extra['features'] as the trainer "
                "writes it")  # fmt: skip
    name, spec = record["name"][:80], str(record.get("spec", ""))[:200]
    if hook is None:
        return (f"{where} was trained with bid features {name!r} ({size} input(s), named "
                f"features={spec!r} in training): expected them named again where it is "
                f"played, as neural-bid:{path},features=SPEC (a checkpoint never names code "
                "to import; docs/security.md)")  # fmt: skip
    if hook.name != name or hook.size != size:
        return (f"features={hook.spec!r} is {hook.name!r} giving {hook.size} column(s): "
                f"{where} was trained with {name!r} giving {size} (features={spec!r} in "
                "training)")  # fmt: skip
    return None
