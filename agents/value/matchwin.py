"""The match-win estimate: the probability that a team wins the match from the scores between
two hands.

A search bot scores a play-out by what it does to the match, not by tricks or by the hand's
points alone: 10 points are worth much more to a player at 31 than at 0, a contract that
takes a player to 41 wins only if the partner is above zero, and a team near the target
should not gamble what an opponent near the target has to. :class:`MatchWin` turns the
scores after a hand into the chance of winning the match from there, with a small network
fitted on finished matches of the bundled policy against itself (``train/matchwin.py``; the
weights and the rules they were fitted under are in ``agents/pretrained/matchwin.npz``).

The estimate is read from the next hand's bidding order: seats ``dealer + 1`` (who bids
first), ``dealer + 2``, ``dealer + 3`` and the dealer, and it is the chance that the team of
the first bidder wins. :func:`win_probability` gives it for any seat's team; a match that
is over is worth 1 to the winners and 0 to the others. Everything here is numpy and numba
(the search kernels call it), no torch.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from fourhundred_env._jit import helper, kernel
from fourhundred_env.errors import FourHundredError
from fourhundred_env.rules import PRESETS, Rules

DEFAULT_PATH = Path(__file__).parents[1] / "pretrained" / "matchwin.npz"
NUM_FEATURES = 17
_SCORE_LOW, _SCORE_HIGH, _SCORE_SCALE = -60.0, 120.0, 40.0
GAME_RULES = tuple(
    name
    for name in Rules.__dataclass_fields__
    if name not in ("move_time_limit_s", "move_hard_limit_s")
)
"""The fields of Rules that change the game (the time limits do not)."""


@helper
def write_features(scores: np.ndarray, target: int, dealer: int, out: np.ndarray) -> None:
    """`out` (NUM_FEATURES,) float32: the features of scores (4,) by absolute seat, the target in
    force and the dealer of the next hand, seats taken in bidding order from dealer + 1."""
    for j in range(4):
        s = np.float64(scores[(dealer + 1 + j) & 3])
        out[4 * j] = (min(max(s, _SCORE_LOW), _SCORE_HIGH)) / _SCORE_SCALE
        out[4 * j + 1] = 1.0 if s > 0 else 0.0
        out[4 * j + 2] = 1.0 if s >= target else 0.0
        out[4 * j + 3] = 1.0 if s >= target - 10 else 0.0
    out[16] = (target - 41) / 10.0


@helper
def first_team_wins(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
                    b2: np.ndarray, w3: np.ndarray, b3: float, h1: np.ndarray,
                    h2: np.ndarray) -> float:  # fmt: skip
    """P(the first bidder's team wins) from the features x: a ReLU MLP with a sigmoid output.
    h1, h2: scratch of the hidden widths. Each hidden unit sums its bias and then its inputs
    in order; the loops run over the units inside (the weights' rows are contiguous), so the
    compiler adds many units at once without changing any unit's sum."""
    _relu_layer(x, w1, b1, h1)
    _relu_layer(h1, w2, b2, h2)
    z = b3
    for i in range(h2.shape[0]):
        z += h2[i] * w3[i]
    return 1.0 / (1.0 + np.exp(-z))


@helper
def _relu_layer(x: np.ndarray, w: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """Write `max(b + x @ w, 0)` into `out`, each unit's sum in the inputs' order."""
    for k in range(out.shape[0]):
        out[k] = b[k]
    for i in range(x.shape[0]):
        xi = x[i]
        for k in range(out.shape[0]):
            out[k] += xi * w[i, k]
    for k in range(out.shape[0]):
        if not out[k] > 0:
            out[k] = 0.0


@kernel
def first_team_wins_many(x: np.ndarray, w1: np.ndarray, b1: np.ndarray, w2: np.ndarray,
                         b2: np.ndarray, w3: np.ndarray, b3: float, out: np.ndarray) -> None:  # fmt: skip
    """`out` (n,): `first_team_wins` of each row of x (n, NUM_FEATURES)."""
    h1 = np.empty(w1.shape[1], np.float32)
    h2 = np.empty(w2.shape[1], np.float32)
    for j in range(x.shape[0]):
        out[j] = first_team_wins(x[j], w1, b1, w2, b2, w3, b3, h1, h2)


CACHE_ENV = "FOURHUNDRED_CACHE"
"""The environment variable naming the folder estimates fitted here are cached in (default
``$XDG_CACHE_HOME/fourhundred``, else ``~/.cache/fourhundred``), under ``matchwin/``."""


class MatchWinMissingError(FourHundredError):
    """No match-win estimate fitted under the rules asked for is bundled or cached."""


def cache_dir() -> Path:
    """Where fitted estimates are cached (see CACHE_ENV): found there by every command."""
    root = os.environ.get(CACHE_ENV)
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME")
        root = (
            str(Path(xdg) / "fourhundred") if xdg else str(Path.home() / ".cache" / "fourhundred")
        )
    return Path(root) / "matchwin"


def rules_key(rules: Rules) -> str:
    """The short name of a rules profile in an estimate's file name: the preset's name when
    the rules play a preset's game, else ``rules-`` and 10 hex digits of the game's rules."""
    for name in PRESETS:
        if same_game(rules, Rules.preset(name)):
            return name
    text = json.dumps({k: getattr(rules, k) for k in GAME_RULES}, sort_keys=True, default=str)
    return "rules-" + hashlib.sha256(text.encode()).hexdigest()[:10]


def variant_name(base: str, rules: Rules) -> str:
    """The file name of the estimate `base` (``matchwin_h1.npz``) fitted under `rules`:
    ``matchwin_h1-pagat.npz``."""
    stem = Path(base).name.removesuffix(".npz")
    return f"{stem}-{rules_key(rules)}.npz"


def fitted_rules(path: Path) -> Rules:
    """The rules an estimate's weights file was fitted under."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return Rules.from_dict(json.loads(str(data["rules"])))
    except (OSError, ValueError, KeyError) as e:
        raise FourHundredError(
            f"match-win weights {str(path)!r} cannot be read ({str(e).splitlines()[0][:120]}): "
            "expected a file written by `fourhundred fit-matchwin`"
        ) from None


def find_matchwin(name: str, rules: Rules) -> Path:
    """The weights file of the estimate `name` (as matchwin_path takes it; '' the default)
    fitted under `rules`: the file itself when it was, else its variant for these rules
    (:func:`variant_name`) bundled in agents/pretrained or cached (:func:`cache_dir`); for
    the default, also the estimate fitted on heuristic-v1's play. MatchWinMissingError in one
    line, saying how to fit one, when there is none."""
    path = matchwin_path(name)
    bases = [path.name] if name else [DEFAULT_PATH.name, "matchwin_h1.npz"]
    candidates = [path] if path.is_file() else []
    for base in bases:
        candidates.append(DEFAULT_PATH.parent / base)
        candidates += [DEFAULT_PATH.parent / variant_name(base, rules),
                       cache_dir() / variant_name(base, rules)]  # fmt: skip
    for candidate in dict.fromkeys(candidates):
        if candidate.is_file() and same_game(fitted_rules(candidate), rules):
            return candidate
    if name and not path.is_file():
        raise FourHundredError(
            f"match-win weights {name!r} do not exist: expected a file, or the name of one "
            f"bundled in {DEFAULT_PATH.parent}"
        )
    preset = rules_key(rules)
    how = f"--rules {preset}" if preset in PRESETS else "with these rules (fit_estimate in Python)"
    raise MatchWinMissingError(
        f"no match-win estimate {bases[0]!r} fitted under the rules {preset} is bundled or "
        f"cached: fit one with `fourhundred fit-matchwin {how}` (about a minute on 2 cores; cached in "
        f"{cache_dir()}, where every command finds it), or name a file fitted under these "
        "rules (matchwin=FILE)"
    )


def matchwin_path(name: str) -> Path:
    """The weights file a setting names: '' the bundled default (fitted on selfplay.pt's
    play), an existing file, or the name of a file bundled in agents/pretrained
    (``matchwin_h1.npz``: fitted on heuristic-v1's play)."""
    path = Path(name) if name else DEFAULT_PATH
    if not path.is_file() and not path.is_absolute():
        path = DEFAULT_PATH.parent / path
    return path


class MatchWin:
    """The fitted estimate (see the module docstring): weights as float32 arrays that the
    search kernels read, and the rules they were fitted under."""

    def __init__(self, path: str | Path = DEFAULT_PATH, rules: Rules | None = None) -> None:
        path = Path(path)
        if not path.is_file():
            raise FourHundredError(f"match-win weights {str(path)!r} do not exist")
        with np.load(path, allow_pickle=False) as data:
            self.w1 = np.ascontiguousarray(data["w1"], np.float32)
            self.b1 = np.ascontiguousarray(data["b1"], np.float32)
            self.w2 = np.ascontiguousarray(data["w2"], np.float32)
            self.b2 = np.ascontiguousarray(data["b2"], np.float32)
            self.w3 = np.ascontiguousarray(data["w3"], np.float32)
            self.b3 = float(data["b3"])
            fitted = json.loads(str(data["rules"]))
        self.rules = Rules.from_dict(fitted)
        if rules is not None and not same_game(rules, self.rules):
            raise FourHundredError(
                f"match-win weights {str(path)!r} were fitted under other rules: "
                f"{rule_diff(self.rules, rules)} (fitted, wanted)"
            )

    @classmethod
    def for_rules(cls, rules: Rules, name: str = "") -> MatchWin:
        """The estimate `name` ('' the default) fitted under `rules` (see find_matchwin)."""
        return cls(find_matchwin(name, rules), rules=rules)

    @property
    def weights(self) -> tuple:
        """(w1, b1, w2, b2, w3, b3): what the kernels take."""
        return self.w1, self.b1, self.w2, self.b2, self.w3, self.b3

    def first_team(self, scores: np.ndarray, target: np.ndarray, dealer: np.ndarray) -> np.ndarray:
        """(n,) float64: P(team of seat dealer + 1 wins) from scores (n, 4), target (n,) and
        the next hand's dealer (n,)."""
        scores = np.asarray(scores).reshape(-1, 4)
        x = features(scores, target, dealer)
        out = np.empty(x.shape[0])
        first_team_wins_many(x, *self.weights, out)
        return out


@kernel
def _features_many(scores: np.ndarray, target: np.ndarray, dealer: np.ndarray,
                   out: np.ndarray) -> None:  # fmt: skip
    for j in range(scores.shape[0]):
        write_features(scores[j], np.int64(target[j]), np.int64(dealer[j]), out[j])


def features(scores: np.ndarray, target: np.ndarray, dealer: np.ndarray) -> np.ndarray:
    """(n, NUM_FEATURES) float32 features of scores (n, 4), target (n,) and dealer (n,)."""
    scores = np.ascontiguousarray(np.asarray(scores).reshape(-1, 4), np.int64)
    n = scores.shape[0]
    target = np.ascontiguousarray(np.broadcast_to(target, (n,)), np.int64)
    dealer = np.ascontiguousarray(np.broadcast_to(dealer, (n,)), np.int64)
    out = np.empty((n, NUM_FEATURES), np.float32)
    _features_many(scores, target, dealer, out)
    return out


def same_game(a: Rules, b: Rules) -> bool:
    """The two rules play the same game (they may differ in time limits)."""
    return all(getattr(a, k) == getattr(b, k) for k in GAME_RULES)


def rule_diff(a: Rules, b: Rules) -> dict:
    """{flag: (a's, b's)} for the game rules that differ."""
    return {k: (getattr(a, k), getattr(b, k)) for k in GAME_RULES if getattr(a, k) != getattr(b, k)}
