"""The fitted-Q bidding run (`BidQTrainer`): iterations of positions, values and fit, each
saved in the run folder as it ends, which is what ``--resume`` continues from.

Each iteration's scalars go to TensorBoard in the run folder, the step being the positions
fitted so far (``charts/positions``): ``losses/fit_loss`` (the fit's squared error, in value
units squared), ``charts/mean_best_minus_own`` and ``charts/own_bid_value`` (value units:
percentage points of match-win chance with value match_value, else points), the seconds of
each part, and every `eval_every` iterations ``eval/bid_*`` (the bidding benchmark's hands,
train/bid_report.py `BidEval`) and, with `eval_matches`, ``eval/win_rate``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from fourhundred_env.cards import NUM_CARDS
from fourhundred_env.configs import save_yaml
from fourhundred_env.engine import Engine
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules
from fourhundred_env.view import seat_view
from fourhundred_train.bid_q.config import BID_HEADS, BidQConfig
from fourhundred_train.bid_q.inputs import bid_inputs, observations
from fourhundred_train.bid_q.positions import NUM_BIDS, QBidder, record_positions
from fourhundred_train.bid_q.targets import fit, relative_targets
from fourhundred_train.bid_q.values import play_out_values, world_values


class BidQTrainer:
    """Runs a BidQConfig in `run_dir` (see train/bid_q/__init__.py)."""

    def __init__(self, config: BidQConfig, run_dir: Path, resume: bool = False,
                 progress: bool = True) -> None:  # fmt: skip
        import torch

        from fourhundred_agents.neural.device import device_used, torch_device
        from fourhundred_agents.neural.network import NetConfig, PolicyValueNet

        self.config, self.run_dir, self.progress = config, Path(run_dir), progress
        # the fit's device: one this machine lacks is refused now; recorded in TensorBoard
        self.device_used = device_used(config.device, torch_device(config.device))
        self.rules: Rules = Rules.preset(config.rules)
        self.engine = Engine(self.rules)
        self.blank = () if config.match_features else _match_fields()
        torch.set_num_threads(config.torch_threads)
        self.features = None  # checked before any work: one line if it does not answer
        if config.features:
            from fourhundred_agents.neural.extra_features import load_features

            self.features = load_features(config.features, self.rules)
        extra = self.features.size if self.features is not None else 0
        torch.manual_seed(config.seed)
        if config.net == "bid_features":
            from fourhundred_agents.neural.bid_net import BidNet, BidNetConfig

            self.net = BidNet(
                BidNetConfig(
                    hidden=config.hidden, head=config.head, head_version=BID_HEADS[config.bid_head],
                    extra_inputs=extra,
                )
            )  # fmt: skip
        else:
            self.net = PolicyValueNet(NetConfig(hidden=config.hidden, layers=config.layers,
                                                extra_inputs=extra))  # fmt: skip
            with torch.no_grad():  # not fitted: the value head says 0 rather than noise
                self.net.value_head.weight.zero_()
                self.net.value_head.bias.zero_()
        self.net.extra_features = self.features
        self.play = None  # heuristic-v1, compiled; another card player is made now
        if config.play != "heuristic-v1":
            from fourhundred_agents import make_agent

            self.play = make_agent(config.play, self.rules, config.seed)
            self.play.reset(config.num_tables)
        self.reward = None  # checked before any work: one line if it does not answer
        if config.reward:
            from fourhundred_train.bid_q.hooks import load_reward

            self.reward = (config.reward, load_reward(config.reward))
        self.model = None
        if config.value == "match_value":
            from fourhundred_agents.value.matchwin import MatchWin

            self.model = MatchWin.for_rules(self.rules, config.matchwin)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            save_yaml(config.to_dict(), self.run_dir / "config.yaml")
        self.bid_eval = None
        if config.eval_every and config.eval_deals:
            from fourhundred_train.bid_report import BidEval

            self.bid_eval = BidEval(config.play, config.eval_deals, config.seed, self.rules)
            if self.bid_eval.off is not None:
                print(f"eval/bid_* off: {self.bid_eval.off}", flush=True)

    def resumable(self) -> bool:
        """Whether `--resume` can go on with this run: an iteration's values or weights are
        saved (iter_K.npz, iter_K.pt)."""
        return any(self.run_dir.glob("iter_*.npz")) or any(self.run_dir.glob("iter_*.pt"))

    def _done(self) -> int:
        k = 0
        while (self.run_dir / f"iter_{k}.pt").is_file():
            k += 1
        return k

    def inputs(self, saved: dict) -> tuple:
        """The network's inputs for an iteration's saved positions: their observations, or
        (net bid_features) the features worked out from their saved views; then, with
        `features`, your features of the saved views (in this process: your function need
        not be importable by the workers)."""
        if self.config.net == "bid_features":
            out = bid_inputs(self.rules, saved["views"], self.config.workers, self.progress)
        else:
            out = (saved["obs"],)
        if self.features is not None:
            out = (*out, extra_inputs(self.features, saved["views"]))
        return out

    def saved_keys(self) -> tuple[str, ...]:
        """What an iteration saves of its positions: their views (net bid_features, or your
        features worked out from them) and/or their observations (net mlp)."""
        keys = ("views",) if self.config.net == "bid_features" else ("obs",)
        return keys + (("views",) if self.features is not None and keys == ("obs",) else ())

    def train(self) -> list[dict]:
        """Runs the iterations not yet saved (resuming after the last iter_K.pt), saving
        each one's values, weights and policy.pt as it ends; returns a row per iteration
        run (also printed as a JSON line)."""
        from torch.utils.tensorboard import SummaryWriter

        c = self.config
        start = self._done()
        # the step: positions fitted so far; a resumed run drops what an unfinished
        # iteration logged
        writer = SummaryWriter(str(self.run_dir),
                               purge_step=start * c.positions + 1 if start else None)  # fmt: skip
        # at every start (a resume may fit on another device), at the positions fitted so far
        writer.add_text("device", self.device_used, start * c.positions)
        try:
            return self._iterations(writer, start)
        finally:  # a run stopped by an error too: its events are written
            writer.close()

    def _iterations(self, writer, start: int) -> list[dict]:
        """The iterations from `start` on, their scalars logged by `writer` (see `train`)."""
        import torch

        c = self.config
        history = []
        inputs_all, q_all = [], []
        first_kept = max(0, start - c.window + 1) if c.window else 0
        for k in range(first_kept, start):
            with np.load(self.run_dir / f"iter_{k}.npz") as d:
                inputs_all.append(self.inputs(d))
                q_all.append(d["q"])
        if start:
            weights = torch.load(self.run_dir / f"iter_{start - 1}.pt", map_location="cpu")
            self.net.load_state_dict(weights["w"])
        for k in range(start, c.iterations):
            t0 = time.perf_counter()
            seed = c.seed * 1000 + k
            path = self.run_dir / f"iter_{k}.npz"
            own_value = float("nan")  # the bid made's value, where computed in this run
            if path.is_file():  # saved before the run stopped in the fit: not computed again
                saved, q = self._saved_values(path)
                t1 = t2 = time.perf_counter()
            else:
                bidder = QBidder(self.engine, self.net if k else None, self.blank)
                positions = record_positions(self.engine, bidder, c.positions, seed,
                                             c.num_tables, c.max_hands, 0, self.play)  # fmt: skip
                t1 = time.perf_counter()
                if c.worlds:
                    q = world_values(self.engine, positions, c, progress=self.progress)
                else:
                    q = play_out_values(self.engine, positions, bidder, c.value, self.model,
                                        per_point=c.per_point, reward=self.reward,
                                        play=self.play)  # fmt: skip
                own = bidder(positions, np.arange(positions.batch_size)) - NUM_CARDS
                own_value = float(np.mean(q[np.arange(len(q)), own]))
                t2 = time.perf_counter()
                saved = {}
                if "views" in self.saved_keys():
                    saved["views"] = seat_view(self.engine, positions).records
                if "obs" in self.saved_keys():
                    saved["obs"] = observations(self.engine, positions, self.blank)
                q = relative_targets(q, own, c.clip)
                part = path.with_suffix(".part.npz")
                np.savez(part, q=q, **saved)
                part.replace(path)  # a crash mid-write leaves no damaged iter_k.npz
            gap = float(np.mean(q.max(1)))  # q is relative to the bid made, its floor below 0
            inputs_all.append(self.inputs(saved))
            q_all.append(q)
            if c.window:
                del inputs_all[: -c.window], q_all[: -c.window]
            joined = tuple(np.concatenate(parts) for parts in zip(*inputs_all, strict=True))
            loss = fit(self.net, joined, np.concatenate(q_all), c, seed, self.progress)
            t3 = time.perf_counter()
            self.save_policy()
            row = {"iteration": k, "positions": int(c.positions), "loss": loss,
                   "matches_s": t1 - t0, "playouts_s": t2 - t1, "fit_s": t3 - t2,
                   "mean_best_minus_own": gap}  # fmt: skip
            due = c.eval_every and ((k + 1) % c.eval_every == 0 or k + 1 == c.iterations)
            scalars = self.evaluate(k) if due else {}
            self.log(writer, k, row, own_value, scalars)
            row.update(scalars)
            # the iteration is done (what --resume goes on from) once its scalars are logged
            torch.save({"w": self.net.state_dict()}, self.run_dir / f"iter_{k}.pt")
            history.append(row)
            print(json.dumps(row), flush=True)
        return history

    def evaluate(self, k: int) -> dict[str, float]:
        """The ``eval/*`` scalars of the bidder after iteration k (a copy of policy.pt in
        eval/iter_K/): the bidding benchmark's hands and, with eval_matches, duplicate
        matches of its bids against heuristic-v1's (heuristic-v1's cards on both sides)."""
        from fourhundred_train.evaluate import evaluate_pair

        c = self.config
        snap = self.run_dir / "eval" / f"iter_{k}" / "policy.pt"
        snap.parent.mkdir(parents=True, exist_ok=True)
        snap.write_bytes((self.run_dir / "policy.pt").read_bytes())
        bidder = f"neural-bid:{snap}" + (f",features={c.features}" if c.features else "")
        out: dict[str, float] = {}
        if c.eval_matches:
            # the same card player on both sides: the bids alone differ
            base = (
                "heuristic-v1" if self.play is None else f"compose:bid=heuristic-v1,play={c.play}"
            )
            out.update(evaluate_pair(bidder, base, c.eval_matches,
                                     seed=c.seed * 1_000_003 + k, rules=self.rules,
                                     out_dir=snap.parent, workers=1))  # fmt: skip
        if self.bid_eval is not None:
            out.update(self.bid_eval(bidder))
        return out

    def log(self, writer, k: int, row: dict, own_value: float, scalars: dict) -> None:
        """Iteration k's scalars to TensorBoard at step positions fitted so far."""
        step = (k + 1) * self.config.positions
        values = {"charts/positions": float(step), "losses/fit_loss": row["loss"],
                  "charts/mean_best_minus_own": row["mean_best_minus_own"],
                  "charts/own_bid_value": own_value, "charts/matches_s": row["matches_s"],
                  "charts/playouts_s": row["playouts_s"], "charts/fit_s": row["fit_s"],
                  **scalars}  # fmt: skip
        for tag, value in values.items():
            if np.isfinite(value):
                writer.add_scalar(tag, value, step)
        writer.flush()

    def _saved_values(self, path: Path) -> tuple[dict, np.ndarray]:
        """The positions' inputs (observations or views) and relative values an iteration
        saved in `path` before its fit; a file of another network or size is refused."""
        keys = self.saved_keys()
        try:
            with np.load(path) as d:
                saved, q = {key: d[key] for key in keys}, d["q"]
        except (OSError, ValueError, KeyError) as e:
            raise ConfigError(
                f"{path}: saved values unreadable or without {' and '.join(map(repr, keys))} "
                f"({e}): expected the iteration's positions for net={self.config.net} (delete "
                "it to compute them again)"
            ) from None
        if q.shape != (self.config.positions, NUM_BIDS):
            raise ConfigError(
                f"{path}: values of shape {q.shape}: expected ({self.config.positions}, "
                f"{NUM_BIDS}) for positions={self.config.positions} (delete it to compute "
                "them again)"
            )
        return saved, q

    def save_policy(self) -> None:
        """Writes the network to `run_dir`/policy.pt, the run's `play` as its card player."""
        from fourhundred_train.checkpoint import save_policy

        extra = {"play_policy": self.config.play, "bid_q": self.config.to_dict()}
        if self.blank:
            extra["blank_fields"] = list(self.blank)
        if self.features is not None:  # its name and width only: a checkpoint names no code
            extra["features"] = self.features.record()
        save_policy(self.run_dir / "policy.pt", self.net, self.rules, extra)


def extra_inputs(features, views: np.ndarray, chunk: int = 20000) -> np.ndarray:
    """(n, F) float32: your `features` (an extra_features.FeatureHook) of n saved seat-view
    records, `chunk` tables at a time (a table's row does not depend on its chunk)."""
    from fourhundred_env.view import SeatView

    parts = [features(SeatView.from_records(views[lo : lo + chunk]))
             for lo in range(0, len(views), chunk)]  # fmt: skip
    return np.concatenate(parts) if parts else np.zeros((0, features.size), np.float32)


def _match_fields() -> tuple:
    from fourhundred_agents.neural.agent import MATCH_FIELDS

    return tuple(MATCH_FIELDS)
