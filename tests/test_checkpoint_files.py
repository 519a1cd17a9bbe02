"""Every malformed checkpoint is one line naming the file and the problem, in our words; the
conduct flags (time limits, auto_claim) do not make a checkpoint one of other rules."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet  # noqa: E402
from fourhundred_cli import main as cli_main  # noqa: E402
from fourhundred_env.rules import CONDUCT_FLAGS, Rules  # noqa: E402
from fourhundred_train.checkpoint import policy_record, save_policy  # noqa: E402

SMALL = NetConfig(hidden=8, layers=1)


def _good(tmp_path: Path, rules: Rules | None = None) -> Path:
    path = tmp_path / "good.pt"
    torch.manual_seed(0)
    save_policy(path, PolicyValueNet(SMALL), rules or Rules())
    return path


def _record(**changes) -> dict:
    torch.manual_seed(0)
    data = policy_record(PolicyValueNet(SMALL), Rules())
    for key, value in changes.items():
        if value is None:
            del data[key]
        else:
            data[key] = value
    return data


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, what the message must say)."""
    good = _good(tmp_path)
    files: dict[str, tuple[Path, str]] = {}

    def save(name: str, obj: object, expect: str) -> None:
        path = tmp_path / f"{name}.pt"
        torch.save(obj, path)
        files[name] = (path, expect)

    empty = tmp_path / "empty.pt"
    empty.write_bytes(b"")
    files["empty"] = (empty, "is empty (0 bytes)")
    truncated = tmp_path / "truncated.pt"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    files["truncated"] = (truncated, "is truncated or corrupt")
    text = tmp_path / "text.pt"
    text.write_bytes(b"not a checkpoint at all")
    files["not torch"] = (text, "unreadable or corrupt")
    save("pickled object", {"format": "x", "thing": argparse.Namespace(x=1)},
         "holds Python objects other than tensors")  # fmt: skip
    save("foreign", {"format": "something-else"}, "is not a fourhundred checkpoint")
    save("missing keys", _record(net=None, rules=None), "lacks ['net', 'rules']")
    save("unknown net field", _record(net={**SMALL.to_dict(), "dropout": 1}),
         "field(s) ['dropout'] this version does not know")  # fmt: skip
    wide = NetConfig(obs_size=100, hidden=8, layers=1)
    torch.manual_seed(0)
    save("input size", policy_record(PolicyValueNet(wide), Rules()),
         "reads 100 inputs: expected 588")  # fmt: skip
    nan = _record()
    nan["state_dict"]["trunk.0.weight"][0, 0] = float("nan")
    save("non-finite", nan, "weight 'trunk.0.weight' holds 1 non-finite value(s)")
    mismatched = _record(net={**SMALL.to_dict(), "hidden": 16})
    save("weights do not fit", mismatched, "weights do not fit its network config")
    newer_rules = _record()
    newer_rules["rules"] = {**newer_rules["rules"], "jokers": True}
    save("unknown rules flag", newer_rules, "records rules this version cannot read")
    save("other layout", _record(obs_version=999), "observation layout version 999")
    return files


def test_every_malformed_checkpoint_is_one_line_naming_the_file(tmp_path: Path, capsys) -> None:
    for name, (path, expect) in _bad_files(tmp_path).items():
        with pytest.raises(CheckpointError) as err:
            load_policy(path)
        message = str(err.value)
        assert expect in message, (name, message)
        assert str(path) in message and "\n" not in message, (name, message)
        assert "weights_only" not in message, (name, message)  # torch's advice, not ours
    # and through the command line: one line, exit code 2, nothing played
    path = tmp_path / "empty.pt"
    out = ["--out", str(tmp_path / "t"), "--no-progress", "--workers", "1"]
    assert cli_main(["tournament", "--agents", f"neural:{path}", "random", *out]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"fourhundred: error: checkpoint {str(path)!r} is empty (0 bytes): "
                   "expected a file written by fourhundred"]  # fmt: skip
    assert not (tmp_path / "t" / "results.sqlite").exists()


def test_conduct_flags_are_not_rules_of_the_game(tmp_path: Path) -> None:
    path = _good(tmp_path)
    conduct = Rules(move_time_limit_s=1.0, move_hard_limit_s=5.0, auto_claim=True)
    assert set(CONDUCT_FLAGS) == {"move_time_limit_s", "move_hard_limit_s", "auto_claim"}
    assert Rules().game_differences(conduct) == {}
    load_policy(path, rules=conduct)  # a timed tournament with auto_claim takes it
    for spec in (f"neural:{path}", f"neural-bid:{path}"):
        agent = make_agent(spec, conduct, seed=0)
        assert agent.rules == conduct
    other = Rules(target=51, move_hard_limit_s=5.0, move_time_limit_s=1.0)
    with pytest.raises(CheckpointError) as err:
        load_policy(path, rules=other)
    message = str(err.value)
    assert "trained under other rules: target=41 (here 51):" in message
    assert "move_" not in message.split("expected")[0]  # only the keys that differ


def test_a_timed_tournament_takes_a_checkpoint(tmp_path: Path, capsys) -> None:
    path = _good(tmp_path)
    args = ["tournament", "--agents", f"neural:{path}", "random", "--move-hard-limit", "5",
            "--matches", "1", "--max-hands", "2", "--workers", "1", "--no-progress",
            "--bootstrap", "0", "--out", str(tmp_path / "t"), "--set", "rules={auto_claim: true}"]  # fmt: skip
    assert cli_main(args) == 0, capsys.readouterr().err
    assert "2 games played" in capsys.readouterr().out
