"""Hostile model files within the size cap are refused in one line from their metadata, before
their tensors' bytes are read: overflowing and endless numbers, deep nesting, tensors by the
hundred thousand, tensors no layer uses (agents/neural/checkpoint.py's ``read_torch_file``,
agents/neural/files.py's bounds), in every loader."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents.libraries import rlcard as rlcard_module  # noqa: E402
from fourhundred_agents.libraries.openspiel_net import load_openspiel_net  # noqa: E402
from fourhundred_agents.libraries.rlcard import load_dmc_model, write_manifest  # noqa: E402
from fourhundred_agents.libraries.sb3 import load_sb3_model  # noqa: E402
from fourhundred_agents.libraries.torch_policy import (  # noqa: E402
    MLPPolicy,
    load_torch_policy,
    save_torch_policy,
)
from fourhundred_agents.neural import checkpoint as checkpoint_module  # noqa: E402
from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet  # noqa: E402
from fourhundred_env.registry import make_agent  # noqa: E402
from fourhundred_env.rules import Rules  # noqa: E402
from fourhundred_train.checkpoint import policy_record  # noqa: E402

SMALL = NetConfig(hidden=8, layers=1)
HUGE_INT = "9" * 5000


def _one_line(call, *needles: str) -> str:
    with pytest.raises(CheckpointError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message and "Traceback" not in message, message
    for needle in needles:
        assert needle in message, message
    return message


@pytest.fixture
def no_bytes_read(monkeypatch):
    """Fails a test whose file had its members' bytes read (the CRC pass reads them all)."""
    calls: list[object] = []
    monkeypatch.setattr(checkpoint_module, "archive_problem", lambda src: calls.append(src))
    yield calls
    assert not calls, "the tensors' bytes were read before the refusal"


# ---- numbers that overflow, in every JSON a loader reads --------------------------------


@pytest.mark.parametrize(("literal", "words"), [
    ("1e999", "the number 1e999 overflows"), (HUGE_INT, "an integer of 5,000 digits"),
    ("Infinity", "Infinity is not a number JSON holds"),
])  # fmt: skip
def test_a_torch_manifest_with_numbers_that_overflow_is_refused(
    tmp_path: Path, literal: str, words: str
) -> None:
    weights, manifest = save_torch_policy(tmp_path / "p.pt", MLPPolicy(hidden=[8]))
    text = manifest.read_text()
    manifest.write_text(text.replace('"obs_version": 1', f'"obs_version": {literal}'))
    _one_line(lambda: load_torch_policy(weights), str(manifest), words)


@pytest.mark.parametrize("library", ["rlcard", "openspiel"])
@pytest.mark.parametrize(("literal", "words"), [
    ("1e999", "the number 1e999 overflows"), (HUGE_INT, "an integer of 5,000 digits"),
    ("[" * 100_000 + "]" * 100_000, "nests too deeply"),
])  # fmt: skip
def test_a_library_manifest_with_numbers_that_overflow_is_refused(
    tmp_path: Path, library: str, literal: str, words: str
) -> None:
    path = write_manifest(tmp_path, library=library)
    path.write_text(path.read_text().replace('"obs_version": 1', f'"obs_version": {literal}'))
    rlcard_module.MAX_MANIFEST_BYTES = 2**20  # the nesting, not the size, is what is refused
    try:
        model = tmp_path / "model.tar"
        torch.save({"model": {}}, model)
        call = (lambda: load_dmc_model(model)) if library == "rlcard" else (
            lambda: load_openspiel_net(model, "dqn"))  # fmt: skip
        _one_line(call, "fourhundred.json", words)
    finally:
        rlcard_module.MAX_MANIFEST_BYTES = 2**16


@pytest.mark.parametrize(("literal", "words"), [
    ("1e999", "the number 1e999 overflows"), (HUGE_INT, "an integer of 5,000 digits"),
    ("Infinity", "obs_version"),
])  # fmt: skip
def test_an_sb3_zip_whose_stamp_overflows_is_refused(
    tmp_path: Path, literal: str, words: str
) -> None:
    pytest.importorskip("stable_baselines3")
    path = tmp_path / "model.zip"
    data = ('{"policy_class": {"__module__": "stable_baselines3.common.policies", "__init__": '
            '"<function ActorCriticPolicy.__init__>"}, "fourhundred": {"obs_version": '
            f'{literal}, "rules": {{}}}}}}')  # fmt: skip
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", data)
        z.writestr("policy.pth", b"")
    message = _one_line(lambda: load_sb3_model(path), str(path))
    assert words in message or "observation" in message, message


# ---- native checkpoints: deep, many, big --------------------------------------------------


def _record(**extra) -> dict:
    torch.manual_seed(0)
    return policy_record(PolicyValueNet(SMALL), Rules(), extra)


def _replace_in_record(path: Path, sentinel: str, pickled: bytes) -> None:
    """Rewrite the torch file `path` with the pickled string `sentinel` in its data.pkl
    replaced by the pickle operations `pickled` (what torch.save could never write itself)."""
    with zipfile.ZipFile(path) as z:
        members = [(info.filename, z.read(info)) for info in z.infolist()]
    text = sentinel.encode()
    opcode = b"X" + len(text).to_bytes(4, "little") + text  # BINUNICODE
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, content in members:
            if name.endswith("data.pkl"):
                assert opcode in content
                content = content.replace(opcode, pickled)
            z.writestr(name, content)
    path.write_bytes(out.getvalue())


def test_a_million_deep_play_policy_is_refused_before_it_is_built(
    tmp_path: Path, no_bytes_read
) -> None:
    path = tmp_path / "deep.pt"
    depth = 1_000_000
    torch.save(_record(mode="bidding", play_policy="SENTINEL_PLAY"), path)
    _replace_in_record(path, "SENTINEL_PLAY", b"]" * depth + b"a" * (depth - 1))
    _one_line(lambda: load_policy(path), str(path), "nests more than")
    _one_line(lambda: make_agent(f"neural-bid:{path}", Rules(), 0), "nests more than")


def test_a_play_policy_that_is_no_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.pt"
    nested: list = []
    for _ in range(20):
        nested = [nested]
    torch.save(_record(mode="bidding", play_policy=nested), path)
    _one_line(lambda: make_agent(f"neural-bid:{path}", Rules(), 0), "play_policy that is a list")


def test_a_huge_integer_in_a_checkpoint_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "int.pt"
    torch.save(_record(note=10**5000 - 1), path)
    _one_line(
        lambda: load_policy(path), str(path), "integer of 16,610 bits: expected at most 1,000"
    )


def test_ten_thousand_tiny_tensors_are_refused_from_the_record(
    tmp_path: Path, no_bytes_read
) -> None:
    base = torch.zeros(10_000)  # views of one storage: one member, 10,000 records
    path = tmp_path / "views.pt"
    torch.save(_record(junk=[base[i : i + 1] for i in range(10_000)]), path)
    _one_line(lambda: load_policy(path), str(path), "more than 4,096 tensor storages")


def test_thousands_of_tensor_members_are_refused_from_the_zip_directory(
    tmp_path: Path, no_bytes_read
) -> None:
    path = tmp_path / "members.pt"
    torch.save(_record(junk=[torch.zeros(1) for _ in range(5000)]), path)
    _one_line(lambda: load_policy(path), str(path), "members (tensors): expected at most 4,096")


@pytest.mark.parametrize("where", ["extra", "state_dict"])
def test_a_tensor_no_layer_uses_is_refused_before_its_bytes_are_read(
    tmp_path: Path, monkeypatch, where: str
) -> None:
    data = _record()
    blob = torch.zeros(1 << 22)  # 16 MiB: far above the network's weights
    if where == "extra":
        data["extra"]["blob"] = blob
    else:
        data["state_dict"]["blob"] = blob
    path = tmp_path / "unused.pt"
    torch.save(data, path)
    loads: list[dict] = []
    real_load = torch.load

    def spy(*args, **kwargs):
        loads.append(kwargs)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", spy)
    crc: list[object] = []
    monkeypatch.setattr(checkpoint_module, "archive_problem", lambda src: crc.append(src))
    words = "outside its weights (the first 'extra.blob'" if where == "extra" else "unexpected"
    _one_line(lambda: load_policy(path), str(path), words)
    assert loads and all(c.get("mmap") is True and c.get("weights_only") for c in loads)
    assert not crc  # refused from names and shapes: the 16 MiB were never read


def test_torch_weights_no_layer_uses_are_refused_before_their_bytes_are_read(
    tmp_path: Path, no_bytes_read
) -> None:
    module = MLPPolicy(hidden=[8])
    weights, _ = save_torch_policy(tmp_path / "p.pt", module)
    state = {**module.state_dict(), "blob": torch.zeros(1 << 20)}
    torch.save(state, weights)
    _one_line(lambda: load_torch_policy(weights), str(weights), "unexpected ['blob']")


def test_an_unused_dmc_position_is_never_read(tmp_path: Path, no_bytes_read) -> None:
    state = {"fc_layers.0.weight": torch.zeros(2, 10), "fc_layers.0.bias": torch.zeros(2)}
    path = tmp_path / "model.tar"
    torch.save({"model_state_dict": [state]}, path)
    _one_line(lambda: load_dmc_model(path), str(path), "expected 654 inputs")


def test_good_files_still_load(tmp_path: Path) -> None:
    path = tmp_path / "good.pt"
    torch.save(_record(), path)
    net, _, _ = load_policy(path)
    assert isinstance(net, PolicyValueNet)
    weights, _ = save_torch_policy(tmp_path / "p.pt", MLPPolicy(hidden=[8]))
    assert load_torch_policy(weights).module is not None
    json.loads((tmp_path / "p.json").read_text())
