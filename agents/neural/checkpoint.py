"""Reading policy checkpoints safely: weights plus everything needed to refuse a mismatched one.

A checkpoint is a dict of tensors and plain values written by ``torch.save`` (by the trainer,
:mod:`fourhundred_train.checkpoint`) and read here with ``torch.load(..., weights_only=True)``, which
never executes pickled code. It records the network config, the rules, ``OBS_VERSION`` and
the package version. Every file that cannot be played is refused in one line naming the file
and the problem, in our words (never torch's): missing, empty, larger than
``MAX_CHECKPOINT_BYTES``, truncated, damaged (a member whose CRC-32 is wrong: torch checks
none) or not a torch file, holding more than tensors and plain values, missing keys, a network
config with fields this version does not know or sizes above the bounds of
agents/neural/network.py (``MAX_HIDDEN``, ``MAX_LAYERS``, ``MAX_PARAMETERS``), an input size
other than the encoder's ``OBS_SIZE``, another observation layout, weights that do not fit
the config, of another dtype than ``WEIGHT_DTYPES`` or not finite, or rules of another game
(the conduct flags, time limits and ``auto_claim``, are not compared:
``Rules.game_differences``). Everything is checked before the network is built: the archive
before torch reads it, the config's sizes before anything is allocated, the weights' shapes
against a network built on torch's ``meta`` device (no memory).
It lives beside the agent that plays it. A network config that records ``bid_features``
is a bidding network (agents/neural/bid_net.py, another feature layout refused too); one of the
two configs ``bid`` and ``play`` is a network that bids with the one and plays the cards with
the other (agents/neural/bid_play.py), each checked as above; everything else is a
PolicyValueNet. A network that reads its owner's bid features (``extra_inputs`` in its config)
records only their function's name and width, never code: it is loaded only with the function
named again by whoever plays it, of that name and width (agents/neural/extra_features.py).
"""

from __future__ import annotations

import dataclasses
import io
import pickle
import zipfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from fourhundred_agents.neural.extra_features import FeatureHook, recorded_problem
from fourhundred_agents.neural.files import (
    MAX_MEMBERS,
    archive_problem,
    declared_members,
    index_problem,
    model_file_kind,
    pickle_problem,
    plain_problem,
    resolve_checkpoint,
)
from fourhundred_agents.neural.files import (
    PRETRAINED as PRETRAINED,
)  # re-exported: tests and callers
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet
from fourhundred_env.errors import FourHundredError
from fourhundred_env.observation import OBS_SIZE, require_obs_version
from fourhundred_env.rules import Rules

FORMAT = "fourhundred-policy-v1"
TRAIN_FORMAT = "fourhundred-train-v1"
MAX_CHECKPOINT_BYTES = 2**31
"""The largest checkpoint file read (2 GiB): the weights of MAX_PARAMETERS are 128 MiB, a
trainer's checkpoint (policy, critic, optimizer state) a few times that."""
WEIGHT_DTYPES = (torch.float32, torch.bfloat16)
"""The dtypes a checkpoint's weights may have: the trainer writes float32 (``save_policy``),
bfloat16 is what the search's networks run in."""


class CheckpointError(FourHundredError):
    """A checkpoint that cannot be used: unreadable, corrupt, or made for something else."""


def read_checkpoint(
    path: str | Path, check: Callable[[dict[str, Any]], None] | None = None
) -> dict[str, Any]:
    """The raw checkpoint dict, loaded without executing code (:func:`read_torch_file`; its
    tensors' bytes mapped from the file); CheckpointError if unusable. `check(data)` runs once
    the format is known and before the file's bytes are read: a caller that uses part of it
    refuses there, from names and shapes alone, what its network would not use."""
    path = resolve_checkpoint(path)
    where = f"checkpoint {str(path)!r}"
    if not path.is_file():
        raise CheckpointError(f"{where} does not exist: expected a file")
    size = path.stat().st_size
    if size == 0:
        raise CheckpointError(f"{where} is empty (0 bytes): expected a file written by fourhundred")
    if size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(
            f"{where} is {size:,} bytes: expected at most {MAX_CHECKPOINT_BYTES:,} "
            "(MAX_CHECKPOINT_BYTES, agents/neural/checkpoint.py)"
        )
    count = declared_members(path)  # before any zip directory is parsed (model_file_kind's)
    if count is not None and count > MAX_MEMBERS:
        raise CheckpointError(
            f"{where} is refused (it holds {count:,} members (tensors): expected at most "
            f"{MAX_MEMBERS:,}, MAX_MEMBERS): expected a file written by fourhundred"
        )
    kind = model_file_kind(path)
    if kind in ("sb3", "manifest"):
        spec = "sb3" if kind == "sb3" else "torch"
        what = "a Stable-Baselines3 model zip" if kind == "sb3" else "a torch: policy manifest"
        raise CheckpointError(
            f"{where} is {what}, not a fourhundred checkpoint: play it as {spec}:{path}"
        )
    if kind == "other":  # torch.save has written zip archives since torch 1.6
        raise CheckpointError(
            f"{where} is unreadable or corrupt ({size} bytes, not a zip archive as torch.save "
            "writes): expected a file written by fourhundred"
        )

    def checked(data: Any) -> None:
        if not isinstance(data, dict) or data.get("format") not in (FORMAT, TRAIN_FORMAT):
            hint = ""
            if path.with_suffix(".json").is_file():  # save_torch_policy's weights and manifest
                hint = f" (a torch: policy with its manifest? play it as torch:{path})"
            raise CheckpointError(
                f"{where} is not a fourhundred checkpoint{hint}: expected format {FORMAT!r}"
            )
        if data["format"] == FORMAT:  # a policy file holds its network's weights and no more
            outside = [(k, t) for k, t in tensors_in(data) if not k.startswith("state_dict.")]
            if outside:
                name, tensor = outside[0]
                raise CheckpointError(
                    f"{where} holds {len(outside)} tensor(s) outside its weights (the first "
                    f"{name!r}, {_dims(tensor.shape)}): expected tensors under 'state_dict' "
                    "only, as the trainer writes"
                )
        if check is not None:
            check(data)

    return read_torch_file(
        path, where, "a file written by fourhundred", "a whole file written by fourhundred",
        check=checked,
    )  # fmt: skip


def read_torch_file(
    source: Path | bytes,
    where: str,
    expected: str,
    whole: str = "a whole file",
    pickled: str = "",
    check: Callable[[Any], None] | None = None,
) -> Any:
    """What ``torch.load(weights_only=True)`` reads from the file `source` (or its bytes).

    The one bounded reader of every model file holding tensors (ours, ``torch:`` weights,
    SB3's policy.pth, RLCard's and OpenSpiel's). In this order, each refusal one
    CheckpointError line naming `where`, what was wrong and `expected` (`whole` for a damaged
    file; `pickled`, in words, what a file of Python objects would be):

    1. the zip's directory (agents/neural/files.py's ``index_problem``: at most MAX_MEMBERS
       members, stored, each named once, a data.pkl of at most MAX_PICKLE_BYTES, no member
       declaring more than the file holds); nothing is read but the directory;
    2. the record (data.pkl, its CRC-32 checked) read as pickle operations without running
       them (``pickle_problem``: operations, nesting, tensor storages, integers);
    3. ``torch.load(..., weights_only=True, mmap=True)`` (a file: its tensors' bytes are
       mapped, not read), then every value not a tensor (``plain_problem``: depth, integers);
    4. `check(data)`, the caller's: what the architecture uses, by name, shape and dtype, from
       the tensors' metadata alone (a tensor no layer uses is refused before its bytes are
       read);
    5. every member's CRC-32 (``archive_problem``: torch checks none, so a damaged file
       would load and play other weights).
    """
    is_file = not isinstance(source, (bytes, bytearray))
    opened: Callable[[], Any] = (lambda: source) if is_file else (lambda: io.BytesIO(source))
    problem = index_problem(opened())
    if problem is None:
        try:
            with zipfile.ZipFile(opened()) as z:
                records = [n for n in z.namelist() if n.endswith("data.pkl")]
                record = z.read(records[0]) if len(records) == 1 else None
        except zipfile.BadZipFile as e:
            text = str(e)
            problem = "its record fails its CRC-32 check" if "CRC" in text else text[:120]
        except (OSError, EOFError, ValueError, RuntimeError, NotImplementedError) as e:
            problem = f"its zip archive cannot be read: {type(e).__name__}: {str(e)[:120]}"
        else:
            if record is None:
                problem = f"it holds {len(records)} records (data.pkl): expected one"
            else:
                problem = pickle_problem(record)
    if problem is not None:
        damaged = any(w in problem for w in ("CRC", "not a whole", "cannot be read", "declare"))
        if damaged:
            raise CheckpointError(f"{where} is truncated or corrupt ({problem}): expected {whole}")
        raise CheckpointError(f"{where} is refused ({problem}): expected {expected}")
    try:
        data = torch.load(opened(), map_location="cpu", weights_only=True, mmap=is_file)
    except pickle.UnpicklingError as e:
        # torch's message suggests turning safe loading off: never pass that on
        if "Unsupported global" in str(e):
            why = f" ({pickled})" if pickled else ""
            raise CheckpointError(
                f"{where} holds Python objects other than tensors and plain values{why}, and was "
                f"not loaded (loading them could run code): expected {expected}"
            ) from None
        raise CheckpointError(
            f"{where} is unreadable or corrupt (not a file torch wrote): expected {expected}"
        ) from None
    except Exception as e:  # torch raises many kinds for corrupt or foreign files
        raise CheckpointError(
            f"{where} is unreadable or corrupt ({type(e).__name__}: {_first_line(e)}): "
            f"expected {expected}"
        ) from None
    problem = plain_problem(data, skip=torch.Tensor)
    if problem is not None:
        raise CheckpointError(f"{where}: {problem}: expected {expected}")
    if check is not None:
        check(data)
    problem = archive_problem(opened())
    if problem is not None:
        raise CheckpointError(f"{where} is truncated or corrupt ({problem}): expected {whole}")
    return data


def tensors_in(value: Any) -> list[tuple[str, torch.Tensor]]:
    """(dotted name, tensor) of every tensor in the plain values `value` (mappings, lists,
    tuples), found without recursion (``plain_problem`` has bounded their depth)."""
    found: list[tuple[str, torch.Tensor]] = []
    todo: list[tuple[str, Any]] = [("", value)]
    while todo:
        name, item = todo.pop()
        if isinstance(item, torch.Tensor):
            found.append((name, item))
        elif isinstance(item, Mapping):
            todo.extend((f"{name}.{k}".lstrip("."), v) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            todo.extend((f"{name}.{i}".lstrip("."), v) for i, v in enumerate(item))
    return found


def _first_line(e: BaseException) -> str:
    """The first line of an exception's message (or its type), cut short, without torch's
    advice to load unsafely."""
    lines = [ln for ln in str(e).splitlines() if ln.strip()]
    text = lines[0] if lines else type(e).__name__
    return text.split("weights_only")[0].rstrip(" ,;(").strip()[:160] or type(e).__name__


_POLICY_KEYS = ("state_dict", "net", "rules", "obs_version")


def load_policy(
    path: str | Path, rules: Rules | None = None, device: str | torch.device = "cpu",
    features: FeatureHook | None = None,
) -> tuple[PolicyValueNet, Rules, dict[str, Any]]:  # fmt: skip
    """(net in eval mode, the checkpoint's rules, its metadata) from a checkpoint file.

    Refuses (CheckpointError, one line) a malformed checkpoint (see the module docstring)
    and one trained for another game than `rules`. A network trained with its owner's bid
    features (``extra_inputs``) reads them from `features`, the function its owner names
    again (agents/neural/extra_features.py): without it, or with one of another name or
    width than the checkpoint records, it is refused; `features` for a network without
    them is refused too.
    """
    where = f"checkpoint {str(path)!r}"
    found: dict[str, Any] = {}

    def check(data: dict[str, Any]) -> None:  # names, shapes, dtypes: before bytes are read
        policy, saved_rules, cls, config = _policy_parts(data, rules, where)
        _check_weights(policy["state_dict"], cls, config, where, finite=False)
        found.update(policy=policy, rules=saved_rules, cls=cls, config=config)

    read_checkpoint(path, check)
    policy, saved_rules, config = found["policy"], found["rules"], found["config"]
    check_finite(policy["state_dict"], where)
    net = found["cls"](config)  # within the bounds, and the weights known to fit
    try:
        net.load_state_dict(policy["state_dict"])
    except (RuntimeError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{where}: its weights do not fit its network config ({_first_line(e)}): expected "
            "the weights the trainer saved with that config"
        ) from None
    extra = policy.get("extra") if isinstance(policy.get("extra"), Mapping) else {}
    size = getattr(config, "extra_inputs", 0)
    problem = recorded_problem(features, extra.get("features"), size, where, str(path))
    if problem is not None:
        raise CheckpointError(problem)
    net.extra_features = features
    net.to(device).eval()
    meta = {k: policy.get(k) for k in ("package_version", "obs_version", "extra", "net")}
    meta["extra"] = meta["extra"] or {}
    return net, saved_rules, meta


def _policy_parts(
    data: dict[str, Any], rules: Rules | None, where: str
) -> tuple[Mapping[str, Any], Rules, type, Any]:
    """(the policy record, its rules, its network's class and config) of a checkpoint's
    `data`, each checked (see the module docstring); nothing is built."""
    policy = data.get("policy") if data["format"] == "fourhundred-train-v1" else data
    if not isinstance(policy, Mapping):
        raise CheckpointError(f"{where} has no policy: expected a 'policy' entry holding one")
    missing = [k for k in _POLICY_KEYS if k not in policy]
    if missing:
        raise CheckpointError(f"{where} lacks {missing}: expected the keys {list(_POLICY_KEYS)}")
    version = policy["obs_version"]
    if not isinstance(version, int) or isinstance(version, bool) or abs(version) >= 2**31:
        raise CheckpointError(
            f"{where}: obs_version={_short_repr(version)}: expected an integer layout version"
        )
    try:
        require_obs_version(version, where)
    except FourHundredError as e:
        raise CheckpointError(str(e)) from None
    try:
        saved_rules = Rules.from_dict(policy["rules"])
    except (FourHundredError, TypeError, AttributeError) as e:
        raise CheckpointError(
            f"{where} records rules this version cannot read ({e}): expected the rules flags of "
            "fourhundred (a checkpoint from a newer version?)"
        ) from None
    require_same_game(saved_rules, rules, where, "a checkpoint")
    cls, config = _net_class(policy["net"], where)
    return policy, saved_rules, cls, config


def require_card_player(net: Any, path: str | Path) -> PolicyValueNet:
    """The policy network that plays `net`'s cards: `net` itself, or the card network of a
    network that bids with another (agents/neural/bid_play.py); a bidding network
    (agents/neural/bid_net.py, which only bids) is refused in one line (CheckpointError)."""
    play = getattr(net, "play", None)
    if isinstance(play, PolicyValueNet):
        return play
    if not isinstance(net, PolicyValueNet):
        raise CheckpointError(
            f"checkpoint {str(path)!r} is a bidding network (it only bids): expected a policy "
            "that plays the cards too, such as agents/pretrained/selfplay.pt"
        )
    return net


def checkpoint_decides(net: Any, extra: Mapping[str, Any] | None = None) -> str:
    """What a checkpoint can decide, from its network and its record (`extra`, as
    ``load_policy``'s ``meta["extra"]``): "bid" for a bidding network (agents/neural/bid_net.py,
    no card outputs) or a network trained on the bids alone (a PPO run of ``mode: bidding``,
    a fitted-Q bidder: their card outputs were never trained), else "both"."""
    extra = extra or {}
    if not isinstance(net, PolicyValueNet) and not isinstance(getattr(net, "play", None),
                                                              PolicyValueNet):  # fmt: skip
        return "bid"
    if extra.get("mode") == "bidding" or "bid_q" in extra:
        return "bid"
    return "both"


def require_same_game(saved: Rules, rules: Rules | None, where: str, what: str) -> None:
    """Refuse (CheckpointError, one line) a model whose recorded rules `saved` play another
    game than `rules` (None: anything goes); `what` names the kind ("a checkpoint")."""
    diff = {} if rules is None else saved.game_differences(rules)
    if diff:
        listed = ", ".join(f"{k}={a!r} (here {b!r})" for k, (a, b) in sorted(diff.items()))
        raise CheckpointError(
            f"{where} was trained under other rules: {listed}: expected {what} trained for "
            "these rules (time limits and auto_claim are not compared)"
        )


def _net_class(values: Any, where: str) -> tuple[type, Any]:
    """(the class, its config) a checkpoint's ``net`` config describes: a PolicyValueNet, or a
    BidNet (agents/neural/bid_net.py) when it records ``bid_features``, or a BidPlayNet
    (agents/neural/bid_play.py) of the two configs ``bid`` and ``play``. Nothing is built: the
    layout versions and every size are checked first (the bounds of agents/neural/network.py)."""
    if isinstance(values, Mapping) and set(values) == {"bid", "play"}:
        from fourhundred_agents.neural.bid_net import BidNet
        from fourhundred_agents.neural.bid_play import BidPlayConfig, BidPlayNet

        bid_cls, bid = _net_class(values["bid"], f"{where} (its bidding network)")
        play_cls, play = _net_class(values["play"], f"{where} (its card network)")
        if bid_cls is not BidNet or play_cls is not PolicyValueNet:
            raise CheckpointError(
                f"{where}: its 'bid' config is not a bidding network's or its 'play' config "
                "not a card network's: expected bid_features in 'bid' and none in 'play'"
            )
        if bid.extra_inputs or play.extra_inputs:  # no trainer writes one: nothing feeds it
            raise CheckpointError(
                f"{where}: a network that bids with one network and plays with another reads "
                "extra inputs: expected none (bid features of your own are read by a bidding "
                "network alone, neural-bid:PATH,features=SPEC)"
            )
        return BidPlayNet, BidPlayConfig(bid, play)
    if isinstance(values, Mapping) and "bid_features" in values:
        from fourhundred_agents.neural.bid_net import (
            HEAD_VERSIONS,
            PER_BID_SIZES,
            BidNet,
            BidNetConfig,
        )

        config = _shape(BidNetConfig, values, where, "bidding network")
        if config.obs_size != OBS_SIZE or config.bid_features not in PER_BID_SIZES:
            versions = " or ".join(map(str, PER_BID_SIZES))
            raise CheckpointError(
                f"{where}: its bidding network reads observation size {config.obs_size} and "
                f"bid features version {config.bid_features}: expected {OBS_SIZE} and "
                f"{versions}, this version's (retrain, or use the release it was made with)"
            )
        hv = config.head_version
        if hv not in HEAD_VERSIONS or (hv == 2 and config.bid_features < 2):
            raise CheckpointError(
                f"{where}: its bidding network has head version {hv} with bid features "
                f"version {config.bid_features}: expected 1, or 2 with features version 2 or "
                "later (retrain, or use the release it was made with)"
            )
        _require_size(config, where, "bidding network")
        return BidNet, config
    config = _net_config(values, where)
    _require_size(config, where, "network")
    return PolicyValueNet, config


def _require_size(config: Any, where: str, what: str) -> None:
    """Refuse (one line: the field, its value and the bound) a config too big to build."""
    problem = config.size_problem()
    if problem is not None:
        raise CheckpointError(
            f"{where}: its {what} config asks for {problem}, the bound in agents/neural/network.py"
        )


def _shape(cls: type, values: Any, where: str, what: str = "network") -> Any:
    """`cls` (a dataclass of positive integer sizes) from a checkpoint's config mapping; an
    unknown field or a size that is not a positive integer is refused."""
    known = [f.name for f in dataclasses.fields(cls)]
    if not isinstance(values, Mapping):
        raise CheckpointError(f"{where}: net={values!r}: expected a mapping of {known}")
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise CheckpointError(
            f"{where}: its {what} config has field(s) {unknown} this version does not know (a "
            f"checkpoint from a newer fourhundred?): expected some of {known}"
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in values.values()):
        raise CheckpointError(
            f"{where}: net={_short_repr(dict(values))}: expected positive integers"
        )
    return cls(**values)


def _net_config(values: Any, where: str) -> NetConfig:
    """The NetConfig a checkpoint records; an unknown field, a missing shape or an input size
    other than the encoder's is refused."""
    config = _shape(NetConfig, values, where)
    if config.obs_size != OBS_SIZE:
        raise CheckpointError(
            f"{where}: its network reads {config.obs_size} inputs: expected {OBS_SIZE}, the "
            "size of this version's observation (retrain, or use the release it was made with)"
        )
    return config


def _check_weights(
    state_dict: Any, cls: type, config: Any, where: str, finite: bool = True
) -> None:
    """Every weight a dense tensor of one of WEIGHT_DTYPES, named and shaped as in a `cls` of
    `config` (built on the meta device: no memory), and finite (unless not `finite`: the
    caller checks that once the bytes are known whole)."""
    if not isinstance(state_dict, Mapping):
        raise CheckpointError(
            f"{where}: state_dict is not a mapping: expected the network's weights"
        )
    check_dtypes(state_dict, where)
    with torch.device("meta"):
        shapes = {k: tuple(v.shape) for k, v in cls(config).state_dict().items()}
    missing = [k for k in shapes if k not in state_dict]
    unexpected = [k for k in state_dict if k not in shapes]
    wrong = [k for k in shapes if k in state_dict and tuple(state_dict[k].shape) != shapes[k]]
    if missing or unexpected or wrong:
        if wrong:
            k = wrong[0]
            what = f"weight {k!r} is {_dims(state_dict[k].shape)}, the config's {_dims(shapes[k])}"
        else:
            what = f"missing {missing[:3]}" if missing else f"unexpected {unexpected[:3]}"
        raise CheckpointError(
            f"{where}: its weights do not fit its network config ({what}): expected the "
            "weights the trainer saved with that config"
        )
    if finite:
        check_finite(state_dict, where)


def check_finite(state_dict: Mapping[str, Any], where: str) -> None:
    """Refuse (one line) a weight holding NaN or infinity: ours, or a library's model file."""
    for name, tensor in state_dict.items():
        if not bool(torch.isfinite(tensor).all()):
            bad = int((~torch.isfinite(tensor)).sum())
            raise CheckpointError(
                f"{where}: weight {name!r} holds {bad} non-finite value(s) (NaN or infinity): "
                "expected finite weights (a diverged run?)"
            )


def check_dtypes(
    state_dict: Mapping[str, Any], where: str, how: str = "as the trainer writes"
) -> None:
    """Refuse (one line) a weight that is not a dense tensor of WEIGHT_DTYPES (an int32 or a
    float64 weight too: no model file of ours or of SB3 holds one)."""
    for name, tensor in state_dict.items():
        if not isinstance(tensor, torch.Tensor):
            raise CheckpointError(f"{where}: weight {name!r} is not a tensor: expected tensors")
        if tensor.layout != torch.strided or tensor.dtype not in WEIGHT_DTYPES:
            kind = str(tensor.dtype if tensor.layout == torch.strided else tensor.layout)
            allowed = " or ".join(str(d).removeprefix("torch.") for d in WEIGHT_DTYPES)
            raise CheckpointError(
                f"{where}: weight {name!r} is {kind.removeprefix('torch.')}: expected {allowed} "
                f"(WEIGHT_DTYPES), {how}"
            )


def _short_repr(value: Any) -> str:
    """repr(value) cut to 120 characters (an int too long to print shown by its length)."""
    try:
        text = repr(value)
    except ValueError:  # an int of more than 4,300 digits
        text = f"<{type(value).__name__} too long to print>"
    return text if len(text) <= 120 else text[:117] + "..."


def _dims(shape: Any) -> str:
    return "x".join(map(str, shape)) or "a scalar"
