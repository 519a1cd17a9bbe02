"""fourhundred installed beside a user's own code: from a working folder that holds the user's own
``agents.py``, ``agents/__init__.py``, ``train.py`` and ``tournament.py`` (the most common layout
of RL projects), every entry point works and none of the user's modules is imported.

Each user module raises on import, so that importing one (instead of ours) fails loudly.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.web import serve_command

BIN = Path(sys.executable).parent
TIMEOUT = 600
LOUD = "raise RuntimeError(\"the user's own {} was imported instead of fourhundred's\")\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    here = tmp_path_factory.mktemp("users_project")
    (here / "agents").mkdir()
    (here / "agents" / "__init__.py").write_text(LOUD.format("agents/"))
    (here / "agents.py").write_text(LOUD.format("agents.py"))
    (here / "train.py").write_text(LOUD.format("train.py"))
    (here / "tournament.py").write_text(LOUD.format("tournament.py"))
    return here


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    out = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, f"{argv[:3]}...: {out.stderr[-3000:]}"
    assert "was imported instead" not in out.stderr
    return out


def _python(code: str, cwd: Path) -> str:
    return _run([sys.executable, "-c", textwrap.dedent(code)], cwd).stdout


def test_the_users_modules_are_what_their_names_import(folder: Path) -> None:
    """The folder is what it claims to be: there, `import agents` is the user's."""
    out = subprocess.run([sys.executable, "-c", "import agents"], cwd=folder,
                         capture_output=True, text=True, timeout=TIMEOUT)  # fmt: skip
    assert out.returncode != 0 and "the user's own agents/ was imported" in out.stderr


def test_gym_make_with_bot_opponents(folder: Path) -> None:
    out = _python(
        """
        import gymnasium as gym
        import numpy as np
        import fourhundred_env.envs

        for spec in ("heuristic-v1", "neural:agents/pretrained/exit.pt"):
            env = gym.make("FourHundred-v0", opponents=spec, episode="hand")
            obs, info = env.reset(seed=0)
            for _ in range(20):
                action = int(np.flatnonzero(obs["action_mask"])[0])
                obs, reward, terminated, truncated, info = env.step(action)
                if terminated or truncated:
                    obs, info = env.reset()
            env.close()
        print("played")
        """,
        folder,
    )
    assert out.strip() == "played"


def test_the_pettingzoo_env_with_bots(folder: Path) -> None:
    """The AEC loop with our bots in every seat (a bundled network at seat 0, heuristic-v1 at
    1-3), each fed its seat's view, over a few hands: at least one is played to the end."""
    out = _python(
        """
        from fourhundred_agents import make_agent
        from fourhundred_env.envs.pettingzoo_env import env as make_env
        from fourhundred_env.view import seat_view

        aec = make_env(episode="hand")
        played = 0
        for seed in range(6):
            aec.reset(seed=seed)
            driver = aec.unwrapped.driver
            rules = driver.engine.rules
            bots = [make_agent("neural:agents/pretrained/exit.pt", rules, seed=seed),
                    *(make_agent("heuristic-v1", rules, seed=seed + i) for i in (1, 2, 3))]
            steps = 0
            for name in aec.agent_iter():
                obs, reward, terminated, truncated, info = aec.last()
                assert not info.get("illegal_action")
                seat = aec.possible_agents.index(name)
                action = None
                if not (terminated or truncated):
                    action = int(bots[seat].act(seat_view(driver.engine, driver.state, seat=seat))[0])
                aec.step(action)
                steps += 1
            played += steps >= 4 + 52  # four bids and 52 cards: not thrown in
        print(played)
        """,
        folder,
    )
    assert int(out.strip()) >= 1


def test_a_tournament_of_heuristic_v1_and_a_bundled_network(folder: Path) -> None:
    out = _run(
        [str(BIN / "fourhundred"), "tournament", "--agents", "heuristic-v1",
         "neural:agents/pretrained/exit.pt", "--matches", "1", "--max-hands", "4",
         "--workers", "2", "--deals", "public", "--out", "t", "--no-progress"],
        folder,
    )  # fmt: skip
    assert "neural:agents/pretrained/exit.pt" in out.stdout
    assert json.loads((folder / "t" / "report.json").read_text())


def test_train_tiny(folder: Path) -> None:
    _run(
        [str(BIN / "fourhundred"), "train", "tiny", "total_decisions=1024", "runs_dir=runs",
         "--no-eval"],
        folder,
    )  # fmt: skip
    assert list((folder / "runs").glob("tiny__1__*/policy.pt"))


def test_python_m_the_cli(folder: Path) -> None:
    out = _run([sys.executable, "-m", "fourhundred_cli", "--version"], folder)
    assert out.stdout.strip()


def test_serve_answers_its_page(folder: Path) -> None:
    bodies = serve_command([str(BIN / "fourhundred"), "serve"], folder, ["/", "/api/options"])
    assert b"<html" in bodies["/"].lower()
    assert b"exit.pt" in bodies["/api/options"]  # the bundled networks among the bots
