"""A newcomer's mistakes caught where they are made (issue 70): a command refused for a typo
in an agent, a missing model file or a device this machine lacks makes no output folder; an
override's error names the override as it was written on the command line and offers the
closest keys; unknown names (agents, configs, choices, devices) get "did you mean"; `train`
offers training configs only; `gym.make` refuses a bad opponent when the env is made."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from fourhundred_cli import main
from fourhundred_env.errors import ConfigError, FourHundredError, did_you_mean


def _one_error_line(capsys) -> str:
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fourhundred: error: "), err
    assert "games played" not in out and "run folder" not in out
    return lines[0]


@pytest.mark.parametrize(
    "agent, expected",
    [
        ("heuristc", "did you mean 'heuristic'"),
        ("neural:no/such/model.pt", "does not exist"),
        ("neural:agents/pretrained/exit.pt,device=cuda:7", "device 'cuda:7' is not available"),
    ],
)
def test_a_refused_tournament_makes_no_out_folder(
    agent: str, expected: str, tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.chdir(Path(__file__).resolve().parents[1])  # agents/pretrained/exit.pt
    out = tmp_path / "deep" / "out"
    argv = ["tournament", "--agents", agent, "random", "--matches", "1", "--no-progress"]
    assert main([*argv, "--out", str(out)]) == 2
    assert expected in _one_error_line(capsys)
    assert not (tmp_path / "deep").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["ladder", "add", "heuristc", "random", "--db", "{dir}/l/ladder.sqlite", "--matches",
         "1", "--no-progress", "--out", "{dir}/out"],
        ["bid-eval", "heuristc", "--report", "--deals", "1", "--matches", "0", "--out",
         "{dir}/out"],
    ],
)  # fmt: skip
def test_other_commands_refused_for_a_typo_make_no_folder(
    argv: list[str], tmp_path: Path, capsys
) -> None:
    assert main([a.replace("{dir}", str(tmp_path)) for a in argv]) == 2
    assert "did you mean 'heuristic'" in _one_error_line(capsys)
    assert list(tmp_path.iterdir()) == []


def test_a_tournament_still_makes_its_folder_when_it_runs(tmp_path: Path, capsys) -> None:
    out = tmp_path / "a" / "b"
    argv = ["tournament", "--agents", "random", "minbid", "--matches", "1", "--max-hands", "2"]
    assert main([*argv, "--no-progress", "--deals", "public", "--out", str(out)]) == 0
    assert (out / "results.sqlite").is_file()


def test_a_file_where_the_out_folder_would_go_is_still_refused(tmp_path: Path, capsys) -> None:
    (tmp_path / "afile").write_text("mine")
    argv = ["tournament", "--agents", "random", "minbid", "--matches", "1"]
    assert main([*argv, "--out", str(tmp_path / "afile" / "out")]) == 2
    assert "expected a writable folder" in _one_error_line(capsys)
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize(
    "override, expected",
    [
        ("total_decision=1000",
         "total_decision=1000 (command line): unknown key 'total_decision': did you mean "
         "'total_decisions'?"),
        ("num_tables=x", "num_tables=x (command line): num_tables='x': expected an integer"),
        ("device=mps", "device=mps (command line): device='mps': expected 'auto'"),
        ("mode=sefplay", "mode=sefplay (command line): mode='sefplay': expected one of "
         "'selfplay', 'bidding'; did you mean 'selfplay'?"),
    ],
)  # fmt: skip
def test_an_override_is_blamed_on_the_command_line(
    override: str, expected: str, tmp_path: Path, capsys
) -> None:
    pytest.importorskip("torch")
    assert main(["train", "tiny", override, f"runs_dir={tmp_path}", "--no-eval"]) == 2
    line = _one_error_line(capsys)
    assert expected in line
    assert "tiny.yaml" not in line and "'anneal_lr'" not in line  # no file, no 60-key list
    assert list(tmp_path.iterdir()) == []


def test_a_key_misspelt_in_a_file_is_blamed_on_the_file(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from fourhundred_train.config import load_config

    mine = tmp_path / "mine.yaml"
    mine.write_text("total_decision: 1000\n")
    with pytest.raises(
        ConfigError, match=r"mine.yaml: unknown key.*did you mean 'total_decisions'"
    ):
        load_config(mine)


def test_train_offers_training_configs_only(capsys) -> None:
    pytest.importorskip("torch")
    assert main(["train", "tinyy"]) == 2
    line = _one_error_line(capsys)
    assert "did you mean 'tiny'?" in line and "'selfplay'" in line
    assert "tournament" not in line


def test_a_tournament_config_name_suggests_tournament_configs(capsys) -> None:
    assert main(["tournament", "--config", "defualt"]) == 2
    line = _one_error_line(capsys)
    assert "did you mean 'default'?" in line and "'tiny'" not in line


def test_did_you_mean_offers_the_closest_or_nothing() -> None:
    assert (
        did_you_mean("heuristc", ["random", "heuristic", "minbid"]) == "did you mean 'heuristic'?"
    )
    assert did_you_mean("xyz", ["random", "heuristic"]) == ""
    assert did_you_mean("cud", ["cpu", "cuda", "auto"]) == "did you mean 'cuda'?"


@pytest.mark.parametrize(
    "options, expected",
    [
        (
            {"opponents": "heuristc"},
            r"opponents \(seat 1\): unknown agent 'heuristc': did you mean",
        ),
        ({"opponents": ("random", "random", "random:nosuch=1", "random")}, "seat 2"),
        ({"opponents": "neural:any.pt,device=gpu"}, "device='gpu'"),
    ],
)
def test_gym_make_refuses_a_bad_opponent(options: dict, expected: str) -> None:
    gym = pytest.importorskip("gymnasium")
    import fourhundred_env.envs  # noqa: F401  (registers the environments)

    if "neural" in str(options["opponents"]):
        pytest.importorskip("torch")
    with pytest.raises(FourHundredError, match=expected):
        gym.make("FourHundred-v0", **options)


def test_gym_make_refuses_a_device_this_machine_lacks(monkeypatch) -> None:
    gym = pytest.importorskip("gymnasium")
    pytest.importorskip("torch")
    import fourhundred_env.envs  # noqa: F401
    from fourhundred_agents.neural import device

    monkeypatch.setattr(device, "devices_present", lambda: ["cpu"])
    with pytest.raises(FourHundredError, match="device 'cuda:3' is not available"):
        gym.make("FourHundred-v0", opponents="neural:any.pt,device=cuda:3")


def test_device_auto_logs_what_it_chose_once(monkeypatch, caplog) -> None:
    pytest.importorskip("torch")
    from fourhundred_agents.neural import device

    monkeypatch.setattr(device, "_told", set())
    monkeypatch.setattr(device, "devices_present", lambda: ["cpu"])
    with caplog.at_level(logging.INFO, logger=device.__name__):
        assert str(device.torch_device("auto")) == "cpu"
        assert str(device.torch_device("auto")) == "cpu"
    said = [r.getMessage() for r in caplog.records if r.name == device.__name__]
    assert said == ["device=auto chose cpu (no CUDA GPU found)"]
