"""A checkpoint is data, checked whole before it is used: sizes its
config names are bounded before anything is allocated, a damaged archive (a wrong CRC-32) is
refused before torch reads it, weights of another dtype, another shape or not finite are
refused, nothing is unpickled but tensors and plain values; the bundled files load unchanged.
Every refusal is one line naming the file and the problem."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.neural import checkpoint as checkpoint_module  # noqa: E402
from fourhundred_agents.neural.bid_net import BidNet, BidNetConfig  # noqa: E402
from fourhundred_agents.neural.checkpoint import PRETRAINED, CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.neural.files import archive_problem  # noqa: E402
from fourhundred_agents.neural.network import (  # noqa: E402
    MAX_HIDDEN,
    MAX_LAYERS,
    MAX_PARAMETERS,
    NetConfig,
    PolicyValueNet,
)
from fourhundred_env.observation import OBS_SIZE  # noqa: E402
from fourhundred_env.rules import Rules  # noqa: E402
from fourhundred_train.checkpoint import policy_record, save_policy  # noqa: E402

SMALL = NetConfig(hidden=8, layers=1)
SMALL_BID = BidNetConfig(hidden=16, head=8, head_version=2)
BUNDLED = ("selfplay.pt", "exit.pt", "bidder.pt")


def _record(bid: bool = False) -> dict:
    torch.manual_seed(0)
    net = BidNet(SMALL_BID) if bid else PolicyValueNet(SMALL)
    return policy_record(net, Rules())


def _save(path: Path, data: dict) -> Path:
    torch.save(data, path)
    return path


def _refusal(path: Path) -> str:
    """The one-line message load_policy refuses `path` with."""
    with pytest.raises(CheckpointError) as err:
        load_policy(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message, message
    assert "weights_only" not in message, message  # torch's advice, never ours
    return message


_CHILD = r"""
import json, re, resource, sys
import torch
from fourhundred_agents.neural.bid_net import BidNet, BidNetConfig
from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet
warm, jobs = sys.argv[1:3], json.loads(sys.argv[3])
for path in warm:  # imports and first-use caches, outside the measure
    load_policy(path)
vm = int(re.search(r"VmSize:\s+(\d+)", open("/proc/self/status").read()).group(1)) * 1024
soft, hard = resource.getrlimit(resource.RLIMIT_AS)
limit = vm + (512 << 20)  # an allocation of gigabytes fails here instead of swapping the host
if hard == resource.RLIM_INFINITY or hard >= limit:
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
out = []
for kind, what in jobs:
    try:
        if kind == "load":
            load_policy(what)
        elif kind == "policy":
            PolicyValueNet(NetConfig(**what))
        else:
            BidNet(BidNetConfig(**what))
        out.append("no error")
    except (CheckpointError, ValueError) as e:
        out.append(str(e))
    except BaseException as e:
        out.append(f"{type(e).__name__}: {e}"[:300])
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"messages": out, "peak_kib": after - before}))
"""


def _in_bounded_child(tmp_path: Path, jobs: list[tuple[str, object]]) -> list[str]:
    """What each job (("load", path) or ("policy" | "bid", config fields)) raised, run in a
    child process whose address space is capped at 512 MiB above its size after warming up, so
    that a regression fails there instead of swapping (or OOM-killing) the host; the child's
    peak memory over the jobs must stay small."""
    warm = [_save(tmp_path / "warm.pt", _record()), _save(tmp_path / "warm_bid.pt", _record(True))]
    run = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, warm), json.dumps(jobs)],
        capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[1],
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.strip().splitlines()[-1])
    # a network of 14 GB (or even 78 MB) built and then refused would show here
    assert result["peak_kib"] < 32 * 1024, result["peak_kib"]
    return result["messages"]


def test_oversized_configs_are_refused_before_anything_is_allocated(tmp_path: Path) -> None:
    policy_sizes = {
        "wide": ({"hidden": 60000}, f"hidden=60,000: expected at most {MAX_HIDDEN} (MAX_HIDDEN)"),
        "deep": (
            {"layers": 10**6},
            f"layers=1,000,000: expected at most {MAX_LAYERS} (MAX_LAYERS)",
        ),
        "many weights": (
            {"hidden": MAX_HIDDEN, "layers": MAX_LAYERS},
            f"522,907,715 weights (hidden=4096, layers=32): expected at most "
            f"{MAX_PARAMETERS:,} (MAX_PARAMETERS)",
        ),
        "huge int": ({"hidden": 10**30}, "hidden=about 2**99: expected at most 4096"),
    }
    bid_sizes = {
        "bid wide": ({"hidden": 10**6}, "hidden=1,000,000: expected at most 4096 (MAX_HIDDEN)"),
        "bid head": ({"head": 60000}, "head=60,000: expected at most 4096 (MAX_HIDDEN)"),
    }
    cases: dict[str, tuple[Path, str]] = {}
    for name, (sizes, expect) in policy_sizes.items():
        data = _record()
        data["net"] = {**data["net"], **sizes}
        path = _save(tmp_path / f"{name}.pt", data)
        cases[name] = (path, f"checkpoint {str(path)!r}: its network config asks for {expect}")
    for name, (sizes, expect) in bid_sizes.items():
        data = _record(bid=True)
        data["net"] = {**data["net"], **sizes}
        path = _save(tmp_path / f"{name}.pt", data)
        cases[name] = (path, f"its bidding network config asks for {expect}")
    # within the bounds (78 MB of weights) but not the weights saved: refused before building
    data = _record()
    data["net"] = {**data["net"], "hidden": MAX_HIDDEN, "layers": 2}
    path = _save(tmp_path / "not its weights.pt", data)
    cases["shapes"] = (path, "its weights do not fit its network config (weight "
                             "'trunk.0.weight' is 8x588, the config's 4096x588)")  # fmt: skip
    messages = _in_bounded_child(tmp_path, [("load", str(p)) for p, _ in cases.values()])
    for (name, (path, expect)), message in zip(cases.items(), messages, strict=True):
        assert expect in message, (name, message)
        assert str(path) in message and "\n" not in message, (name, message)


def test_networks_too_big_are_refused_when_built_directly(tmp_path: Path) -> None:
    jobs = [("policy", {"hidden": 60000}), ("policy", {"layers": 10**6}),
            ("bid", {"head": 60000})]  # fmt: skip
    assert _in_bounded_child(tmp_path, jobs) == [
        "network too big: hidden=60,000: expected at most 4096 (MAX_HIDDEN)",
        "network too big: layers=1,000,000: expected at most 32 (MAX_LAYERS)",
        "network too big: head=60,000: expected at most 4096 (MAX_HIDDEN)",
    ]
    # the count is worked out, not built: it matches the networks' own
    for config in (NetConfig(), SMALL, NetConfig(hidden=32, layers=2)):
        assert config.num_parameters() == sum(
            p.numel() for p in PolicyValueNet(config).parameters()
        )
    for config in (BidNetConfig(), SMALL_BID, BidNetConfig(bid_features=1, hidden=32, head=8)):
        assert config.num_parameters() == sum(p.numel() for p in BidNet(config).parameters())


def _damage(source: Path, target: Path) -> Path:
    """`source` with 64 bytes overwritten in its middle (inside the weights)."""
    data = bytearray(source.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(range(64))
    target.write_bytes(bytes(data))
    return target


@pytest.mark.parametrize("name", BUNDLED)
def test_a_damaged_checkpoint_is_refused(tmp_path: Path, name: str) -> None:
    good = PRETRAINED / name
    bad = _damage(good, tmp_path / name)
    # torch checks no CRC: it reads the damaged file and gets other weights
    raw = torch.load(bad, map_location="cpu", weights_only=True)["state_dict"]
    original = torch.load(good, map_location="cpu", weights_only=True)["state_dict"]
    assert any(not torch.equal(raw[k], original[k]) for k in original)
    message = _refusal(bad)
    assert message.startswith(f"checkpoint {str(bad)!r} is truncated or corrupt (")
    assert "fails its CRC-32 check): expected a whole file written by fourhundred" in message
    assert "its member 'archive/data/" in message
    with pytest.raises(CheckpointError, match="fails its CRC-32 check"):
        make_agent(f"neural:{bad}", Rules(), seed=0)


def test_an_archive_torch_save_would_not_write_is_refused(tmp_path: Path) -> None:
    good = _save(tmp_path / "good.pt", _record())
    with zipfile.ZipFile(good) as z:
        members = [(info, z.read(info)) for info in z.infolist()]
    deflated = tmp_path / "deflated.pt"
    with zipfile.ZipFile(deflated, "w", zipfile.ZIP_DEFLATED) as z:
        for info, content in members:
            z.writestr(info.filename, content)
    assert "is compressed (method 8), which torch.save never does" in _refusal(deflated)
    twice = tmp_path / "twice.pt"
    shutil.copy(good, twice)
    with pytest.warns(UserWarning), zipfile.ZipFile(twice, "a") as z:
        z.writestr(members[-1][0].filename, b"other")
    assert f"its member {members[-1][0].filename!r} appears twice" in _refusal(twice)
    legacy = tmp_path / "legacy.pt"
    torch.save(_record(), legacy, _use_new_zipfile_serialization=False)
    assert "not a zip archive as torch.save writes" in _refusal(legacy)


def test_a_file_above_the_size_bound_is_refused(tmp_path: Path, monkeypatch) -> None:
    path = _save(tmp_path / "big.pt", _record())
    size = path.stat().st_size
    monkeypatch.setattr(checkpoint_module, "MAX_CHECKPOINT_BYTES", size - 1)
    assert f"is {size:,} bytes: expected at most {size - 1:,} (MAX_CHECKPOINT_BYTES" in _refusal(
        path
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16, torch.int32, torch.int64])
@pytest.mark.parametrize("bid", [False, True])
def test_weights_of_another_dtype_are_refused(tmp_path: Path, dtype, bid: bool) -> None:
    data = _record(bid)
    name = "trunk.0.weight"
    data["state_dict"][name] = data["state_dict"][name].to(dtype)
    path = _save(tmp_path / "dtype.pt", data)
    kind = str(dtype).removeprefix("torch.")
    assert (
        f"weight {name!r} is {kind}: expected float32 or bfloat16 (WEIGHT_DTYPES), as the "
        "trainer writes"
    ) in _refusal(path)


def test_sparse_weights_are_refused(tmp_path: Path) -> None:
    data = _record()
    data["state_dict"]["trunk.0.bias"] = data["state_dict"]["trunk.0.bias"].to_sparse()
    path = _save(tmp_path / "sparse.pt", data)
    assert "weight 'trunk.0.bias' is sparse_coo: expected float32 or bfloat16" in _refusal(path)


def test_bfloat16_weights_load_as_their_float32_values(tmp_path: Path) -> None:
    data = _record()
    data["state_dict"] = {k: v.to(torch.bfloat16) for k, v in data["state_dict"].items()}
    net, _, _ = load_policy(_save(tmp_path / "bf16.pt", data))
    for k, v in net.state_dict().items():
        assert v.dtype == torch.float32 and torch.equal(v, data["state_dict"][k].float())


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("bid", [False, True])
def test_non_finite_weights_are_refused(tmp_path: Path, value: float, bid: bool) -> None:
    data = _record(bid)
    name = "bid_head.0.weight" if bid else "play_head.weight"
    data["state_dict"][name][0, 0] = value
    path = _save(tmp_path / "nan.pt", data)
    assert (
        f"weight {name!r} holds 1 non-finite value(s) (NaN or infinity): expected finite weights"
    ) in _refusal(path)


@pytest.mark.parametrize("bid", [False, True])
def test_weights_of_another_shape_are_refused(tmp_path: Path, bid: bool) -> None:
    data = _record(bid)
    data["state_dict"]["extra.weight"] = torch.zeros(3)
    assert "do not fit its network config (unexpected ['extra.weight'])" in _refusal(
        _save(tmp_path / "extra.pt", data)
    )
    data = _record(bid)
    del data["state_dict"]["trunk.0.bias"]
    assert "(missing ['trunk.0.bias'])" in _refusal(_save(tmp_path / "missing.pt", data))


class _Planted:
    """Unpickling this would create a file: what a hostile checkpoint would do."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def test_loading_unpickles_nothing_but_tensors_and_plain_values(
    tmp_path: Path, monkeypatch
) -> None:
    marker = tmp_path / "ran"
    data = _record()
    data["extra"] = {"note": _Planted(marker)}
    path = _save(tmp_path / "planted.pt", data)
    assert "holds Python objects other than tensors and plain values" in _refusal(path)
    assert not marker.exists()
    calls: list[dict] = []
    real = torch.load

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    load_policy(PRETRAINED / "selfplay.pt")
    assert calls and all(c.get("weights_only") is True for c in calls)


@pytest.mark.parametrize("name", BUNDLED)
def test_the_bundled_checkpoints_load_bit_for_bit(name: str) -> None:
    path = PRETRAINED / name
    assert archive_problem(path) is None
    raw = torch.load(path, map_location="cpu", weights_only=True)
    net, _, meta = load_policy(path)
    loaded = net.state_dict()
    assert set(loaded) == set(raw["state_dict"])
    for k, v in raw["state_dict"].items():
        assert loaded[k].dtype == v.dtype and torch.equal(loaded[k], v), k
    assert meta["net"] == raw["net"]
    if "bid_features" in raw["net"]:
        config = BidNetConfig(**raw["net"])
        assert isinstance(net, BidNet) and config.size_problem() is None
        return
    play, weights = raw["net"], raw["state_dict"]
    if set(play) == {"bid", "play"}:  # a bidding network beside a card network: its cards
        play = play["play"]
        weights = {k[5:]: v for k, v in weights.items() if k.startswith("play.")}
        net = net.play
    reference = PolicyValueNet(NetConfig(**play))
    reference.load_state_dict(weights)
    reference.eval()
    obs = torch.rand(16, OBS_SIZE, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        (a, va), (b, vb) = net(obs), reference(obs)
    assert torch.equal(a, b) and torch.equal(va, vb)


def test_a_saved_policy_loads_and_its_agent_plays(tmp_path: Path) -> None:
    path = tmp_path / "policy.pt"
    torch.manual_seed(0)
    save_policy(path, PolicyValueNet(SMALL), Rules())
    assert archive_problem(path) is None
    agent = make_agent(f"neural:{path}", Rules(), seed=0)
    assert agent.rules == Rules()
