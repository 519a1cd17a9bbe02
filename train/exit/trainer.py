"""Expert iteration's run (`ExitTrainer`): the iterations, their files in the run folder, the
resume, the evaluations and the numbers logged.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from fourhundred_env.configs import save_yaml
from fourhundred_env.engine import Engine, Phase
from fourhundred_env.errors import ConfigError
from fourhundred_env.rules import Rules
from fourhundred_train.exit.config import ExitConfig
from fourhundred_train.exit.labels import label_positions, record_positions
from fourhundred_train.exit.targets import (
    BID_GROUP,
    advantages,
    fit,
    fit_temperature,
    fit_temperatures,
    log_policy,
    search_gain,
    split,
    symmetric_log_policy,
    target_worth,
    targets,
    temperature_groups,
)

INIT = "init.pt"
"""With a `bidder`, the network iteration 0 plays and searches over: `init` and the bidder in
one checkpoint, written as the run starts."""
DISTILLED = "distilled.pt"
"""With `distill`, the start fitted to its own averaged policy: what iteration 0 searches over."""


# -- the run --------------------------------------------------------------------------------
class ExitTrainer:
    """Runs an ExitConfig in `run_dir` (see the module docstring)."""

    def __init__(self, config: ExitConfig, run_dir: Path, resume: bool = False) -> None:
        import torch

        from fourhundred_agents.neural.device import device_used, torch_device

        self.config, self.run_dir = config, Path(run_dir)
        # the fit's device: one this machine lacks is refused now; recorded in TensorBoard
        self.device_used = device_used(config.device, torch_device(config.device))
        self.rules = Rules.preset(config.rules)
        self.engine = Engine(self.rules)
        torch.set_num_threads(config.torch_threads)
        self.net = self._initial()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        if not resume:
            save_yaml(config.to_dict(), self.run_dir / "config.yaml")
        if config.bidder and not (self.run_dir / INIT).is_file():
            self._write(self.run_dir / INIT, {"init": config.init, "bidder": config.bidder})
        self.metrics = self.run_dir / "metrics.jsonl"
        self._kept: dict[int, bool] = {}  # iteration -> its network passed the gate

    def _initial(self):
        """The network the run starts from: `init`, joined with `bidder`'s bidding network
        when one is given; refused in one line if it cannot play or bid as configured."""
        from fourhundred_agents.neural.bid_net import BidNet
        from fourhundred_agents.neural.bid_play import BidPlayNet
        from fourhundred_agents.neural.checkpoint import (
            CheckpointError,
            load_policy,
            require_card_player,
        )

        c = self.config
        net, _, _ = load_policy(c.init, rules=self.rules)
        card = require_card_player(net, c.init)
        if c.bidder:
            bid, _, _ = load_policy(c.bidder, rules=self.rules)
            if not isinstance(bid, BidNet):
                raise CheckpointError(
                    f"bidder={c.bidder!r} is not a bidding network: expected a checkpoint of "
                    "a bidding run with net: bid_features, such as agents/pretrained/bidder.pt"
                )
            return BidPlayNet.join(bid, card)
        if card is not net and c.bid_share:
            raise ConfigError(
                f"bid_share={c.bid_share} with init={c.init!r}, which bids with a bidding "
                "network: expected bid_share 0 (the iterations fit the card play only)"
            )
        return net

    @property
    def card_net(self):
        """The network the fit trains: the card network of one that bids with another."""
        from fourhundred_agents.neural.checkpoint import require_card_player

        return require_card_player(self.net, self.config.init)

    def resumable(self) -> bool:
        """Whether `--resume` goes on from something this run did: an iteration finished, its
        labels' chunks or the distilled start written."""
        return (
            self.done() > 0
            or any(self.run_dir.glob("labels_*/chunk_*.npz"))
            or (self.run_dir / DISTILLED).is_file()
        )

    def done(self) -> int:
        """Iterations finished: their iter_K.pt written and their row in metrics.jsonl (an
        iteration stopped in its evaluation is done again, with the same weights)."""
        rows = self._rows()
        k = 0
        while (
            (self.run_dir / f"iter_{k}.pt").is_file()
            and k < len(rows)
            and (rows[k]["iteration"] == k)
        ):
            k += 1
        return k

    def _rows(self) -> list[dict[str, Any]]:
        if not self.metrics.is_file():
            return []
        return [json.loads(line) for line in self.metrics.read_text().splitlines() if line]

    def teacher_path(self, k: int) -> str:
        """The checkpoint iteration k searches over, N_k: the newest network kept (every
        one without a `gate`; with one, those that passed it), or the run's start."""
        for j in range(k - 1, -1, -1):
            if self._kept.get(j, True):
                return str(self.run_dir / f"iter_{j}.pt")
        if self.config.distill:
            return str(self.run_dir / DISTILLED)
        return str(self.run_dir / INIT) if self.config.bidder else self.config.init

    def history(self) -> list[dict[str, Any]]:
        """The rows of metrics.jsonl of the iterations finished (iter_K.pt written)."""
        done = self.done()
        return [r for r in self._rows() if r["iteration"] < done]

    def train(self) -> list[dict[str, Any]]:
        """Runs the iterations not finished (a stopped run resumes after its last
        iter_K.pt): each records, labels, fits, saves and evaluates, its row appended to
        metrics.jsonl and TensorBoard; returns the rows of every finished iteration."""
        from torch.utils.tensorboard import SummaryWriter

        start = self.done()
        history = self.history()
        # rows of iterations a stopped run did not finish are played again: drop them
        self.metrics.write_text("".join(json.dumps(r) + "\n" for r in history))
        self._kept = {r["iteration"]: r.get("kept", True) for r in history}
        writer = SummaryWriter(str(self.run_dir), purge_step=start + 1 if start else None)
        writer.add_text("device", self.device_used, start)  # a resume may fit elsewhere
        try:
            return self._iterations(writer, start, history)
        finally:  # a run stopped by an error too: its events are written
            writer.close()

    def _iterations(
        self, writer, start: int, history: list[dict[str, Any]]
    ) -> list[dict[str, Any]]:
        """The iterations from `start` on, after the finished ones' `history` (see `train`)."""
        import torch

        from fourhundred_agents.neural.checkpoint import load_policy

        c = self.config
        distilled = self.run_dir / DISTILLED
        if c.distill and not distilled.is_file():
            numbers = self._distil()
            for key, value in numbers.items():
                writer.add_scalar(f"exit/{key}", value, 0)
            if c.progress:
                print(_distil_summary(numbers), flush=True)
        if c.distill:  # what the first iteration searches over and fits
            self.net, _, meta = load_policy(str(distilled), rules=self.rules)
            distil_s = meta["extra"].get("distil", {}).get("distil_s", 0.0)
        else:
            distil_s = 0.0
        elapsed = history[-1]["minutes"] * 60 if history else distil_s
        decisions = sum(int(r["positions"]) for r in history)  # learner decisions labelled
        kept: list[dict[str, np.ndarray]] = []
        for k in range(max(0, start - c.window + 1), start):  # the replay window so far
            teacher, _, _ = load_policy(self.teacher_path(k), rules=self.rules)
            kept.append(self._labelled(k, teacher)[0])
        if start:
            self.net, _, _ = load_policy(self.teacher_path(start), rules=self.rules)
        for k in range(start, c.iterations):
            t0 = time.perf_counter()
            fitted, held, row = self._labelled(k, self.net)
            t2 = time.perf_counter()
            kept.append(fitted)
            del kept[: -c.window]
            joined = {key: np.concatenate([d[key] for d in kept]) for key in fitted}
            seed = c.seed * 7919 + k
            torch.manual_seed(seed)
            terms = (joined["adv"], joined["t"], joined["prior"]) if "adv" in joined else None
            row.update(fit(self.card_net, joined["obs"], joined["legal"], joined["pi"],
                           joined["v"], c, seed=seed, desc=f"iteration {k}: fit",
                           value_terms=terms))  # fmt: skip
            t3 = time.perf_counter()
            after = log_policy(self.card_net, held["obs"], held["legal"]).argmax(1)
            row["agreement_after"] = search_gain(held["values"], after)["agreement"]
            row.update(fit_s=t3 - t2, positions_fitted=len(joined["obs"]))
            self._save(k)
            t4 = time.perf_counter()
            row.update(self._evaluate(k))
            row["eval_s"] = time.perf_counter() - t4
            row["kept"] = self._kept[k] = self._passes(row)
            if not row["kept"]:  # the next iteration searches over and fits N_k again
                self.net, _, _ = load_policy(self.teacher_path(k + 1), rules=self.rules)
            self._write(self.run_dir / "policy.pt", self._extra(k))
            elapsed += time.perf_counter() - t0
            row["minutes"] = elapsed / 60
            for key, value in row.items():
                if key != "iteration" and isinstance(value, (int, float)):
                    writer.add_scalar(f"exit/{key}", value, k + 1)
            decisions += row["positions"]
            for tag, value in _family(row, decisions).items():  # at the same step, k + 1
                writer.add_scalar(tag, value, k + 1)
            writer.flush()
            with self.metrics.open("a") as f:
                f.write(json.dumps(row) + "\n")
            history.append(row)
            if c.progress:
                print(_summary(row), flush=True)
        return history

    def _distil(self) -> dict[str, float]:
        """Fit the start's card network to its own policy averaged over the six renamings at
        `distill` positions of its own matches (the `holdout` share held out to judge it),
        write distilled.pt and return the numbers: how often the network's choice is the
        average's and the KL divergence of the average from it, held out, before and after."""
        import torch

        from fourhundred_env.observation import encode_observation
        from fourhundred_env.view import seat_view

        c = self.config
        t0 = time.perf_counter()
        seed = c.seed * 7919 - 1  # iteration k's seed is c.seed * 7919 + k
        recorded = dataclasses.replace(c, positions=c.distill)
        positions = record_positions(self.engine, self.net, recorded, seed, "distil: play")
        view = seat_view(self.engine, positions)
        obs, legal = encode_observation(view, dtype=np.int8), view.legal_mask
        card = self.card_net
        average = symmetric_log_policy(card, obs, legal)
        fitted, held = split(len(obs), c.holdout, seed)
        before = log_policy(card, obs[held], legal[held])
        torch.manual_seed(seed)
        fitting = dataclasses.replace(c, objective="cross_entropy", symmetry="suits",
                                      epochs=c.distill_epochs, value_coef=0.0)  # fmt: skip
        fit(card, obs[fitted], legal[fitted], np.exp(average[fitted]).astype(np.float32),
            np.zeros(len(fitted), np.float32), fitting, seed=seed, desc="distil: fit")  # fmt: skip
        after = log_policy(card, obs[held], legal[held])
        numbers = {"distil_positions": len(obs), "distil_s": time.perf_counter() - t0}
        best = average[held].argmax(1)
        for tag, logp in (("before", before), ("after", after)):
            numbers[f"distil_agreement_{tag}"] = float((logp.argmax(1) == best).mean())
            numbers[f"distil_kl_{tag}"] = _kl(average[held], logp)
        self._write(self.run_dir / DISTILLED, {"exit": c.to_dict(), "iteration": -1,
                                               "distil": numbers})  # fmt: skip
        return numbers

    def _labelled(self, k: int, teacher) -> tuple[dict, dict, dict[str, Any]]:
        """Iteration k's positions (recorded from `teacher`'s matches, N_k) and their
        values (read from the run folder where saved): the fitted part with its targets,
        the held-out part with its values, and the iteration's numbers so far."""
        from fourhundred_agents.neural.checkpoint import require_card_player

        c = self.config
        seed = c.seed * 7919 + k
        t0 = time.perf_counter()
        positions = record_positions(self.engine, teacher, c, seed, f"iteration {k}: play")
        t1 = time.perf_counter()
        data, valued = label_positions(self.engine, positions, self.teacher_path(k), c, k,
                                       self.run_dir / f"labels_{k}")  # fmt: skip
        t2 = time.perf_counter()
        card = require_card_player(teacher, self.teacher_path(k))
        log_prior = log_policy(card, data["obs"], data["legal"])  # what the network plays
        if c.symmetry == "suits":  # the targets' prior: its policy over the six renamings
            target_prior = symmetric_log_policy(card, data["obs"], data["legal"])
        else:
            target_prior = log_prior
        fitted, held = split(len(data["obs"]), c.holdout, seed)
        prior = target_prior if c.prior else None
        half, by_group = self._temperature(data, fitted, held, prior)
        # the mean of both halves, which the targets use, is sqrt 2 times less noisy
        temperature = half / math.sqrt(2)
        worth = target_worth(data["values"][:, held], _rows(half, held), _rows(prior, held))
        pi, v = targets(data["values"][:, fitted], _rows(temperature, fitted),
                        _rows(prior, fitted))  # fmt: skip
        gain = search_gain(data["values"][:, held], log_prior[held].argmax(1))
        row: dict[str, Any] = {
            "iteration": k, "positions": int(positions.batch_size),
            "bid_positions": int((positions.phase == Phase.BID).sum()),
            "play_s": t1 - t0, "label_s": t2 - t1,
            "labels_per_s": valued / (t2 - t1) if valued else float("nan"),
            "temperature": float(np.exp(np.log(temperature).mean())),
            "target_gain_pp": 100 * (worth - gain["own_value"]),
            "search_gain_pp": gain["gain_pp"], "agreement_before": gain["agreement"],
        }  # fmt: skip
        for group, t in by_group.items():
            name = "bids" if group == BID_GROUP else f"trick_{group + 1}"
            row[f"temperature_{name}"] = t / math.sqrt(2)
        part = {"obs": data["obs"][fitted], "legal": data["legal"][fitted], "pi": pi, "v": v}
        if c.objective == "value":
            prior_rows = target_prior[fitted] if c.prior else np.zeros_like(pi, np.float32)
            part.update(adv=advantages(data["values"][:, fitted]),
                        t=temperature[fitted].astype(np.float32),
                        prior=prior_rows.astype(np.float32))  # fmt: skip
        out = {"obs": data["obs"][held], "legal": data["legal"][held],
               "values": data["values"][:, held]}  # fmt: skip
        return part, out, row

    def _temperature(self, data: dict[str, np.ndarray], fitted: np.ndarray, held: np.ndarray,
                     prior: np.ndarray | None) -> tuple[np.ndarray, dict[int, float]]:  # fmt: skip
        """(n,) temperature of one half's values at each position, and the fitted ones by
        group (empty for a fixed `temperature` or temperature_by all)."""
        c, n = self.config, len(data["obs"])
        if c.temperature is not None:
            return np.full(n, c.temperature * math.sqrt(2)), {}
        if c.temperature_by == "all":
            return np.full(n, fit_temperature(data["values"][:, held], _rows(prior, held))), {}
        groups = temperature_groups(data["obs"])
        by_group = fit_temperatures(data["values"][:, fitted], groups[fitted],
                                    _rows(prior, fitted))  # fmt: skip
        fallback = fit_temperature(data["values"][:, fitted], _rows(prior, fitted))
        return np.array([by_group.get(int(g), fallback) for g in groups]), by_group

    def _passes(self, row: dict[str, Any]) -> bool:
        """Iteration's network kept: no `gate`, or it won at least `gate` of the evaluation
        against the network it was fitted from."""
        gate = self.config.gate
        return gate is None or row["vs_previous_win_rate"] >= gate

    def _extra(self, k: int) -> dict[str, Any]:
        """What policy.pt records of the run: the config and the iteration it is (-1: the
        run's start, no iteration kept)."""
        kept = [j for j in range(k + 1) if self._kept.get(j, True)]
        return {"exit": self.config.to_dict(), "iteration": kept[-1] if kept else -1}

    def _save(self, k: int) -> None:
        extra = {"exit": self.config.to_dict(), "iteration": k}
        self._write(self.run_dir / f"iter_{k}.pt", extra)

    def _write(self, path: Path, extra: dict[str, Any]) -> None:
        from fourhundred_train.checkpoint import save_policy

        save_policy(path, self.net, self.rules, extra)

    def _evaluate(self, k: int) -> dict[str, float]:
        """Duplicate matches of N_{k+1} against the fixed opponent and against N_k."""
        from fourhundred_train.evaluate import evaluate_pair

        c = self.config
        if not c.eval_matches:
            return {}
        out: dict[str, float] = {}
        spec = f"neural:{self.run_dir / f'iter_{k}.pt'}"
        for tag, opponent in (("vs_opponent", c.eval_opponent),
                              ("vs_previous", f"neural:{self.teacher_path(k)}")):  # fmt: skip
            res = evaluate_pair(spec, opponent, matches=c.eval_matches,
                                seed=c.seed * 1_000_003 + k, rules=self.rules,
                                out_dir=self.run_dir / "eval" / f"iter_{k}_{tag}",
                                workers=max(1, min(2, c.workers)))  # fmt: skip
            for name in ("win_rate", "win_rate_low", "win_rate_high"):
                out[f"{tag}_{name}"] = res[f"eval/{name}"]
        return out


def _family(row: dict[str, Any], decisions: int) -> dict[str, float]:
    """An iteration's scalars under the tags every trainer logs, beside its ``exit/*``:
    ``charts/decisions`` (the learner's decisions recorded and labelled so far: what
    `fourhundred plot` puts on the x axis), ``eval/win_rate`` (with its Wilson bounds,
    against the evaluation opponent) and the fit's ``losses/fit_policy_loss`` and
    ``losses/fit_value_loss``."""
    out = {"charts/decisions": float(decisions)}
    for name in ("win_rate", "win_rate_low", "win_rate_high"):
        if f"vs_opponent_{name}" in row:
            out[f"eval/{name}"] = float(row[f"vs_opponent_{name}"])
    for name in ("policy_loss", "value_loss"):
        if name in row:
            out[f"losses/fit_{name}"] = float(row[name])
    return out


def _rows(x: np.ndarray | None, rows: np.ndarray) -> np.ndarray | None:
    return None if x is None else x[rows]


def _kl(p_log: np.ndarray, q_log: np.ndarray) -> float:
    """Mean KL(p || q) over rows of log-probabilities (-inf where illegal)."""
    legal = np.isfinite(p_log)
    p, q = np.where(legal, p_log, 0.0), np.where(legal, q_log, 0.0)
    return float((legal * np.exp(p) * (p - q)).sum(axis=1).mean())


def _distil_summary(numbers: dict[str, float]) -> str:
    """One line on the distillation."""
    return (f"distil: {numbers['distil_positions']:,} positions, "
            f"{numbers['distil_s'] / 60:.1f} min, held out: agrees with the average "
            f"{numbers['distil_agreement_before']:.0%} -> {numbers['distil_agreement_after']:.0%}, "
            f"KL {numbers['distil_kl_before']:.3f} -> {numbers['distil_kl_after']:.3f}")  # fmt: skip


def _summary(row: dict[str, Any]) -> str:
    parts = [f"iteration {row['iteration']}: {row['minutes']:.1f} min"]
    if "vs_opponent_win_rate" in row:
        parts.append(
            f"vs opponent {100 * row['vs_opponent_win_rate']:.1f}% "
            f"[{100 * row['vs_opponent_win_rate_low']:.1f}, {100 * row['vs_opponent_win_rate_high']:.1f}]"
        )
        parts.append(f"vs previous {100 * row['vs_previous_win_rate']:.1f}%")
        if not row.get("kept", True):
            parts.append("not kept (below the gate)")
    parts.append(f"search gain {row['search_gain_pp']:.2f} pp")
    parts.append(
        f"agreement {100 * row['agreement_before']:.0f}% -> {100 * row['agreement_after']:.0f}%"
    )
    parts.append(f"{row['labels_per_s']:.0f} labels/s")
    return ", ".join(parts)


def _rate(row: dict[str, Any], tag: str) -> str:
    if f"{tag}_win_rate" not in row:
        return "-"
    rate, low, high = (100 * row[f"{tag}_win_rate{x}"] for x in ("", "_low", "_high"))
    return f"{rate:.1f}% [{low:.0f}, {high:.0f}]"


def results_table(history: list[dict[str, Any]]) -> str:
    """The run's iterations as a text table."""
    head = ("iter", "minutes", "labels/s", "gain pp", "agree", "vs opponent", "vs previous", "kept")
    rows = [head]
    for r in history:
        rows.append((str(r["iteration"]), f"{r['minutes']:.1f}", f"{r['labels_per_s']:.0f}",
                     f"{r['search_gain_pp']:.2f}",
                     f"{100 * r['agreement_before']:.0f}->{100 * r['agreement_after']:.0f}%",
                     _rate(r, "vs_opponent"), _rate(r, "vs_previous"),
                     "yes" if r.get("kept", True) else "no"))  # fmt: skip
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    return "\n".join(
        "  ".join(x.rjust(w) for x, w in zip(row, widths, strict=True)) for row in rows
    )
