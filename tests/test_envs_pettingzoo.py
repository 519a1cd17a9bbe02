"""The PettingZoo AEC environment: api_test, seed_test, rewards and masks."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from pettingzoo.test import api_test, seed_test

from fourhundred_env import FourHundredError, IllegalActionError
from fourhundred_env.envs.pettingzoo_env import AGENTS, env, raw_env

# api_test warns about every environment whose observations are dicts, unless PettingZoo
# lists it by name; these two warnings say only that (the action mask must be in a dict).
DICT_OBSERVATION_WARNINGS = (
    "Observation space for each agent probably should be",
    "Observation is not a NumPy array",
)


def run_api_test(aec: object, cycles: int) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        api_test(aec, num_cycles=cycles)
    unexpected = [
        str(w.message)
        for w in caught
        if not str(w.message).startswith(DICT_OBSERVATION_WARNINGS)
        and "all zeros (no legal actions)" not in str(w.message)  # after the game ends
    ]
    assert not unexpected, unexpected


@pytest.mark.parametrize(
    "options", [{}, {"episode": "hand", "observation_dtype": "int8"}, {"max_hands": 2}]
)
def test_api_test(options: dict) -> None:
    run_api_test(env(**options), cycles=400)


def test_seed_test() -> None:
    seed_test(lambda: env(max_hands=3), num_cycles=300)
    seed_test(lambda: env(episode="hand", illegal_action="penalize"), num_cycles=100)


def play(aec: raw_env, seed: int) -> tuple[dict[str, float], int]:
    aec.reset(seed=seed)
    totals = dict.fromkeys(AGENTS, 0.0)
    rng = np.random.default_rng(seed)
    steps = 0
    for agent in aec.agent_iter(20000):
        obs, reward, terminated, truncated, _info = aec.last()
        totals[agent] += reward
        if terminated or truncated:
            action = None
        else:
            assert obs["action_mask"].any()
            for other in AGENTS:
                if other != agent:
                    assert not aec.observe(other)["action_mask"].any()
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            steps += 1
        aec.step(action)
    return totals, steps


def test_rewards_add_up_to_the_engine_score_changes() -> None:
    aec = raw_env(max_hands=4)
    totals, steps = play(aec, seed=2)
    state = aec.driver.state
    assert steps > 100
    assert [totals[a] for a in AGENTS] == state.scores[0].tolist()
    aec = raw_env(episode="hand", reward="team_points")
    totals, _ = play(aec, seed=3)
    points = aec.driver.state.hand_points[0]
    assert [totals[a] for a in AGENTS] == (points + points[[2, 3, 0, 1]]).tolist()


def test_masks_equal_the_engines_and_illegal_actions() -> None:
    aec = raw_env(illegal_action="raise")
    aec.reset(seed=0)
    driver = aec.driver
    for _ in range(60):
        agent = aec.agent_selection
        mask = aec.observe(agent)["action_mask"]
        assert agent == AGENTS[int(driver.state.to_play[0])]
        assert np.array_equal(mask.astype(bool), driver.engine.legal_mask(driver.state)[0])
        aec.step(int(np.flatnonzero(mask)[-1]))
    illegal = int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError):
        aec.step(illegal)
    penalized = raw_env(illegal_action="penalize", illegal_penalty=-3)
    penalized.reset(seed=0)
    agent = penalized.agent_selection
    penalized.step(0)  # a card while bidding
    assert penalized.rewards[agent] == -3 and penalized.infos[agent]["illegal_action"]
    assert penalized.agent_selection != agent


def test_every_seat_is_an_agent() -> None:
    with pytest.raises(FourHundredError, match="every seat"):
        raw_env(learner_seats=(0,))


def test_render_follows_pettingzoos_conventions(capsys) -> None:
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=0)
    text = aec.render()
    assert isinstance(text, str) and all(f"hand S{s}" in text for s in range(4))
    human = raw_env(render_mode="human")
    human.reset(seed=0)
    human.step(int(np.flatnonzero(human.observe(human.agent_selection)["action_mask"])[0]))
    assert "hand S0" in capsys.readouterr().out  # step draws it
    assert human.render() is None and "hand S3" in capsys.readouterr().out
    pictures = raw_env(render_mode="rgb_array")
    pictures.reset(seed=0)
    image = pictures.render()
    assert image.dtype == np.uint8 and image.ndim == 3 and image.shape[2] == 3


def test_an_illegal_action_ends_the_game_by_default_as_in_classic_environments() -> None:
    assert raw_env().config.illegal_action == "end"
    aec = raw_env(illegal_penalty=-2)
    aec.reset(seed=1)
    agent = aec.agent_selection
    before = aec.driver.state.records.copy()
    aec.step(0)  # a card while bidding
    assert all(aec.terminations.values()) and not any(aec.truncations.values())
    assert aec.rewards == {a: (-2.0 if a == agent else 0.0) for a in AGENTS}
    assert aec.infos[agent]["illegal_action"] and np.array_equal(aec.driver.state.records, before)
