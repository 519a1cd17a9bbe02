"""FourHundredBid-v0: one bid per episode, single and natively batched."""

from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from gymnasium.vector import AutoresetMode

import fourhundred_env.envs  # noqa: F401 - registers the ids
from fourhundred_env import FourHundredError, Phase, Rules
from fourhundred_env.cards import BID_OFFSET, NUM_CARDS, REDEAL_ACTION
from fourhundred_env.envs import FourHundredBidEnv, FourHundredBidVectorEnv
from fourhundred_env.envs.vector import sample_legal_actions
from fourhundred_env.observation import decode_observation
from tests.envs_common import pick_actions


def test_check_env_passes_without_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(gym.make("FourHundredBid-v0").unwrapped)  # defaults: illegal bids end it
        check_env(gym.make("FourHundredBid-v0", illegal_action="penalize").unwrapped)


def test_an_illegal_bid_ends_the_episode_by_default_and_raise_stays_an_option() -> None:
    env = gym.make("FourHundredBid-v0")
    assert env.unwrapped.config.illegal_action == "end"
    obs, _ = env.reset(seed=5)
    assert (
        env.get_wrapper_attr("action_masks")().tolist() == obs["action_mask"].astype(bool).tolist()
    )
    _, reward, terminated, _, info = env.step(0)  # a card, not a bid
    assert (reward, terminated, info["illegal_action"], info["outcome"]) == (-1.0, True, True, -1)
    raising = FourHundredBidEnv(illegal_action="raise")
    raising.reset(seed=5)
    with pytest.raises(FourHundredError, match="illegal"):
        raising.step(0)
    assert FourHundredBidVectorEnv(2).config.illegal_action == "raise"


def test_one_bid_per_episode_rewarded_with_the_hand_points() -> None:
    env = gym.make("FourHundredBid-v0")
    driver = env.unwrapped.driver
    rng = np.random.default_rng(0)
    outcomes = {"played": 0, "thrown_in": 0}
    positions = set()
    obs, info = env.reset(seed=0)
    for _ in range(150):
        facts = decode_observation(obs["observation"])
        assert facts["phase"] == Phase.BID and info["seat"] == 0 and facts["to_play"] == 0
        positions.add(facts["dealer"])
        legal = np.flatnonzero(obs["action_mask"])
        assert legal.min() >= NUM_CARDS and len(facts["hand"]) == 13
        assert facts["bids"][0] == 0  # the learner has not bid; earlier seats may have
        bids = legal[legal != REDEAL_ACTION]
        action = int(bids[0] if rng.random() < 0.5 else rng.choice(bids))  # often the minimum
        obs, reward, terminated, truncated, info = env.step(action)
        assert terminated and not truncated
        state = driver.state
        assert state.bids[0, 0] == action - 51  # the learner's bid stands
        assert info["thrown_in"] == bool(state.thrown_in[0])
        if info["thrown_in"]:
            outcomes["thrown_in"] += 1
            assert reward == 0 and not info["seat_rewards"].any()
        else:
            outcomes["played"] += 1
            assert state.num_tricks[0] == 13 and state.hand_set[0, 0] == 0  # policy played it
            assert reward == state.hand_points[0, 0] == info["seat_rewards"][0]
            assert np.array_equal(info["seat_rewards"], state.hand_points[0])
        obs, info = env.reset()
    assert outcomes["played"] > 20 and outcomes["thrown_in"] > 10
    assert positions == {0, 1, 2, 3}  # the learner bids in every position


def test_team_reward_and_other_seat() -> None:
    env = FourHundredBidEnv(seat=3, reward="team_points", policy="random:3")
    obs, info = env.reset(seed=4)
    for _ in range(40):
        assert info["seat"] == 3
        legal = np.flatnonzero(obs["action_mask"])
        obs, reward, _terminated, _, info = env.step(int(legal[0]))
        sr = info["seat_rewards"]
        assert reward == sr[3] == sr[1] and sr[0] == sr[2]
        obs, info = env.reset()


def test_vector_env_same_step_by_default() -> None:
    env = gym.make_vec("FourHundredBid-v0", num_envs=64, vectorization_mode="vector_entry_point")
    assert isinstance(env, FourHundredBidVectorEnv)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert (info["seat"] == 0).all()
        assert (obs["action_mask"][:, :NUM_CARDS] == 0).all()
        obs, reward, terminated, truncated, info = env.step(
            sample_legal_actions(obs["action_mask"], rng)
        )
        assert terminated.all() and not truncated.any() and info["_final_obs"].all()
        final = [decode_observation(o) for o in info["final_obs"]["observation"]]
        assert all(f["phase"] in (Phase.HAND_OVER, Phase.MATCH_OVER) for f in final)
        assert np.array_equal(reward, info["seat_rewards"][:, 0])
        assert np.array_equal(info["thrown_in"], np.array([f["num_tricks"] == 0 for f in final]))
        new = [decode_observation(o) for o in obs["observation"]]
        assert all(f["phase"] == Phase.BID and len(f["hand"]) == 13 for f in new)


def test_vector_equals_single_per_table_with_a_deterministic_policy() -> None:
    """Deals and scores depend on the table seed only; with a deterministic policy, table i of
    a batch plays exactly as the single env seeded s + i."""
    vec = FourHundredBidVectorEnv(32, policy="envtest_lowest")
    singles = [FourHundredBidEnv(policy="envtest_lowest") for _ in (0, 1, 31)]
    obs, _ = vec.reset(seed=30)
    first = [s.reset(seed=30 + i)[0] for i, s in zip((0, 1, 31), singles, strict=True)]
    for step in range(20):
        actions = pick_actions(obs["action_mask"], step, np.arange(32))
        for i, o in zip((0, 1, 31), first, strict=True):
            assert np.array_equal(o["observation"], obs["observation"][i])
        obs, reward, _, _, info = vec.step(actions)
        for k, (i, single) in enumerate(zip((0, 1, 31), singles, strict=True)):
            _, r, terminated, _, single_info = single.step(int(actions[i]))
            assert terminated and r == reward[i]
            assert np.array_equal(single_info["seat_rewards"], info["seat_rewards"][i])
            first[k] = single.reset()[0]


def test_options_that_make_no_sense_are_refused() -> None:
    with pytest.raises(FourHundredError, match="episode"):
        FourHundredBidEnv(episode="match")
    with pytest.raises(FourHundredError, match="seat= and policy="):
        FourHundredBidEnv(learner_seats=(1,))
    with pytest.raises(FourHundredError, match="match_result"):
        FourHundredBidVectorEnv(2, reward="match_result")
    with pytest.raises(FourHundredError, match="seat"):
        FourHundredBidEnv(seat=4)


def test_pagat_rules() -> None:
    env = FourHundredBidEnv(rules=Rules.preset("pagat"))
    obs, _ = env.reset(seed=0)
    assert obs["action_mask"][52] == 1  # a bid of 1 is legal in the pagat preset
    _, _, terminated, _, _ = env.step(52)
    assert terminated


def test_the_step_that_ends_a_hand_says_how_it_ended() -> None:
    """info["bids"] and info["tricks_won"] (B, 4) by seat at the step a hand ended, copies
    kept after the same-step restart: the learner's own bid, 13 tricks in a played hand and
    none in one thrown in, and the points follow (a contract made scores, a missed one loses)."""
    env = FourHundredBidVectorEnv(64, policy="heuristic-v1")
    obs, info = env.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(4):
        actions = sample_legal_actions(obs["action_mask"], rng)
        obs, _, terminated, _, info = env.step(actions)
        assert terminated.all() and info["_bids"].all() and info["_tricks_won"].all()
        bids, tricks = info["bids"], info["tricks_won"]
        assert bids.dtype == tricks.dtype == np.int8 and bids.shape == tricks.shape == (64, 4)
        asked = np.where(actions == REDEAL_ACTION, 0, actions - BID_OFFSET)
        np.testing.assert_array_equal(bids[:, 0], asked)
        thrown = info["thrown_in"]
        np.testing.assert_array_equal(tricks.sum(1), np.where(thrown, 0, 13))
        points = info["seat_rewards"][~thrown]
        np.testing.assert_array_equal(points > 0, tricks[~thrown] >= bids[~thrown])
        assert (~thrown).sum() > 10 and (bids[~thrown] > 0).all()
