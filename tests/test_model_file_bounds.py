"""Bounds before work for every model file: hostile ``sb3:`` and ``torch:`` files
(a zip bomb, a hundred thousand layers, layers of 200,000, an input of 1e9, negative sizes, a
deeply nested manifest, float64 and int32 weights) are refused in one line, each within a
second and without large memory, before anything is built; the good files still load.

The hostile files are loaded in one fresh interpreter, which reports for each the message,
the seconds and how far its peak memory (ru_maxrss) rose: the test process's own peak, after
building models, would hide a rise."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

import torch

from fourhundred_agents.libraries.torch_policy import MLPPolicy, save_torch_policy
from fourhundred_agents.registry import make_agent
from fourhundred_env import Rules

ROOT = Path(__file__).resolve().parents[1]
LIMIT_S = 1.0
LIMIT_MB = 200

_CHILD = r"""
import json, resource, sys, time
from fourhundred_agents.registry import make_agent
from fourhundred_env import Rules
from fourhundred_env.errors import FourHundredError

out = {}
for spec in sys.argv[1:]:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.monotonic()
    try:
        make_agent(spec, Rules()).close()
        message = None
    except FourHundredError as e:
        message = str(e)
    seconds = time.monotonic() - t0
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out[spec] = [message, seconds, grown]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> dict[str, Path]:
    """An untrained MaskablePPO model zip (net_arch [32, 32]) and a torch: "mlp" policy."""
    from sb3_contrib import MaskablePPO

    from fourhundred_env.envs.sb3 import make_sb3_vec_env, stamp_model

    folder = tmp_path_factory.mktemp("good")
    env = make_sb3_vec_env("FourHundred-v0", num_envs=2, seed=0)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=8, batch_size=8, device="cpu",
                        policy_kwargs={"net_arch": [32, 32]})  # fmt: skip
    stamp_model(model)
    model.save(folder / "model.zip")
    weights, _ = save_torch_policy(folder / "policy.pt", MLPPolicy(hidden=[32]))
    return {"sb3": folder / "model.zip", "torch": weights}


def _sb3_variant(good: Path, out: Path, data: dict | None = None, raw_data: bytes | None = None,
                 weights: dict | None = None, extra: tuple[str, bytes] | None = None,
                 compress: bool = False) -> Path:  # fmt: skip
    """A copy of the model zip `good` with its data, its weights or an extra member changed."""
    with zipfile.ZipFile(good) as z, zipfile.ZipFile(out, "w") as new:
        for name in z.namelist():
            content = z.read(name)
            method = zipfile.ZIP_STORED
            if name == "data" and (data is not None or raw_data is not None):
                content = raw_data if raw_data is not None else json.dumps(data).encode()
                method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
            if name == "policy.pth" and weights is not None:
                buffer = io.BytesIO()
                torch.save(weights, buffer)
                content = buffer.getvalue()
            new.writestr(name, content, compress_type=method)
        if extra is not None:
            new.writestr(extra[0], extra[1])
    return out


def _declare_size(path: Path, member: str, size: int) -> None:
    """Make the zip's directory declare `size` bytes unpacked for `member` (as a zip bomb's
    does: 3 GiB from a few MB), without writing them."""
    raw = bytearray(path.read_bytes())
    name = member.encode()
    at = raw.find(b"PK\x01\x02" + bytes(0))
    while at >= 0:
        name_len = struct.unpack_from("<H", raw, at + 28)[0]
        if raw[at + 46 : at + 46 + name_len] == name:
            struct.pack_into("<I", raw, at + 24, size)
            path.write_bytes(bytes(raw))
            return
        at = raw.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"no member {member!r}")


def _torch_variant(good: Path, out: Path, change: dict | None = None, raw: str | None = None,
                   weights: dict | None = None) -> Path:  # fmt: skip
    """A copy of the torch: policy `good` (weights and manifest) with its manifest changed
    (keys replaced, or the whole text), or other weights."""
    out.parent.mkdir(parents=True, exist_ok=True)
    manifest = json.loads(good.with_suffix(".json").read_text())
    text = raw if raw is not None else json.dumps({**manifest, **(change or {})})
    out.with_suffix(".json").write_text(text)
    if weights is not None:
        torch.save(weights, out)
    else:
        out.write_bytes(good.read_bytes())
    return out


def test_hostile_model_files_are_refused_at_once_in_one_line(good, tmp_path: Path) -> None:
    sb3, pol = good["sb3"], good["torch"]
    with zipfile.ZipFile(sb3) as z:
        data = json.loads(z.read("data"))
        state = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    tstate = torch.load(pol, weights_only=True)

    def kwargs(**change) -> dict:
        return {**data, "policy_kwargs": {**data["policy_kwargs"], **change}}

    bomb_total = _sb3_variant(sb3, tmp_path / "bomb_total.zip", extra=("junk", b"0" * 4096))
    _declare_size(bomb_total, "junk", 3 * 2**30)
    deep = "[" * 50_000 + "]" * 50_000
    hostile = {
        # a real deflate bomb: 64 MiB of settings in about 64 KB
        "sb3 bomb": (
            _sb3_variant(
                sb3, tmp_path / "bomb.zip", raw_data=b"{" + b" " * 2**26 + b"}", compress=True
            ),
            "'data' unpacks to",
        ),
        "sb3 3 GiB declared": (bomb_total, "unpack to 3,221,"),
        "sb3 100,000 layers": (
            _sb3_variant(sb3, tmp_path / "layers.zip", kwargs(net_arch=[64] * 100_000)),
            "MAX_LAYERS",
        ),
        "sb3 wide": (
            _sb3_variant(
                sb3, tmp_path / "wide.zip", kwargs(net_arch={"pi": [200_000, 200_000], "vf": [64]})
            ),
            "MAX_HIDDEN",
        ),
        "sb3 negative": (
            _sb3_variant(sb3, tmp_path / "neg.zip", kwargs(net_arch=[-5, 64])),
            "width -5: expected positive",
        ),
        "sb3 extractor": (
            _sb3_variant(
                sb3,
                tmp_path / "ext.zip",
                kwargs(features_extractor_kwargs={"cnn_output_dim": 10**12}),
            ),
            "features_extractor_kwargs",
        ),
        "sb3 deep": (
            _sb3_variant(
                sb3,
                tmp_path / "deep.zip",
                raw_data=('{"policy_kwargs": {"net_arch": ' + deep + "}}").encode(),
            ),
            "nests too deeply",
        ),
        "sb3 float64": (
            _sb3_variant(
                sb3, tmp_path / "f64.zip", weights={k: v.double() for k, v in state.items()}
            ),
            "is float64: expected float32",
        ),
        "sb3 int32": (
            _sb3_variant(sb3, tmp_path / "i32.zip", weights={k: v.int() for k, v in state.items()}),
            "is int32: expected float32",
        ),
        "torch 100,000 layers": (
            _torch_variant(pol, tmp_path / "t1" / "p.pt", {"kwargs": {"hidden": [64] * 100_000}}),
            "MAX_LAYERS",
        ),
        "torch wide": (
            _torch_variant(
                pol, tmp_path / "t2" / "p.pt", {"kwargs": {"hidden": [200_000, 200_000]}}
            ),
            "MAX_HIDDEN",
        ),
        "torch input of 1e9": (
            _torch_variant(
                pol, tmp_path / "t3" / "p.pt", {"kwargs": {"hidden": [32], "obs_size": 10**9}}
            ),
            "obs_size=1000000000: expected 588",
        ),
        "torch negative": (
            _torch_variant(pol, tmp_path / "t4" / "p.pt", {"kwargs": {"hidden": [-5]}}),
            "width -5: expected positive",
        ),
        "torch deep": (
            _torch_variant(
                pol, tmp_path / "t5" / "p.pt", raw=('{"kwargs": {"hidden": ' + deep + "}}")
            ),
            "nests too deeply",
        ),
        "torch huge manifest": (
            _torch_variant(pol, tmp_path / "t6" / "p.pt", {"library": "x" * 2**21}),
            "MAX_MANIFEST_BYTES",
        ),
        "torch float64": (
            _torch_variant(
                pol, tmp_path / "t7" / "p.pt", weights={k: v.double() for k, v in tstate.items()}
            ),
            "is float64: expected float32",
        ),
        "torch int32": (
            _torch_variant(
                pol, tmp_path / "t8" / "p.pt", weights={k: v.int() for k, v in tstate.items()}
            ),
            "is int32: expected float32",
        ),
    }
    specs = {name: ("sb3:" if name.startswith("sb3") else "torch:") + str(path)
             for name, (path, _) in hostile.items()}  # fmt: skip
    warm = [f"sb3:{sb3}", f"torch:{pol}"]  # the first load imports SB3: not the file's time
    done = subprocess.run([sys.executable, "-c", _CHILD, *warm, *specs.values()], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=True)  # fmt: skip
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert [results[spec][0] for spec in warm] == [None, None]
    for name, (_, expected) in hostile.items():
        message, seconds, grown_mb = results[specs[name]]
        assert message is not None, f"{name}: loaded"
        assert expected in message and "\n" not in message, (name, message)
        assert seconds < LIMIT_S and grown_mb < LIMIT_MB, (name, seconds, grown_mb)


def test_the_good_files_still_load(good) -> None:
    for spec in (f"sb3:{good['sb3']}", f"torch:{good['torch']}"):
        make_agent(spec, Rules()).close()
