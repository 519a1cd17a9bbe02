"""The `search` bot's settings: :class:`SearchSettings` (what the spec parser fills), the
presets their unset fields start from, and the scripted bots a seat may be modelled as."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

from fourhundred_agents.scripted.heuristic_bid import HEURISTIC_V1_PARAMS, HeuristicParams
from fourhundred_env.configs import check_fields
from fourhundred_env.errors import ConfigError

DEFAULT_MODEL = str(Path(__file__).parents[1] / "pretrained" / "selfplay.pt")
FAST_MODEL = str(Path(__file__).parents[1] / "pretrained" / "exit.pt")
BUNDLED_BIDDER = str(Path(__file__).parents[1] / "pretrained" / "bidder.pt")
SCRIPTED_MODELS: dict[str, tuple[HeuristicParams, bool]] = {
    "heuristic-v1": (HEURISTIC_V1_PARAMS, False),
    "heuristic": (HeuristicParams(), False),
    "minbid": (HEURISTIC_V1_PARAMS, True),
}
"""The scripted bots a seat may be modelled as (`models`): heuristic parameters, min_bids."""


MAX_WORLDS = 65536
"""The most worlds (or candidate deals) a decision may draw: the search's arrays grow with
them (a million worlds would take gigabytes), and 2,000 times the defaults is past any
gain."""


@dataclass(frozen=True)
class SearchSettings:
    """``search``, ``search:strong``, ``search:worlds=64,endgame=4`` (settings over a preset)."""

    preset: Literal["default", "strong", "fast", "bidder"] = "default"
    """Starting values of every setting left unset (see PRESETS)."""
    model: str | None = None
    """Policy checkpoint that plays the play-outs and weights the worlds (a neural: path);
    unset: the preset's, selfplay.pt (exit.pt for ``fast``)."""
    worlds: int | None = None
    """Worlds scored per decision."""
    candidates: int | None = None
    """Deals drawn per decision before weighting and resampling down to `worlds` (at least
    `worlds`; with weighting=uniform, `worlds` deals are drawn)."""
    weighting: Literal["uniform", "policy"] | None = None
    """How worlds are weighted: all alike, or by the policy's likelihood of the others' bids
    and plays."""
    epsilon: float | None = None
    """Share of a uniformly random legal action mixed into the policy's likelihood (a seat
    that does not play like the policy does not rule a world out)."""
    endgame: int | None = None
    """Tricks left (at most) from which card play is solved exactly in every world; 0: never."""
    bids: bool | None = None
    """Search the bids too (False: the policy bids)."""
    bid_model: str | None = None
    """Who bids when the bids are not searched (bids=false; a checkpoint with bids=true is
    refused): `policy`, or the path of a `neural-bid:` or `neural:` checkpoint."""
    bid_candidates: int | None = None
    """Bids searched: the policy's most likely ones."""
    top_actions: int | None = None
    """Cards searched: the policy's most likely ones (0: every legal card)."""
    tricks: int | None = None
    """Card play is searched in the last `tricks` tricks of a hand only (13: every trick); the
    policy plays the earlier cards. Valuing actions (`action_values`, analysis, hints)
    searches at every trick whatever this says."""
    margin: float | None = None
    """Value (match-win probability, or points with value=points) by which a searched action
    must beat the policy's own choice, on average over the worlds, to be played instead."""
    confidence: float | None = None
    """Standard errors (of the mean difference, world by world) by which a searched action
    must beat the policy's own choice on top of the margin: 0 takes the best mean."""
    bid_worlds: int | None = None
    """Worlds scored per bid (bids are few and decide most of the points)."""
    time_per_move: float | None = None
    """Time budget in seconds per decision (a call with K decisions may take K times it);
    the worlds scored by then decide."""
    value: Literal["match", "points"] = "match"
    """What a play-out is worth: the match-win estimate after the hand, or the team's points."""
    per_point: float | None = None
    """With value=match, added to a play-out's worth per point the team scores in the hand:
    where the bids' match-win chances are about even, the points decide (0: none)."""
    matchwin: str | None = None
    """The match-win estimate's weights (value=match): '' the bundled matchwin.npz (fitted
    on selfplay.pt's play), a file, or a file's name in agents/pretrained
    (``matchwin_h1.npz``, fitted on heuristic-v1's play)."""
    dtype: Literal["auto", "bfloat16", "float32"] = "auto"
    """Precision of the network (auto: bfloat16 where the CPU has it natively)."""
    symmetric: Literal["none", "prior", "all"] = "none"
    """Where the network's policy is averaged over the six renamings of the plain suits
    (clubs, diamonds and spades are equal; as ``neural:PATH,symmetric=true``): nowhere, at
    the real table only (the policy the candidates, the default choice and the model's bids
    come from), or everywhere, the play-outs and the worlds' weights too (six times the
    network's work)."""
    models: str | None = None
    """Who the other seats may be, joined by '+': `policy` (the network) and the scripted bots
    of SCRIPTED_MODELS (`heuristic-v1`, `heuristic`, `minbid`). With more than one, each
    other seat's model is inferred in every world from the actions it was seen to take (a
    uniform prior over the list), and the play-outs play each seat as its most likely
    model in that world (needs weighting=policy)."""
    own: str | None = None
    """Who plays the searching seat itself in its play-outs: `policy`, or one of the scripted
    bots named in `models`: a search that bids for a scripted card player
    (``compose:bid=search:models=heuristic-v1,own=heuristic-v1,play=heuristic-v1``)."""

    def __post_init__(self) -> None:
        check_fields(self)
        for name in ("worlds", "bid_worlds", "candidates"):
            v = getattr(self, name)
            if v is not None and not 1 <= v <= MAX_WORLDS:
                raise ConfigError(f"{name}={v}: expected 1 to {MAX_WORLDS:,}")
        for name in ("endgame", "top_actions", "tricks"):
            v = getattr(self, name)
            if v is not None and not 0 <= v <= 13:
                raise ConfigError(f"{name}={v}: expected 0 to 13")
        if self.bid_candidates is not None and self.bid_candidates < 1:
            raise ConfigError(f"bid_candidates={self.bid_candidates}: expected at least 1")
        if self.models is not None:
            names = self.models.split("+")
            unknown = [m for m in names if m != "policy" and m not in SCRIPTED_MODELS]
            if unknown or len(set(names)) != len(names):
                raise ConfigError(
                    f"models={self.models!r}: expected distinct names from "
                    f"{', '.join(['policy', *SCRIPTED_MODELS])} joined by '+'"
                )
        if self.epsilon is not None and not 0.0 <= self.epsilon <= 1.0:
            raise ConfigError(f"epsilon={self.epsilon}: expected a probability 0 to 1")
        for name in ("margin", "confidence", "time_per_move", "per_point"):
            v = getattr(self, name)
            if v is not None and not v >= 0:
                why = " (a negative budget is none)" if name == "time_per_move" else ""
                raise ConfigError(f"{name}={v}: expected 0 or more{why}")

    def files(self) -> list[str]:
        """The checkpoints this bot plays with: its model, and its bid_model when that is a
        file (what a tournament's fingerprint hashes, so that a changed one is noticed)."""
        c = self.resolved()
        bidder = c["bid_model"]
        return [str(c["model"])] + ([str(bidder)] if bidder not in ("", "policy") else [])

    def resolved(self) -> dict[str, Any]:
        """Every setting, the unset ones from the preset."""
        out = dict(PRESETS[self.preset])
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = v
        out["candidates"] = max(out["candidates"], out["worlds"])
        return out


PRESETS: dict[str, dict[str, Any]] = {
    "default": dict(model=DEFAULT_MODEL,
                    worlds=32, candidates=128, weighting="policy", epsilon=0.05, endgame=0,
                    bids=True, bid_model="policy", bid_candidates=4, bid_worlds=64, top_actions=6,
                    tricks=13, margin=0.0, confidence=1.0, time_per_move=0.5,
                    models="policy+heuristic-v1", own="policy", matchwin="", per_point=0.0),
    "strong": dict(model=DEFAULT_MODEL,
                   worlds=128, candidates=512, weighting="policy", epsilon=0.05, endgame=0,
                   bids=True, bid_model="policy", bid_candidates=5, bid_worlds=256, top_actions=0,
                   tricks=13, margin=0.0, confidence=1.0, time_per_move=1.0,
                   models="policy+heuristic-v1", own="policy", matchwin="", per_point=0.0),
    "fast": dict(model=FAST_MODEL,
                 worlds=32, candidates=128, weighting="policy", epsilon=0.05, endgame=0,
                 bids=False, bid_model=BUNDLED_BIDDER, bid_candidates=4, bid_worlds=64,
                 top_actions=6, tricks=6, margin=0.0, confidence=1.0, time_per_move=0.5,
                 models="policy+heuristic-v1", own="policy", matchwin="", per_point=0.0),
    "bidder": dict(model=DEFAULT_MODEL,
                   worlds=32, candidates=512, weighting="policy", epsilon=0.05, endgame=0,
                   bids=True, bid_model="policy", bid_candidates=14, bid_worlds=512, top_actions=6,
                   tricks=13, margin=0.0, confidence=0.0, time_per_move=30.0,
                   models="heuristic-v1", own="heuristic-v1", matchwin="matchwin_h1.npz",
                   per_point=0.003),
}  # fmt: skip
"""The presets. ``default`` and ``strong`` take the other seats for the policy or
heuristic-v1 (inferred in each world), search the bids too, and replace the policy's action
by a searched one only when it is one standard error better (confidence=1); the exact
endgame is off. ``strong`` scores more worlds and every legal card. Both search over
``selfplay.pt``. ``fast`` is ``default`` searching only the cards of the last six tricks,
where the search gains most for its time, over ``exit.pt``: the bundled bidder
(``bidder.pt``) bids and the policy plays the earlier cards.

``bidder`` searches every legal bid for a seat whose cards heuristic-v1 plays: the other
seats are taken for heuristic-v1 (their bids weight 8,192 candidate deals, resampled to 512
worlds), every seat of every play-out is played by heuristic-v1, and a bid is valued by the
match-win estimate fitted on heuristic-v1's matches plus 0.003 per point the team scores in
the hand (per_point: 10 points weigh 3 percentage points of match-win chance); the best
mean is bid (confidence=0). Its budget of 30 s a decision is there not to bind, so that a
decision never depends on the machine. How each value was chosen: BENCHMARKS.md, "Search
bot" and "Bidding"."""
