"""Your own bid features for PPO bidding (``features=package.module:function``), the fitted-Q
bidder's hook (agents/neural/extra_features.py) with its contract: the columns of the bidding
seat's view are appended to the policy's input at every learner bid, stored with the rollout
and read back by the update; a run with them trains, is the same for the same seed, resumes,
records only the function's name and width, and its checkpoint bids with
``neural-bid:PATH,features=SPEC`` and is refused without them; a feature function that does
not answer is one line before any work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.neural.agent import net_inputs  # noqa: E402
from fourhundred_agents.neural.network import NetConfig  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.configs import load_yaml  # noqa: E402
from fourhundred_env.errors import FourHundredError  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.config import ConfigError, load_config  # noqa: E402
from fourhundred_train.network import masked_logits  # noqa: E402
from fourhundred_train.ppo import Trainer  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = f"{ROOT / 'examples' / 'bid_features.py'}:honours_and_partner"
TINY_BID = [
    "mode=bidding", "num_tables=64", "rollout_steps=8", "total_decisions=1024", "hidden=32",
    "layers=1", "eval_every=0", "checkpoint_every=1", "num_minibatches=2", "update_epochs=1",
    "play_policy=heuristic-v1", "learner_partnership=true", "match_value_points=40",
    "reward=match_value", "teacher=heuristic-v1", "kickstart_coef=1.0",
]  # fmt: skip
OTHERS = """
import numpy as np

def seat_and_cards(view):  # what the test reads back: the view's seat and hand size
    return np.stack([view.seat, np.bitwise_count(view.hand_set)], axis=1)

def honours_and_partner(view):  # the example's name, another width
    return np.zeros((view.size, 2))

def wrong(view):
    return np.zeros(view.size)

def fails(view):
    return 1 / 0

def nan(view):
    return np.full((view.size, 1), np.nan)
"""


@pytest.fixture
def others(tmp_path: Path) -> Path:
    path = tmp_path / "others.py"
    path.write_text(textwrap.dedent(OTHERS))
    return path


def _trainer(run: Path, *overrides: str, resume: bool = False) -> Trainer:
    return Trainer(load_config(None, [*TINY_BID, *overrides]), run, resume=resume)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, Trainer]:
    """A tiny PPO bidding run with the example's features: its folder and trainer."""
    run = tmp_path_factory.mktemp("ppo_feat") / "run"
    trainer = _trainer(run, f"features={EXAMPLE}")
    trainer.train(progress=False)
    return run, trainer


def test_the_rollout_stores_the_bidding_seats_features_and_the_update_reads_them(
    others: Path, tmp_path: Path
) -> None:
    trainer = _trainer(tmp_path / "run", f"features={others}:seat_and_cards")
    assert trainer.net.trunk[0].weight.shape[1] == NetConfig().obs_size + 2
    r = trainer.collect()
    assert r.extra.shape == (*r.action.shape, 2) and r.extra.dtype == np.float32
    np.testing.assert_array_equal(r.extra[:, :, 0], r.seat)  # the acting seat's own view
    assert (r.extra[:, :, 1] == 13).all()  # at a bid: all 13 cards in hand
    batch = trainer.batch(r)
    flat = r.extra.reshape(-1, 2)[batch.index]
    np.testing.assert_array_equal(batch.extra.numpy(), flat)  # stored, not worked out again
    with torch.no_grad():  # the update's inputs are the rollout's: the same probabilities
        logits, _ = trainer.net(batch.obs, batch.extra)
        logp = torch.log_softmax(masked_logits(logits, batch.mask), -1)
        logp = logp.gather(1, batch.action[:, None]).squeeze(1)
        torch.testing.assert_close(logp, batch.logp, rtol=0, atol=1e-5)
        other, _ = trainer.net(batch.obs, torch.zeros_like(batch.extra))
    assert not torch.equal(logits, other)  # and the policy reads them


def test_a_run_with_features_records_their_name_and_width_only(trained) -> None:
    run, trainer = trained
    data = torch.load(run / "policy.pt", weights_only=True)
    assert data["net"]["extra_inputs"] == 3
    assert data["extra"]["features"] == {"name": "honours_and_partner", "spec": EXAMPLE,
                                         "size": 3}  # fmt: skip
    assert load_yaml(run / "config.yaml")["features"] == EXAMPLE
    assert trainer.history and all(np.isfinite(h["losses/policy_loss"]) for h in trainer.history)


def test_the_checkpoint_bids_with_features_named_again(trained) -> None:
    run, _ = trained
    path = run / "policy.pt"
    agent = make_agent(f"neural-bid:{path},features={EXAMPLE}", Rules(), 0)
    assert agent.name == f"neural-bid:{path},features={EXAMPLE}"
    engine = Engine()
    state = engine.init(32, seed=4)
    engine.deal(state)
    view = seat_view(engine, state)
    bids = agent.act(view)
    assert view.legal_mask[np.arange(32), bids].all()
    composed = make_agent(
        f"compose:bid=neural:{path},features={EXAMPLE},play=heuristic-v1", Rules(), 0
    )
    np.testing.assert_array_equal(composed.act(view), bids)
    net = agent.bidder.net
    obs, extra = (torch.from_numpy(x) for x in net_inputs(net, view, Rules()))
    with torch.no_grad():  # the played network reads the features too
        assert not torch.equal(net(obs, extra)[0], net(obs, torch.zeros_like(extra))[0])


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("neural-bid:{path}", "trained with bid features 'honours_and_partner' (3 input(s)"),
        ("compose:bid=neural:{path},play=heuristic-v1", "expected them named again"),
        ("neural-bid:{path},features={tmp}/others.py:honours_and_partner", "giving 2 column"),
    ],
)
def test_the_checkpoint_is_refused_without_its_features_or_with_others(
    trained, spec: str, said: str, others: Path
) -> None:
    spec = spec.format(path=trained[0] / "policy.pt", tmp=others.parent)
    with pytest.raises(FourHundredError) as e:
        make_agent(spec, Rules(), 0)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_evaluate_run_plays_the_run_with_its_features_named_again(trained, capsys) -> None:
    """evaluate-run plays a PPO bidding run's policy.pt as neural-bid:, with the features
    named again by --features: it never takes them from the run's config (a file names no
    code that is run), and is refused in one line without them."""
    run = str(trained[0])
    code = main(["evaluate-run", run, "--matches", "1", "--workers", "1"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "expected them named again, --features" in err
    code = main(["evaluate-run", run, "--matches", "1", "--workers", "1",
                 "--features", EXAMPLE])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and f"neural-bid:{run}/policy.pt,features={EXAMPLE} against" in out, out


def test_evaluate_run_refuses_features_for_a_run_without_them(tmp_path: Path, capsys) -> None:
    _trainer(tmp_path / "run", "total_decisions=512").train(progress=False)
    code = main(["evaluate-run", str(tmp_path / "run"), "--features", EXAMPLE])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "trained without bid features" in err, err


def test_same_seed_same_weights_with_features_and_a_resume_goes_on_exactly(
    trained, tmp_path: Path
) -> None:
    straight = trained[1]
    again = _trainer(tmp_path / "a", f"features={EXAMPLE}")
    again.train(progress=False)
    for a, b in zip(straight.params, again.params, strict=True):
        assert torch.equal(a, b)
    _trainer(tmp_path / "b", f"features={EXAMPLE}").train(progress=False, stop_at=1)
    resumed = _trainer(tmp_path / "b", f"features={EXAMPLE}", resume=True)
    resumed.train(progress=False)
    for a, b in zip(straight.params, resumed.params, strict=True):
        assert torch.equal(a, b)
    other = _trainer(tmp_path / "c", f"features={EXAMPLE}", "seed=2")
    other.train(progress=False)
    assert any(not torch.equal(a, b) for a, b in zip(straight.params, other.params, strict=True))


def test_a_resume_with_other_features_is_refused(trained, others: Path, tmp_path: Path) -> None:
    run = tmp_path / "run"
    _trainer(run, f"features={EXAMPLE}").train(progress=False, stop_at=1)
    with pytest.raises(FourHundredError, match=r"giving 2 column.*goes on with its own"):
        _trainer(run, f"features={others}:honours_and_partner", resume=True)


def test_the_runs_own_evaluations_play_it_with_its_features(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path / "run", f"features={EXAMPLE}", "total_decisions=512",
                       "eval_every=1", "eval_matches=1", "eval_bid_deals=1")  # fmt: skip
    from fourhundred_train.evaluate import make_evaluator

    (row,) = trainer.train(make_evaluator(trainer.config, tmp_path / "run"), progress=False)
    assert np.isfinite(row["eval/bid_dwin_pp"]) and "eval/win_rate" in row


@pytest.mark.parametrize(
    ("features", "said"),
    [
        ("no_such_module_x:f", "features='no_such_module_x:f': cannot import 'no_such_module_x'"),
        ("{tmp}/others.py:wrong", "returned shape (7,) for 7 tables: expected (7, F)"),
        ("{tmp}/others.py:fails", "failed on 7 bidding views (ZeroDivisionError"),
        ("{tmp}/others.py:nan", "values that are not finite"),
    ],
)
def test_a_bad_feature_function_is_one_line_before_any_work(
    features: str, said: str, others: Path, tmp_path: Path, capsys
) -> None:
    runs = tmp_path / "runs"
    code = main(["train", *TINY_BID, f"features={features.format(tmp=others.parent)}",
                 f"runs_dir={runs}"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not runs.exists() or not any(runs.iterdir())


def test_features_are_for_bidding_and_a_run_without_them_is_stored_as_before(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError, match="are for mode 'bidding'"):
        load_config(None, [f"features={EXAMPLE}"])
    trainer = _trainer(tmp_path / "run", "total_decisions=512")
    trainer.train(progress=False)
    data = torch.load(tmp_path / "run" / "policy.pt", weights_only=True)
    assert "extra_inputs" not in data["net"] and "features" not in data["extra"]
    assert trainer.collector.features is None and trainer.collect().extra is None
