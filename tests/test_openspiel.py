"""400 as an OpenSpiel game: OpenSpiel's own checks (random simulations with
serialization, the playthrough file), the parameters, the strings and tensors from our
encoder, resampling for IS-MCTS, and both directions of play (our agents as pyspiel bots,
OpenSpiel's bots as our agents). Needs the ``openspiel`` extra; CI sets
FOURHUNDRED_REQUIRE_OPENSPIEL=1, which fails a skip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.requires import missing, require

require(
    missing(("pyspiel", "open_spiel"), "openspiel"),
    "FOURHUNDRED_REQUIRE_OPENSPIEL",
    "the OpenSpiel tests",
    module=True,
)

import pyspiel  # noqa: E402
from open_spiel.python.algorithms import generate_playthrough  # noqa: E402

from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.envs import openspiel as fo  # noqa: E402
from fourhundred_env.errors import FourHundredError, IllegalActionError  # noqa: E402
from fourhundred_env.observation import OBS_SIZE, encode_observation  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from tests.make_openspiel_playthrough import GAME, PATH  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def _random_play(state, rng: np.random.Generator, upto: int | None = None):
    """Play `state` with uniform chance and actions (to its end, or `upto` decisions)."""
    decisions = 0
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.integers(len(outcomes))][0])
        elif upto is not None and decisions >= upto:
            break
        else:
            legal = state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
            decisions += 1
    return state


@pytest.mark.parametrize(
    "game_string, sims",
    [
        ("fourhundred", 32),
        ("fourhundred(episode=hand,reward=hand_points,start_scores=35 12 -4 28)", 8),
        (
            "fourhundred(min_bid_base=1,min_bid_escalates=False,escalate_total=False,"
            "total_counted_in=points,score_table=pagat,five_six_face_value_from=-1,"
            "simultaneous_finish=highest_team_total)",
            8,
        ),
        ("fourhundred(episode=match,reward=match_result,max_hands=3)", 3),
    ],
)
def test_openspiel_random_simulations_with_serialization_pass(game_string, sims) -> None:
    game = pyspiel.load_game(game_string)
    pyspiel.random_sim_test(game, num_sims=sims, serialize=True, verbose=False)


def test_the_playthrough_file_is_what_openspiels_tool_generates_today() -> None:
    from absl import flags

    if not flags.FLAGS.is_parsed():
        flags.FLAGS.mark_as_parsed()
    original, regenerated = generate_playthrough.replay(str(PATH))
    assert original.splitlines()[0] == f"game: {GAME}"
    assert original == regenerated, (
        "the OpenSpiel playthrough changed: run tests/make_openspiel_playthrough.py and review "
        "the diff"
    )
    assert "Returns() = " in original and original.count("# Apply action") > 100


def test_parameters_are_the_rules_and_the_options() -> None:
    pagat = Rules.preset("pagat")
    game = fo.load_fourhundred(pagat, episode="match", reward="match_result", max_hands=7)
    assert game.rules == pagat and game.episode == "match" and game.max_hands == 7
    assert game.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    assert (game.min_utility(), game.max_utility()) == (-1.0, 1.0)
    assert game.get_parameters()["five_six_face_value_from"] == fo.THIRTY_OFF
    again = pyspiel.load_game(str(game))  # the game string names every parameter
    assert again.rules == pagat and again.max_hands == 7
    default = pyspiel.load_game("fourhundred")
    assert default.rules == Rules() and default.episode == "hand"
    assert default.num_distinct_actions() == 66 and default.max_game_length() == 56
    assert default.max_utility() == 80.0  # two made bids of 10+ (40 each) for the team
    for bad in ("fourhundred(episode=season)", "fourhundred(start_scores=1 2 3)",
                "fourhundred(start_dealer=4)", "fourhundred(min_bid_base=0)"):  # fmt: skip
        with pytest.raises(FourHundredError):
            pyspiel.load_game(bad)
    with pytest.raises(FourHundredError, match="option"):
        fo.game_parameters(Rules(), target=30)


def test_tensors_are_our_encoders_and_strings_hide_other_hands() -> None:
    game = pyspiel.load_game("fourhundred(start_dealer=2)")
    state = _random_play(game.new_initial_state(), np.random.default_rng(3), upto=9)
    assert state.current_player() >= 0
    engine = Engine(game.rules)
    for seat in range(4):
        view = seat_view(engine, state._state(), np.zeros(1, np.int64), seat)
        expected = encode_observation(view)[0]
        np.testing.assert_array_equal(np.array(state.observation_tensor(seat)), expected)
        np.testing.assert_array_equal(np.array(state.information_state_tensor(seat)), expected)
        assert len(expected) == OBS_SIZE
        info = state.information_state_string(seat)
        others = [state._records[0]["hand_set"][s] for s in range(4) if s != seat]
        for text in (info, state.observation_string(seat)):
            for hand in others:
                held = fo.hand_text(hand).split(" | ")[0]
                assert held not in text  # no other seat's cards (as a suit group)
    # the strings change with what the seat saw
    before = state.information_state_string(0)
    state.apply_action(state.legal_actions()[0])
    assert state.information_state_string(0) != before


def test_an_illegal_action_is_refused_as_the_engine_refuses_it() -> None:
    game = pyspiel.load_game("fourhundred(start_dealer=0)")
    state = _random_play(game.new_initial_state(), np.random.default_rng(1), upto=0)
    assert state.current_player() == 1  # the dealer's right bids first
    history = state.history()
    with pytest.raises(IllegalActionError, match="illegal action"):
        state.apply_action(0)  # a card, in the bidding
    assert state.history() == history and state.current_player() == 1


def test_returns_are_each_hands_points_and_the_match_result() -> None:
    rng = np.random.default_rng(11)
    for reward in ("hand_points", "team_points"):
        game = pyspiel.load_game(f"fourhundred(reward={reward})")
        state = _random_play(game.new_initial_state(), rng)
        points = [float(p) for p in state._records[0]["hand_points"]]
        team = [points[s] + points[(s + 2) % 4] for s in range(4)]
        assert state.returns() == (points if reward == "hand_points" else team)
    game = pyspiel.load_game("fourhundred(episode=match,reward=match_result,max_hands=4)")
    state = _random_play(game.new_initial_state(), rng)
    assert state.returns() in ([0.0] * 4, [1.0, -1.0] * 2, [-1.0, 1.0] * 2)
    assert state._hands <= 4


def test_same_seed_same_game_and_resampling_keeps_what_the_seat_saw() -> None:
    game = pyspiel.load_game("fourhundred(episode=match,max_hands=2)")
    a = _random_play(game.new_initial_state(), np.random.default_rng(5), upto=70)
    b = _random_play(game.new_initial_state(), np.random.default_rng(5), upto=70)
    assert a.history() == b.history()
    player = a.current_player()
    assert player >= 0
    uniforms = iter(np.random.default_rng(2).random(50))
    worlds = [a.resample_from_infostate(player, lambda: next(uniforms)) for _ in range(12)]
    seen = set()
    for world in worlds:
        assert world.information_state_string(player) == a.information_state_string(player)
        assert world.legal_actions() == a.legal_actions()
        r, w = a._records[0], world._records[0]
        assert r["hand_set"][player] == w["hand_set"][player]
        for seat in range(4):  # every seat keeps its count and the suits it showed void in
            assert int(w["hand_set"][seat]).bit_count() == int(r["hand_set"][seat]).bit_count()
            for suit in range(4):
                if r["shown_void"][seat] >> suit & 1:
                    assert int(w["hand_set"][seat]) & int(fo.SUIT_SETS[suit]) == 0
        seen.add(tuple(int(h) for h in w["hand_set"]))
        again = pyspiel.load_game(str(game)).deserialize_state(world.serialize())
        assert again.history() == world.history()
    assert len(seen) > 1  # the hidden cards do move between worlds


def test_deal_by_counting_keeps_every_void_when_shuffles_fail() -> None:
    rng = np.random.default_rng(0)
    unseen = fo._FULL & ~int(fo.SUIT_SETS[3])  # no hearts left to deal
    counts = [0, 13, 13, 13]
    voids = [0, 0b0011, 0b0101, 0b0110]  # each seat void in two of the three suits
    hands = fo._deal_by_suits(np.array(fo.set_to_cards(unseen)), counts, voids, rng)
    assert (
        sum(int(h).bit_count() for h in hands) == 39 and (hands[1] | hands[2] | hands[3]) == unseen
    )
    for seat in (1, 2, 3):
        for suit in range(4):
            if voids[seat] >> suit & 1:
                assert hands[seat] & int(fo.SUIT_SETS[suit]) == 0


def test_openspiels_mcts_bot_plays_a_one_hand_game() -> None:
    """One hand (and a match's result) pays only at its end, so the game type says TERMINAL
    and OpenSpiel's MCTSBot (which requires it) searches it; a match paid hand by hand keeps
    REWARDS, which MCTSBot refuses as before."""
    from open_spiel.python.algorithms import mcts

    terminal, rewards = pyspiel.GameType.RewardModel.TERMINAL, pyspiel.GameType.RewardModel.REWARDS
    assert pyspiel.load_game("fourhundred").get_type().reward_model == terminal
    match_result = pyspiel.load_game("fourhundred(episode=match,reward=match_result)")
    assert match_result.get_type().reward_model == terminal
    assert match_result.get_type().utility == pyspiel.GameType.Utility.ZERO_SUM
    per_hand = pyspiel.load_game("fourhundred(episode=match,max_hands=3)")
    assert per_hand.get_type().reward_model == rewards
    with pytest.raises(ValueError, match="terminal rewards"):
        mcts.MCTSBot(per_hand, 2.0, 4, mcts.RandomRolloutEvaluator(1, np.random.RandomState(0)))

    game = pyspiel.load_game("fourhundred(start_dealer=1)")
    rng = np.random.RandomState(3)
    bot = mcts.MCTSBot(
        game, 2.0, 6, mcts.RandomRolloutEvaluator(1, rng), random_state=np.random.RandomState(4)
    )
    state, decisions = game.new_initial_state(), 0
    while decisions < 3:
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.randint(len(outcomes))][0])
            continue
        action = bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
        decisions += 1
    assert state.history_str().count(" ") > 52  # the deal, then the bot's three bids


# -- both directions of play ---------------------------------------------------------------------
def test_evaluate_bots_plays_our_agents_against_openspiels_ismcts() -> None:
    from open_spiel.python.algorithms import evaluate_bots

    from fourhundred_agents.libraries.openspiel import AgentBot, ismcts_bot

    game = pyspiel.load_game("fourhundred(start_dealer=1)")
    make = ismcts_bot(simulations=6, uct_c=2.0, rollouts=1, final_policy="max_visit_count")

    def play(seed: int) -> list[float]:
        bots = [
            make(game, 0, seed),
            AgentBot("heuristic-v1", 1),
            make(game, 2, seed + 1),
            AgentBot("random", 3, seed=seed),
        ]
        return evaluate_bots.evaluate_bots(
            game.new_initial_state(), bots, np.random.RandomState(seed)
        )

    returns = play(4)
    assert returns == play(4)  # same seeds, same game
    assert returns[0] == returns[2] and returns[1] == returns[3]  # team points
    with pytest.raises(FourHundredError, match="seat"):
        AgentBot("heuristic-v1", 0).step(game.new_initial_state())  # a chance node
    with pytest.raises(FourHundredError, match="expected a state of 'fourhundred'"):
        AgentBot("heuristic-v1", 0).step(pyspiel.load_game("kuhn_poker").new_initial_state())


def test_openspiel_agents_play_legal_moves_replayably() -> None:
    from fourhundred_agents.registry import make_agent
    from fourhundred_env.table import Table

    def hand(spec: str, seed: int) -> tuple[list[int], tuple[int, ...]]:
        agents = [make_agent(spec if s % 2 == 0 else "heuristic-v1", Rules(), s) for s in range(4)]
        table, actions = Table(seed=seed, scores=(12, 31, -4, 27)), []
        table.deal(seed=seed)
        while table.phase in ("bid", "play"):
            view = seat_view(table.engine, table.state, np.zeros(1, np.int64), table.to_play)
            action = int(agents[table.to_play].act(view)[0])
            assert view.legal_mask[0, action]
            table.act(action)
            actions.append(action)
        return actions, table.scores

    for spec in ("openspiel:random", "openspiel:ismcts,simulations=4",
                 "openspiel:ismcts,simulations=4,rollout=heuristic-v1"):  # fmt: skip
        assert hand(spec, 5) == hand(spec, 5)
    assert make_agent("openspiel:ismcts").replayable


def test_openspiel_specs_are_checked_in_one_line() -> None:
    from fourhundred_agents.registry import make_agent

    for spec, words in [
        ("openspiel:mcts", "bot"),
        ("openspiel:ismcts,simulations=0", "simulations"),
        ("openspiel:ismcts,uct_c=-1", "uct_c"),
        ("openspiel:ismcts,depth=3", "depth"),
        ("openspiel:ismcts,rollout=nosuchbot", "nosuchbot"),
        ("openspiel:ismcts,rollout=cmd:python bot.py", "not a program"),
    ]:
        with pytest.raises(FourHundredError, match=words) as e:  # ConfigError, or unknown bot
            make_agent(spec)
        assert "\n" not in str(e.value)


def test_openspiel_ismcts_enters_a_tournament(tmp_path: Path) -> None:
    import sqlite3

    from fourhundred_tournament.config import load_config
    from fourhundred_tournament.tournament import run_tournament

    spec = "openspiel:ismcts,simulations=3"
    cfg = load_config(None, dict(
        agents=[spec, "heuristic-v1"], matches=1, seed=1, workers=1, max_hands=2,
        out_dir=str(tmp_path), progress=False, bootstrap=20, table_batch=2,
    ))  # fmt: skip
    assert spec not in cfg.isolated_agents()  # a bundled bot: it plays in this process
    summary = run_tournament(cfg)
    assert summary.games_played == 2
    con = sqlite3.connect(cfg.db_path)
    teams = {t for row in con.execute("SELECT team0, team1 FROM matches") for t in row}
    assert teams == {spec, "heuristic-v1"}


def test_agent_rollouts_value_a_position_by_the_hand_our_agent_plays_out() -> None:
    from fourhundred_agents.libraries.openspiel import AgentRolloutEvaluator
    from fourhundred_agents.registry import make_agent

    for episode in ("hand", "match"):
        game = pyspiel.load_game(f"fourhundred(episode={episode},max_hands=1,start_dealer=0)")
        state = _random_play(game.new_initial_state(), np.random.default_rng(2), upto=0)
        evaluator = AgentRolloutEvaluator(make_agent("heuristic-v1"), 2, np.random.RandomState(0))
        value = evaluator.evaluate(state)
        # heuristic-v1 at every seat plays one hand: the value is that hand's team points
        copy = state.clone()
        while not copy.is_terminal():
            view = seat_view(game.engine, copy._state(), np.zeros(1, np.int64))
            copy.apply_action(int(make_agent("heuristic-v1").act(view)[0]))
        np.testing.assert_array_equal(value, copy.returns())
        assert sum(p for _, p in evaluator.prior(state)) == pytest.approx(1.0)
