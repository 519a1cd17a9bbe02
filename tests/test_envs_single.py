"""FourHundred-v0: the Gymnasium checker, registration, opponents through the agent registry,
determinism, and the single env being the vector env with one table."""

from __future__ import annotations

import warnings
from typing import ClassVar

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import fourhundred_env.envs  # noqa: F401 - registers the ids
from fourhundred_agents import register_agent
from fourhundred_agents.draws import sample_masked
from fourhundred_agents.protocol import Agent
from fourhundred_env import FourHundredError, IllegalActionError
from fourhundred_env.envs import FourHundredEnv, FourHundredVectorEnv
from fourhundred_env.view import SeatView
from tests.envs_common import assert_same_data, pick_actions


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"episode": "hand", "observation_dtype": "int8"},
        {"learner_seats": (1, 3), "reward": "team_points"},
    ],
)
def test_check_env_passes_without_warnings(options: dict) -> None:
    # check_env steps unmasked random actions: the default illegal_action="end" takes them.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("FourHundred-v0", **options).unwrapped)
        check_env(gym.make("FourHundred-v0", illegal_action="penalize", **options).unwrapped)


def play_episode(env: gym.Env, seed: int, max_steps: int = 5000) -> list[tuple]:
    obs, info = env.reset(seed=seed)
    steps = [(obs, info)]
    for step in range(max_steps):
        action = int(pick_actions(obs["action_mask"][None], step, np.zeros(1))[0])
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((obs, reward, terminated, truncated, info))
        if terminated or truncated:
            return steps
    raise AssertionError("episode did not end")


def test_make_defaults_and_an_episode() -> None:
    env = gym.make("FourHundred-v0", max_hands=3)
    assert env.unwrapped.config.learner_seats == (0,)
    assert env.unwrapped.config.opponents == ("random",) * 4
    steps = play_episode(env, seed=0)
    obs, info = steps[0]
    assert obs in env.observation_space and info["seat"] == 0
    total = np.zeros(4)
    for obs, reward, terminated, _, info in steps[1:]:
        assert obs in env.observation_space
        assert isinstance(reward, float) and isinstance(terminated, bool)
        assert info["seat"] == 0 and reward == info["seat_rewards"][0]
        total += info["seat_rewards"]
    driver = env.unwrapped.driver
    assert np.array_equal(total, driver.state.scores[0])  # all points of the match, every seat
    assert terminated or steps[-1][3]
    with pytest.raises(IllegalActionError, match="reset"):
        env.step(0)


def test_same_seed_same_episode_and_seeds_differ() -> None:
    a = play_episode(gym.make("FourHundred-v0", episode="hand"), seed=5)
    b = play_episode(gym.make("FourHundred-v0", episode="hand"), seed=5)
    assert len(a) == len(b)
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            assert_same_data(u, v)
    c = play_episode(gym.make("FourHundred-v0", episode="hand"), seed=6)
    assert not np.array_equal(a[0][0]["observation"], c[0][0]["observation"])


def test_single_env_is_the_vector_env_with_one_table() -> None:
    single = FourHundredEnv(episode="hand", learner_seats=(2,))
    vec = FourHundredVectorEnv(1, episode="hand", learner_seats=(2,))
    o1, i1 = single.reset(seed=3)
    o2, i2 = vec.reset(seed=3)
    for step in range(200):
        assert np.array_equal(o1["observation"], o2["observation"][0])
        assert np.array_equal(o1["action_mask"], o2["action_mask"][0])
        a = pick_actions(o2["action_mask"], step, np.zeros(1))
        o1, r1, t1, u1, i1 = single.step(int(a[0]))
        o2, r2, t2, u2, i2 = vec.step(a)
        assert (r1, t1, u1, i1["seat"]) == (r2[0], t2[0], u2[0], i2["seat"][0])
        if t1 or u1:
            o1, i1 = single.reset()
            o2, *_ = vec.step(np.zeros(1, np.int64))  # the vector env's autoreset step


class SpyAgent(Agent):
    """Records what it is shown; plays uniformly random legal actions."""

    name = "envtest_spy"
    seen: ClassVar[list[tuple[int, SeatView]]] = []

    def act(self, view: SeatView) -> np.ndarray:
        SpyAgent.seen.append((id(self), view))
        return sample_masked(view.legal_mask, self.rng)


register_agent("envtest_spy", lambda rules, seed, arg: SpyAgent(rules, seed))


def test_opponents_come_from_the_registry_one_instance_per_seat_own_view_only() -> None:
    SpyAgent.seen.clear()
    env = gym.make("FourHundred-v0", opponents="envtest_spy", episode="hand")
    obs, _ = env.reset(seed=1)
    driver = env.unwrapped.driver
    instances = {seat: id(agent) for seat, agent in driver.agents.items()}
    assert sorted(instances) == [1, 2, 3] and len(set(instances.values())) == 3
    for step in range(60):
        action = int(pick_actions(obs["action_mask"][None], step, np.zeros(1))[0])
        obs, _reward, terminated, _truncated, _info = env.step(action)
        if terminated:
            break
    assert terminated and SpyAgent.seen
    dealt = driver.state.dealt_set[0]
    for instance, view in SpyAgent.seen:
        seat = int(view.seat[0])
        assert (view.seat == seat).all() and instances[seat] == instance
        assert (view.to_play == seat).all() and view.legal_mask.any()
        others = np.bitwise_or.reduce(np.delete(dealt, seat))
        assert (view.hand_set & ~dealt[seat] == 0).all()  # its own cards ...
        assert (view.hand_set & others == 0).all()  # ... and nobody else's


def test_partnership_and_per_seat_opponents() -> None:
    env = gym.make(
        "FourHundred-v0",
        learner_seats=(0, 2),
        opponents=("random", "random:2", "random", "random:any"),
        episode="hand",
    )
    steps = play_episode(env, seed=2)
    seats = {s[-1]["seat"] for s in steps}
    assert seats <= {0, 2} and len(seats) == 2
    for _, reward, _, _, info in steps[1:]:
        assert reward == info["seat_rewards"][0] + info["seat_rewards"][2]


class WrongAgent(Agent):
    """Always plays action 0 (a card, even while bidding)."""

    def act(self, view: SeatView) -> np.ndarray:
        return np.zeros(view.size, np.int64)


register_agent("envtest_wrong", lambda rules, seed, arg: WrongAgent(rules, seed))


def test_an_illegal_opponent_is_named() -> None:
    env = FourHundredEnv(opponents="envtest_wrong")
    with pytest.raises(IllegalActionError, match=r"opponent agent.*envtest_wrong"):
        env.reset(seed=0)
        for _ in range(5):
            env.step(int(np.flatnonzero(env.driver.engine.legal_mask(env.driver.state)[0])[0]))


def test_errors() -> None:
    env = FourHundredEnv()
    with pytest.raises(FourHundredError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="integer"):
        env.step(1.5)
    raising = FourHundredEnv(illegal_action="raise")
    raising.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal action"):
        raising.step(0)  # a card during the bidding
    with pytest.raises(FourHundredError, match="unknown agent"):
        FourHundredEnv(opponents="nobody").reset(seed=0)
    with pytest.raises(FourHundredError, match=r"render_mode='rgb'.*'rgb_array'"):
        FourHundredEnv(render_mode="rgb")


def test_an_illegal_action_ends_the_episode_and_leaves_the_table_as_it_was() -> None:
    env = gym.make("FourHundred-v0", illegal_penalty=-5.0)
    obs, _ = env.reset(seed=2)
    for step in range(3):  # a few legal decisions first
        obs, *_ = env.step(int(pick_actions(obs["action_mask"][None], step, np.zeros(1))[0]))
    before = env.unwrapped.driver.state.records.copy()
    illegal = int(np.flatnonzero(obs["action_mask"] == 0)[0])
    obs, reward, terminated, truncated, info = env.step(illegal)
    assert (reward, terminated, truncated) == (-5.0, True, False)
    assert info["illegal_action"] is True and info["outcome"] == -1 and not info["is_success"]
    assert info["seat_rewards"].tolist() == [-5.0, 0.0, 0.0, 0.0]
    assert np.array_equal(env.unwrapped.driver.state.records, before)  # untouched
    assert obs["action_mask"].tolist() == [1] + [0] * 65  # the finished table's marker
    with pytest.raises(IllegalActionError, match="reset"):
        env.step(0)
    obs, info = env.reset()
    _, _, terminated, _, info = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert info.get("illegal_action") is False


@pytest.mark.parametrize("env_id", ["FourHundred-v0", "FourHundredBid-v0"])
def test_action_masks_on_what_gym_make_returns(env_id: str) -> None:
    """The issue's call: ``model.predict(obs, action_masks=env.action_masks())`` on gym.make's
    env (Gymnasium 1.x wrappers forward no attributes, so gym.make must not wrap it)."""
    env = gym.make(env_id)
    obs, _ = env.reset(seed=2)
    assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    with pytest.raises(FourHundredError, match="before reset"):
        gym.make(env_id).step(0)


def test_action_masks_through_wrappers_of_ones_own() -> None:
    env = gym.wrappers.RecordEpisodeStatistics(gym.make("FourHundred-v0", max_hands=2))
    assert isinstance(env, gym.Wrapper) and not hasattr(env, "action_masks")
    masks = env.get_wrapper_attr("action_masks")
    obs, _ = env.reset(seed=4)
    for step in range(2000):
        mask = masks()
        assert mask.dtype == np.bool_ and mask.shape == (66,) and mask.any()
        assert np.array_equal(mask, obs["action_mask"].astype(bool))
        obs, _, terminated, truncated, _ = env.step(
            int(pick_actions(obs["action_mask"][None], step, np.zeros(1))[0])
        )
        if terminated or truncated:
            assert masks().tolist() == [True] + [False] * 65
            break
    else:
        raise AssertionError("episode did not end")


def test_results_in_info_when_a_hand_episode_ends() -> None:
    env = gym.make("FourHundred-v0", episode="hand", opponents="heuristic")
    outcomes = set()
    for seed in range(30):
        steps = play_episode(env, seed)
        assert all("outcome" not in s[-1] for s in steps[:-1])  # only at the end
        info = steps[-1][-1]
        ret = sum(s[1] for s in steps[1:])
        seat_points = sum(s[-1]["seat_rewards"] for s in steps[1:])
        team_diff = seat_points[0] + seat_points[2] - seat_points[1] - seat_points[3]
        assert info["points"] == ret
        assert info["outcome"] == np.sign(team_diff) and info["is_success"] == (team_diff > 0)
        played = not info["thrown_in"]
        assert info["contracts_bid"] == played and info["contracts_made"] == (played and ret > 0)
        outcomes.add(int(info["outcome"]))
    assert outcomes == {-1, 0, 1}


def test_results_in_info_when_a_match_ends() -> None:
    env = gym.make("FourHundred-v0", opponents="heuristic", max_hands=60)
    for seed in range(3):
        steps = play_episode(env, seed)
        _, _, terminated, _, info = steps[-1]
        state = env.unwrapped.driver.state
        assert terminated and state.winner[0] >= 0
        assert info["outcome"] == (1 if state.winner[0] == 0 else -1)
        assert info["points"] == sum(s[1] for s in steps[1:]) == state.scores[0, 0]
        assert 0 <= info["contracts_made"] <= info["contracts_bid"] <= state.hand_index[0]
    drawn = play_episode(gym.make("FourHundred-v0", max_hands=1), 0)[-1]
    assert drawn[3] and drawn[-1]["outcome"] == 0 and not drawn[-1]["is_success"]


def test_render_ansi_shows_the_learners_hand_only() -> None:
    env = gym.make("FourHundred-v0", render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "hand S0" in text and "hand S1" not in text
    assert gym.make("FourHundred-v0").unwrapped.render() is None


def test_render_rgb_array_draws_the_table(tmp_path) -> None:
    env = gym.make("FourHundred-v0", render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    first = env.render()
    assert isinstance(first, np.ndarray) and first.dtype == np.uint8
    assert first.ndim == 3 and first.shape[2] == 3 and first.shape[:2] == (640, 960)
    assert len(np.unique(first.reshape(-1, 3), axis=0)) > 20  # cards and text, not a blank
    for step in range(6):
        obs, *_ = env.step(int(pick_actions(obs["action_mask"][None], step, np.zeros(1))[0]))
    later = env.render()
    assert later.shape == first.shape and not np.array_equal(later, first)
    from PIL import Image

    Image.fromarray(later).save(tmp_path / "table.png")  # the picture, to look at by hand
    assert (tmp_path / "table.png").stat().st_size > 5000


def test_render_human_prints_the_table(capsys) -> None:
    env = gym.make("FourHundred-v0", render_mode="human")
    obs, _ = env.reset(seed=0)
    assert "hand S0" in capsys.readouterr().out
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert env.render() is None and "hand S0" in capsys.readouterr().out


def test_opponents_can_be_factories_as_well_as_specs() -> None:
    from tests.envs_common import LowestAgent

    by_spec = FourHundredEnv(opponents="envtest_lowest", max_hands=3)
    by_factory = FourHundredEnv(opponents=lambda rules, seed: LowestAgent(rules, seed), max_hands=3)
    a, _ = by_spec.reset(seed=8)
    b, _ = by_factory.reset(seed=8)
    for step in range(60):
        assert_same_data(a, b, f"step {step}")
        action = int(np.flatnonzero(a["action_mask"])[0])
        a, r1, t1, u1, _ = by_spec.step(action)
        b, r2, t2, u2, _ = by_factory.step(action)
        assert (r1, t1, u1) == (r2, t2, u2)
        if t1 or u1:
            break
    with pytest.raises(FourHundredError, match="opponents="):
        FourHundredEnv(opponents=(3, 4, 5, 6))
