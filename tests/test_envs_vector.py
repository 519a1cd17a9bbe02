"""FourHundredVectorEnv: spaces, masks and rewards against an independent engine, autoreset
semantics step by step, determinism, batch equivalence, illegal actions, options."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from fourhundred_env import Engine, FourHundredError, IllegalActionError, Phase, Rules
from fourhundred_env.envs import EnvConfig, FourHundredVectorEnv, ScoreDistribution
from fourhundred_env.envs.vector import sample_legal_actions
from fourhundred_env.observation import (
    OBS_FIELDS,
    OBS_SCALE,
    OBS_SIZE,
    decode_observation,
    encode_observation,
)
from fourhundred_env.view import seat_view
from tests.envs_common import assert_same_data, pick_actions

PHASE = OBS_FIELDS["phase"].slice


def phase_of(obs: np.ndarray) -> np.ndarray:
    return np.argmax(obs[:, PHASE], axis=1)


def test_spaces_and_reset() -> None:
    env = FourHundredVectorEnv(6)
    assert env.metadata["autoreset_mode"] is AutoresetMode.NEXT_STEP
    assert env.single_action_space.n == 66
    assert env.action_space.shape == (6,)
    assert env.observation_space["observation"].shape == (6, OBS_SIZE)
    assert env.observation_space["action_mask"].dtype == np.int8
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    assert obs["observation"].dtype == np.float32 and obs["action_mask"].dtype == np.int8
    assert info["seat"].shape == (6,) and info["seat_rewards"].shape == (6, 4)
    assert (phase_of(obs["observation"]) == Phase.BID).all()
    # The first bidder sits on the dealer's right.
    dealer = np.array([decode_observation(o)["dealer"] for o in obs["observation"]])
    assert (dealer == 3).all()  # rel_seat of the dealer, seen from the first bidder


def test_masks_observations_and_rewards_match_an_independent_engine() -> None:
    """Replay the first match of every table on a bare engine from the documented deal stream
    (seed 0, the env's match ids): masks, seats, observations and rewards all agree, and the
    rewards add up to the engine's score changes."""
    b = 12
    env = FourHundredVectorEnv(b, max_hands=6)
    obs, info = env.reset(seed=11)
    engine = Engine(Rules())
    mirror = engine.init(b, seed=0, match_id=env.match_ids)
    engine.deal(mirror)
    tracking = np.ones(b, bool)
    totals = np.zeros((b, 4), np.float64)
    rng = np.random.default_rng(0)
    for _ in range(3000):
        t = np.flatnonzero(tracking)
        mask = engine.legal_mask(mirror)
        assert np.array_equal(obs["action_mask"][t].astype(bool), mask[t])
        assert np.array_equal(info["seat"][t], mirror.to_play[t])
        expected = encode_observation(seat_view(engine, mirror, t))
        assert np.array_equal(obs["observation"][t], expected)
        actions = sample_legal_actions(obs["action_mask"], rng)
        actor = mirror.to_play.copy()
        obs, reward, terminated, truncated, info = env.step(actions)
        engine.step(mirror, np.where(tracking, actions, -1))
        totals[t] += info["seat_rewards"][t]
        ended = tracking & (mirror.phase >= Phase.HAND_OVER)
        assert np.array_equal(
            info["seat_rewards"][t], np.where(ended, 1, 0)[t, None] * mirror.hand_points[t]
        )
        assert np.array_equal(reward[t], info["seat_rewards"][t, actor[t]])
        over = ended & ((mirror.phase == Phase.MATCH_OVER) | (mirror.hand_index >= 6))
        assert np.array_equal(terminated[t], (ended & (mirror.phase == Phase.MATCH_OVER))[t])
        assert np.array_equal(truncated[t], (over & (mirror.phase != Phase.MATCH_OVER))[t])
        assert np.array_equal(totals[over], mirror.scores[over])  # every point was rewarded
        tracking &= ~over
        again = np.flatnonzero(ended & tracking)
        if again.size:
            engine.deal(mirror, again)
        if not tracking.any():
            break
    assert not tracking.any()


def run(env: FourHundredVectorEnv, seed: int, steps: int, tables: np.ndarray) -> list:
    obs, info = env.reset(seed=seed)
    out = [(obs, info)]
    for step in range(steps):
        obs, *rest = env.step(pick_actions(obs["action_mask"], step, tables))
        out.append((obs, *rest))
    return out


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_same_seed_same_run_bit_for_bit(episode: str) -> None:
    tables = np.arange(5)
    a = run(FourHundredVectorEnv(5, episode=episode, max_hands=3), 7, 250, tables)
    b = run(FourHundredVectorEnv(5, episode=episode, max_hands=3), 7, 250, tables)
    for x, y in zip(a, b, strict=True):
        for u, v in zip(x, y, strict=True):
            assert_same_data(u, v)
    # The same env reset with the same seed again replays it too.
    env = FourHundredVectorEnv(5, episode=episode, max_hands=3)
    run(env, 99, 40, tables)
    c = run(env, 7, 250, tables)
    assert all(
        np.array_equal(x[0]["observation"], y[0]["observation"]) for x, y in zip(a, c, strict=True)
    )
    d = run(FourHundredVectorEnv(5, episode=episode, max_hands=3), 8, 5, tables)
    assert not np.array_equal(a[0][0]["observation"], d[0][0]["observation"])


@pytest.mark.parametrize("episode", ["hand", "match"])
def test_table_i_of_a_batch_of_512_equals_seed_plus_i_alone(episode: str) -> None:
    steps = 130
    big = run(FourHundredVectorEnv(512, episode=episode, max_hands=2), 40, steps, np.arange(512))
    for i in (0, 1, 257, 511):
        alone = run(
            FourHundredVectorEnv(1, episode=episode, max_hands=2), 40 + i, steps, np.array([i])
        )
        for k, (x, y) in enumerate(zip(big, alone, strict=True)):
            obs_x, obs_y = x[0], y[0]
            assert np.array_equal(obs_x["observation"][i], obs_y["observation"][0]), (i, k)
            assert np.array_equal(obs_x["action_mask"][i], obs_y["action_mask"][0]), (i, k)
            info_x, info_y = x[-1], y[-1]
            assert np.array_equal(info_x["seat_rewards"][i], info_y["seat_rewards"][0])
            assert info_x["seat"][i] == info_y["seat"][0]
            if k:
                for j in (1, 2, 3):  # reward, terminated, truncated
                    assert x[j][i] == y[j][0], (i, k, j)
    ended = sum(int(x[2].sum() + x[3].sum()) for x in big[1:])
    assert ended > 100  # several episodes per table went through autoreset


def drive_until_end(env: FourHundredVectorEnv, obs: dict, rng: np.random.Generator):
    """Step random legal actions until an episode ends; returns the step and the seats that
    acted at it."""
    seats = env.driver.obs_seats()
    for _ in range(2000):
        actions = sample_legal_actions(obs["action_mask"], rng)
        obs, reward, terminated, truncated, info = env.step(actions)
        if (terminated | truncated).any():
            return obs, reward, terminated, truncated, info, seats
        seats = info["seat"]
    raise AssertionError("no episode ended")


def test_next_step_autoreset_step_by_step() -> None:
    env = FourHundredVectorEnv(3, episode="hand")
    obs, _ = env.reset(seed=5)
    rng = np.random.default_rng(1)
    ids = env.match_ids
    obs, reward, terminated, truncated, info, actors = drive_until_end(env, obs, rng)
    i = int(np.flatnonzero(terminated)[0])
    assert not truncated.any()
    # The terminal step: the final position from the last actor's seat; nothing is legal, so
    # the mask marks the one action the restarting step ignores (never an all-0 row).
    assert obs["action_mask"][i].tolist() == [1] + [0] * 65
    assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
    assert phase_of(obs["observation"])[i] in (Phase.HAND_OVER, Phase.MATCH_OVER)
    assert info["seat"][i] == actors[i]
    assert reward[i] == info["seat_rewards"][i, actors[i]]
    live = np.flatnonzero(~terminated)
    assert (obs["action_mask"][live].sum(axis=1) > 0).all()
    # The next step restarts table i: its action (even an illegal one) is ignored.
    actions = sample_legal_actions(obs["action_mask"], rng)
    actions[i] = 999
    obs2, reward2, terminated2, truncated2, info2 = env.step(actions)
    assert reward2[i] == 0 and not terminated2[i] and not truncated2[i]
    assert (info2["seat_rewards"][i] == 0).all()
    facts = decode_observation(obs2["observation"][i])
    assert facts["phase"] == Phase.BID and facts["num_tricks"] == 0 and len(facts["hand"]) == 13
    assert obs2["action_mask"][i].sum() > 0
    assert env.match_ids[i] == ids[i] + 1  # the table's next episode
    # A third step plays table i again normally.
    obs3, *_ = env.step(sample_legal_actions(obs2["action_mask"], rng))
    assert not np.array_equal(obs3["observation"][i], obs2["observation"][i])


def test_same_step_autoreset_matches_next_step() -> None:
    """SAME_STEP gives in one step what NEXT_STEP gives in two: final obs in info, the new
    episode's first observation in obs."""
    same = FourHundredVectorEnv(1, episode="hand", autoreset_mode="same_step")
    nxt = FourHundredVectorEnv(1, episode="hand")
    assert same.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    o_same, _ = same.reset(seed=2)
    o_next, _ = nxt.reset(seed=2)
    endings = 0
    for step in range(400):
        actions = pick_actions(o_next["action_mask"], step, np.zeros(1))
        o_same, r_s, te_s, tr_s, i_s = same.step(actions)
        o_next, r_n, te_n, tr_n, i_n = nxt.step(actions)
        assert (r_s[0], te_s[0], tr_s[0]) == (r_n[0], te_n[0], tr_n[0])
        assert np.array_equal(i_s["seat_rewards"], i_n["seat_rewards"])
        if te_n[0]:
            endings += 1
            assert i_s["_final_obs"][0] and i_s["_final_info"][0]
            assert_same_data(
                {k: v[0] for k, v in i_s["final_obs"].items()}, {k: v[0] for k, v in o_next.items()}
            )
            assert i_s["final_info"]["seat"][0] == i_n["seat"][0]
            o_next, r_n, te_n, *_ = nxt.step(np.array([0]))  # NEXT_STEP's reset step
            assert r_n[0] == 0 and not te_n[0]
        else:
            assert "final_obs" not in i_s
        assert_same_data(o_same, o_next)
    assert endings >= 4


def test_disabled_autoreset_and_reset_mask() -> None:
    env = FourHundredVectorEnv(4, episode="hand", autoreset_mode=AutoresetMode.DISABLED)
    obs, _ = env.reset(seed=9)
    rng = np.random.default_rng(2)
    obs, _, terminated, _, _, _ = drive_until_end(env, obs, rng)
    with pytest.raises(IllegalActionError, match="reset_mask"):
        env.step(sample_legal_actions(obs["action_mask"], rng))
    before = {k: v.copy() for k, v in obs.items()}
    obs, _info = env.reset(options={"reset_mask": terminated})
    keep = ~terminated
    assert np.array_equal(obs["observation"][keep], before["observation"][keep])
    assert (phase_of(obs["observation"][terminated]) == Phase.BID).all()
    env.step(sample_legal_actions(obs["action_mask"], rng))  # all live again
    with pytest.raises(FourHundredError, match="reset_mask"):
        env.reset(options={"reset_mask": np.ones(3, bool)})
    with pytest.raises(FourHundredError, match="no seed with the mask"):
        env.reset(seed=1, options={"reset_mask": np.ones(4, bool)})


def test_illegal_actions_raise_and_change_nothing() -> None:
    env = FourHundredVectorEnv(4)
    obs, _ = env.reset(seed=1)
    bad = pick_actions(obs["action_mask"], 0, np.arange(4))
    bad[2] = 3  # a card during the bidding
    with pytest.raises(IllegalActionError, match="table 2"):
        env.step(bad)
    with pytest.raises(IllegalActionError, match="expected"):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(IllegalActionError, match="integers"):
        env.step(np.zeros(4, np.float32))
    fresh = FourHundredVectorEnv(4)
    fresh.reset(seed=1)
    good = pick_actions(obs["action_mask"], 0, np.arange(4))
    assert_same_data(env.step(good)[0], fresh.step(good)[0])


def test_penalize_mode() -> None:
    env = FourHundredVectorEnv(4, illegal_action="penalize", illegal_penalty=-2.5)
    obs, info = env.reset(seed=1)
    seats = info["seat"].copy()
    actions = pick_actions(obs["action_mask"], 0, np.arange(4))
    actions[[0, 3]] = [3, 70]  # a card while bidding; not an action at all
    obs2, reward, _terminated, _truncated, info2 = env.step(actions)
    assert info2["illegal_action"].tolist() == [True, False, False, True]
    assert reward.tolist() == [-2.5, 0, 0, -2.5]
    assert info2["seat_rewards"][0, seats[0]] == -2.5
    assert (info2["seat"] == (seats + 1) % 4).all()  # a legal bid was made in their place
    bids = [decode_observation(o)["bids"][3] for o in obs2["observation"]]
    assert all(b > 0 for b in bids)  # the seat to the left of each viewer has bid


def test_reward_modes() -> None:
    tables = np.arange(6)
    kw = {"episode": "hand", "hand_scores": None}
    own = run(FourHundredVectorEnv(6, **kw), 4, 300, tables)
    team = run(FourHundredVectorEnv(6, reward="team_points", **kw), 4, 300, tables)
    scored = 0
    for x, y in zip(own[1:], team[1:], strict=True):
        points, team_points = x[-1]["seat_rewards"], y[-1]["seat_rewards"]
        assert np.array_equal(team_points, points + points[:, [2, 3, 0, 1]])
        scored += int((points != 0).any(axis=1).sum())
    assert scored > 10
    # Match results: a low target so that random matches end.
    env = FourHundredVectorEnv(8, reward="match_result", rules=Rules(target=10), max_hands=50)
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    wins = 0
    for _ in range(1500):
        actions = sample_legal_actions(obs["action_mask"], rng)
        bid3 = obs["action_mask"][:, 54] == 1
        actions[bid3] = 54  # everyone bids 3 where allowed: hands get played, matches end
        obs, _reward, terminated, _truncated, info = env.step(actions)
        sr = info["seat_rewards"]
        assert set(np.unique(sr)) <= {-1.0, 0.0, 1.0}
        assert np.array_equal(sr != 0, np.repeat(terminated[:, None], 4, axis=1))
        assert (sr.sum(axis=1) == 0).all() and (sr[:, 0] == sr[:, 2]).all()
        wins += int(terminated.sum())
    assert wins > 5


def test_hand_scores_distribution() -> None:
    dist = ScoreDistribution(low=-10, high=50, zero_prob=0.0)
    env = FourHundredVectorEnv(200, episode="hand", hand_scores=dist)
    _, _ = env.reset(seed=0)
    state = env.driver.state
    scores = state.scores_before
    assert scores.min() >= -10 and scores.max() <= 50 and (scores >= 41).any()
    engine = env.driver.engine
    winner, target = engine.end_of_game(scores, np.full(200, 41))
    assert (winner < 0).all() and (target == 41).all()  # no team had already won
    assert np.array_equal(state.min_bid, np.clip(scores // 10, 2, 13))
    assert np.array_equal(state.required_total, 11 + np.maximum(0, scores.max(axis=1) // 10 - 2))
    env = FourHundredVectorEnv(400, episode="hand")  # default: -20..45, 20% from zero
    env.reset(seed=0)
    scores = env.driver.state.scores_before
    zero = (scores == 0).all(axis=1).mean()
    assert 0.1 < zero < 0.3 and scores.min() >= -20 and scores.max() <= 45
    assert (scores >= 30).any(axis=1).mean() > 0.2  # the thirty rule and raised totals occur
    with pytest.raises(FourHundredError, match="already won"):
        FourHundredVectorEnv(1, episode="hand", hand_scores=(41, 60))


def test_max_hands_truncation() -> None:
    env = FourHundredVectorEnv(4, max_hands=2)
    out = run(env, 1, 400, np.arange(4))
    truncations = sum(int(x[3].sum()) for x in out[1:])
    assert truncations > 0
    for _obs, _reward, terminated, truncated, _info in out[1:]:
        assert not (terminated & truncated).any()


def test_learner_seat_and_opponents() -> None:
    env = FourHundredVectorEnv(8, learner_seats=(1,), opponents="random")
    assert env.driver.agent_seats == (0, 2, 3)
    agents = env.driver.agents
    obs, info = env.reset(seed=0)
    assert len({id(a) for a in env.driver.agents.values()}) == 3 and agents is not env.driver.agents
    rng = np.random.default_rng(0)
    for _ in range(300):
        assert (info["seat"] == 1).all()
        obs, reward, _, _, info = env.step(sample_legal_actions(obs["action_mask"], rng))
        assert np.array_equal(reward, info["seat_rewards"][:, 1])
    partners = FourHundredVectorEnv(8, learner_seats=(0, 2), episode="hand")
    obs, info = partners.reset(seed=0)
    for _ in range(300):
        assert np.isin(info["seat"], (0, 2)).all()
        obs, reward, _terminated, _truncated, info = partners.step(
            sample_legal_actions(obs["action_mask"], rng)
        )
        assert np.array_equal(reward, info["seat_rewards"][:, 0] + info["seat_rewards"][:, 2])


def test_learner_mode_batch_equivalence_with_deterministic_opponents() -> None:
    """Opponents play inside step while the learner's tables wait; with a deterministic
    opponent, table i of a batch equals seed s + i alone."""
    kw = {"learner_seats": (3,), "opponents": "envtest_lowest", "max_hands": 3}
    big = run(FourHundredVectorEnv(64, **kw), 70, 150, np.arange(64))
    for i in (0, 33, 63):
        alone = run(FourHundredVectorEnv(1, **kw), 70 + i, 150, np.array([i]))
        for x, y in zip(big, alone, strict=True):
            assert np.array_equal(x[0]["observation"][i], y[0]["observation"][0])
            assert np.array_equal(x[-1]["seat_rewards"][i], y[-1]["seat_rewards"][0])
            assert x[-1]["seat"][i] == y[-1]["seat"][0] == 3


def test_config_errors_name_what_was_given() -> None:
    with pytest.raises(FourHundredError, match="colour"):
        FourHundredVectorEnv(2, colour="red")
    with pytest.raises(FourHundredError, match="episode='set'"):
        FourHundredVectorEnv(2, episode="set")
    with pytest.raises(FourHundredError, match="partnership"):
        FourHundredVectorEnv(2, learner_seats=(0, 1))
    with pytest.raises(FourHundredError, match="num_envs"):
        FourHundredVectorEnv(0)
    with pytest.raises(FourHundredError, match="autoreset_mode"):
        FourHundredVectorEnv(2, autoreset_mode="sometimes")
    assert EnvConfig(rules="pagat").rules == Rules.preset("pagat")
    assert EnvConfig(hand_scores=(0, 10)).hand_scores == ScoreDistribution(0, 10)
    with pytest.raises(FourHundredError, match="step"):
        FourHundredVectorEnv(2).step(np.zeros(2, np.int64))


def test_sample_legal_actions_is_uniform_over_the_mask() -> None:
    rng = np.random.default_rng(0)
    mask = np.zeros((3, 66), np.int8)
    mask[0, [4, 9, 51]] = 1
    mask[1, [53, 60, 64, 65]] = 1
    counts = np.zeros((3, 66))
    for _ in range(3000):
        a = sample_legal_actions(mask, rng)
        counts[np.arange(3), a] += 1
    assert set(np.flatnonzero(counts[0])) == {4, 9, 51}
    assert set(np.flatnonzero(counts[1])) == {53, 60, 64, 65}
    assert counts[2, 0] == 3000  # no legal action: 0, as Discrete.sample does
    assert counts[0, [4, 9, 51]].min() > 900 and counts[1, [53, 60, 64, 65]].min() > 650


def test_copy_false_reuses_one_observation_buffer() -> None:
    fast = FourHundredVectorEnv(6, copy=False)
    ref = FourHundredVectorEnv(6)
    o_fast, _ = fast.reset(seed=4)
    o_ref, _ = ref.reset(seed=4)
    buffer = o_fast["observation"]
    for step in range(50):
        assert o_fast["observation"] is buffer
        assert_same_data(o_fast, o_ref)
        actions = pick_actions(o_ref["action_mask"], step, np.arange(6))
        o_fast, *_ = fast.step(actions)
        o_ref, *_ = ref.step(actions)
    assert o_ref["observation"] is not run(ref, 4, 1, np.arange(6))[1][0]["observation"]


def test_int8_observations_are_the_float32_ones_unscaled() -> None:
    raw = FourHundredVectorEnv(5, observation_dtype="int8", episode="hand")
    ref = FourHundredVectorEnv(5, episode="hand")
    assert raw.single_observation_space["observation"].dtype == np.int8
    o_raw, _ = raw.reset(seed=2)
    o_ref, _ = ref.reset(seed=2)
    for step in range(120):
        assert o_raw in raw.observation_space
        assert np.array_equal(o_raw["observation"] * OBS_SCALE, o_ref["observation"])
        actions = pick_actions(o_ref["action_mask"], step, np.arange(5))
        o_raw, *_ = raw.step(actions)
        o_ref, *_ = ref.step(actions)


def test_render_ansi_and_rgb_array() -> None:
    env = FourHundredVectorEnv(2, render_mode="ansi")
    env.reset(seed=0)
    frames = env.render()
    assert isinstance(frames, tuple) and len(frames) == 2 and "hand S" in frames[0]
    assert FourHundredVectorEnv(1).render() is None
    env = FourHundredVectorEnv(2, render_mode="rgb_array")
    env.reset(seed=0)
    pictures = env.render()
    assert len(pictures) == 2 and all(p.dtype == np.uint8 and p.shape[2] == 3 for p in pictures)
    assert not np.array_equal(pictures[0], pictures[1])  # two tables, two deals


@pytest.mark.parametrize(
    ("mode", "options"),
    [
        ("next_step", {"max_hands": 2}),
        ("next_step", {"episode": "hand", "learner_seats": 1, "opponents": "heuristic"}),
        ("same_step", {"episode": "hand", "illegal_action": "end"}),
        ("same_step", {"max_hands": 3, "learner_seats": (0, 2), "illegal_action": "end"}),
    ],
)
def test_no_mask_row_is_ever_all_zero(mode: str, options: dict) -> None:
    """Thousands of random steps (some illegal, under "end"): every row of every mask (the
    observations', action_masks()', the final observations') allows an action, so a masked
    softmax never sees an all -inf row."""
    env = FourHundredVectorEnv(16, autoreset_mode=mode, **options)
    obs, _ = env.reset(seed=6)
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(300):
        assert obs["action_mask"].any(axis=1).all()
        assert np.array_equal(env.action_masks(), obs["action_mask"].astype(bool))
        actions = sample_legal_actions(obs["action_mask"], rng)
        if options.get("illegal_action") == "end":
            wrong = rng.random(16) < 0.01
            actions[wrong] = 65 - actions[wrong]  # mostly illegal
        obs, _, terminated, truncated, info = env.step(actions)
        ended += int((terminated | truncated).sum())
        if "final_obs" in info:
            assert info["final_obs"]["action_mask"].any(axis=1).all()
    assert ended >= 16


def test_info_has_gymnasiums_key_masks_and_rewards_are_float64() -> None:
    env = FourHundredVectorEnv(8, episode="hand", learner_seats=0, illegal_action="end")
    obs, info = env.reset(seed=1)
    assert info["_seat"].all() and info["_seat_rewards"].all()
    rng = np.random.default_rng(0)
    seen_end = False
    restart = np.zeros(8, bool)
    for _ in range(200):
        obs, reward, terminated, truncated, info = env.step(
            sample_legal_actions(obs["action_mask"], rng)
        )
        assert reward.dtype == np.float64
        for key in info:
            if not key.startswith("_"):
                assert info[f"_{key}"].dtype == np.bool_, key
        assert info["_seat"].all() and info["_seat_rewards"].all()
        # step-only keys are absent at the tables that restarted (NEXT_STEP's reset step)
        assert np.array_equal(info.get("_thrown_in", np.zeros(8, bool)), ~restart)
        ended = terminated | truncated
        if ended.any():
            seen_end = True
            assert np.array_equal(info["_outcome"], ended)
            assert np.array_equal(info["_points"], ended)
            assert (info["points"][ended] == reward[ended]).all()  # one hand: its points
            assert (info["outcome"][~ended] == 0).all()
        else:
            assert "outcome" not in info
        restart = ended
    assert seen_end


def test_an_illegal_action_ends_only_that_tables_episode() -> None:
    env = FourHundredVectorEnv(4, learner_seats=(0,), illegal_action="end", illegal_penalty=-7)
    obs, _ = env.reset(seed=3)
    before = env.state.records.copy()
    actions = pick_actions(obs["action_mask"], 0, np.arange(4))
    actions[1] = 3  # a card while bidding
    obs, reward, terminated, truncated, info = env.step(actions)
    assert terminated.tolist() == [False, True, False, False] and not truncated.any()
    assert reward[1] == -7 and info["illegal_action"].tolist() == [False, True, False, False]
    assert info["outcome"][1] == -1 and info["_outcome"].tolist() == [False, True, False, False]
    assert np.array_equal(env.state.records[1], before[1])  # that table untouched
    assert not np.array_equal(env.state.records[0], before[0])  # the others played on
    assert obs["action_mask"][1].tolist() == [1] + [0] * 65
