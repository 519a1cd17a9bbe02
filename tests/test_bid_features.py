"""Your own bid features for the fitted-Q bidder (agents/neural/extra_features.py), without
editing the source: a run with ``features=`` trains end to end, its checkpoint records only
the function's name and width, bids with ``neural-bid:PATH,features=SPEC`` as its network does
and is refused without them (a checkpoint never names code to import); a feature function that
does not import or answers the wrong shape is one line before any work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents import make_agent  # noqa: E402
from fourhundred_agents.neural.agent import net_inputs  # noqa: E402
from fourhundred_agents.neural.bid_net import SHARED_SIZE, BidNetConfig  # noqa: E402
from fourhundred_agents.neural.extra_features import load_features, sample_views  # noqa: E402
from fourhundred_agents.neural.network import NetConfig  # noqa: E402
from fourhundred_cli import main  # noqa: E402
from fourhundred_env import Engine, Rules  # noqa: E402
from fourhundred_env.errors import FourHundredError  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.bid_q import BidQTrainer, QBidder, load_bid_q_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = f"{ROOT / 'examples' / 'bid_features.py'}:honours_and_partner"
TINY = ["positions=600", "num_tables=64", "hidden=32", "layers=1", "head=16", "epochs=2",
        "batch_size=256", "bid_head=value", "worlds=0", "workers=1", "per_point=0",
        "iterations=2", "eval_every=0"]  # fmt: skip
OTHERS = """
import numpy as np

def honours_and_partner(view):  # the example's name, another width
    return np.zeros((view.size, 2))

def renamed(view):  # the example's width, another name
    return np.zeros((view.size, 3))

def wrong(view):
    return np.zeros(view.size)

def ragged(view):
    return np.zeros((view.size, view.size))

def fails(view):
    return 1 / 0

def nan(view):
    return np.full((view.size, 1), np.nan)
"""


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, object]:
    """A tiny fitted-Q run (net mlp) with the example's features: its policy.pt and network."""
    run = tmp_path_factory.mktemp("feat") / "run"
    cfg = load_bid_q_config("configs/bidding_q.yaml", [*TINY, "net=mlp", f"features={EXAMPLE}"])
    trainer = BidQTrainer(cfg, run, progress=False)
    trainer.train()
    return run / "policy.pt", trainer.net


def test_a_run_with_features_records_their_name_and_width_only(trained) -> None:
    path, net = trained
    data = torch.load(path, weights_only=True)
    assert data["net"]["extra_inputs"] == 3
    assert data["extra"]["features"] == {"name": "honours_and_partner", "spec": EXAMPLE,
                                         "size": 3}  # fmt: skip
    assert net.trunk[0].weight.shape[1] == NetConfig().obs_size + 3


def test_a_run_with_features_resumes_exactly(trained, tmp_path: Path) -> None:
    """An iteration's features are worked out again from its saved views on a resume: the
    same weights as the straight run, bit for bit."""
    base = [*TINY, "net=mlp", f"features={EXAMPLE}"]
    one = load_bid_q_config("configs/bidding_q.yaml", [*base, "iterations=1"])
    BidQTrainer(one, tmp_path / "c", progress=False).train()
    two = load_bid_q_config("configs/bidding_q.yaml", base)
    BidQTrainer(two, tmp_path / "c", resume=True, progress=False).train()
    a = torch.load(trained[0], weights_only=True)["state_dict"]
    b = torch.load(tmp_path / "c" / "policy.pt", weights_only=True)["state_dict"]
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


def test_the_checkpoint_bids_with_features_named_again(trained) -> None:
    path, net = trained
    agent = make_agent(f"neural-bid:{path},features={EXAMPLE}", Rules(), 0)
    engine = Engine()
    state = engine.init(32, seed=4)
    engine.deal(state)
    view = seat_view(engine, state)
    bids = agent.act(view)
    assert view.legal_mask[np.arange(32), bids].all()
    np.testing.assert_array_equal(bids, QBidder(engine, net)(state, np.arange(32)))
    # the network reads the features: other columns, other values
    obs = torch.from_numpy(net_inputs(net, view, Rules())[0])
    with torch.no_grad():
        a = net(obs, torch.from_numpy(net.extra_features(view)))[0]
        b = net(obs, torch.zeros((32, 3)))[0]
    assert not torch.equal(a, b)
    composed = make_agent(
        f"compose:bid=neural:{path},features={EXAMPLE},play=heuristic-v1", Rules(), 0
    )
    np.testing.assert_array_equal(composed.act(view), bids)


@pytest.mark.parametrize(
    ("spec", "said"),
    [
        ("neural-bid:{path}", "trained with bid features 'honours_and_partner' (3 input(s)"),
        ("compose:bid=neural:{path},play=heuristic-v1", "expected them named again"),
        ("neural-bid:{path},features={tmp}/others.py:renamed", "trained with 'honours_and_"),
        ("neural-bid:{path},features={tmp}/others.py:honours_and_partner", "giving 2 column"),
        ("compose:bid=neural:{path},features={example},symmetric=true,play=heuristic-v1",
         "with symmetric=true: expected one of them"),
        ("search:bid_model={path},bids=false", "expected them named again"),
        ("neural-bid:agents/pretrained/bidder.pt,features={example}",
         "trained without bid features"),
    ],
)  # fmt: skip
def test_a_checkpoint_is_refused_without_its_features_or_with_others(
    trained, spec: str, said: str, tmp_path: Path
) -> None:
    (tmp_path / "others.py").write_text(textwrap.dedent(OTHERS))
    spec = spec.format(path=trained[0], tmp=tmp_path, example=EXAMPLE)
    with pytest.raises(FourHundredError) as e:
        make_agent(spec, Rules(), 0)
    assert said in str(e.value) and "\n" not in str(e.value), str(e.value)


def test_a_bid_features_network_reads_them_after_its_shared_entries(tmp_path: Path) -> None:
    """net bid_features: the trunk reads them after its shared entries; the run's own
    evaluations play its checkpoint with them."""
    cfg = load_bid_q_config(
        "configs/bidding_q.yaml",
        [*TINY, "positions=200", "iterations=1", "net=bid_features", f"features={EXAMPLE}",
         "eval_every=1", "eval_deals=1", "eval_matches=1"],
    )  # fmt: skip
    trainer = BidQTrainer(cfg, tmp_path / "run", progress=False)
    (row,) = trainer.train()  # judged as it trains: the evaluations name the features too
    assert trainer.net.trunk[0].weight.shape[1] == SHARED_SIZE + 3
    assert np.isfinite(row["eval/bid_dwin_pp"]) and "eval/win_rate" in row
    data = torch.load(tmp_path / "run" / "policy.pt", weights_only=True)
    assert data["net"]["extra_inputs"] == 3 and data["extra"]["features"]["size"] == 3
    agent = make_agent(f"neural-bid:{tmp_path / 'run' / 'policy.pt'},features={EXAMPLE}",
                       Rules(), 0)  # fmt: skip
    engine = Engine()
    state = engine.init(16, seed=5)
    engine.deal(state)
    view = seat_view(engine, state)
    bids = agent.act(view)
    assert view.legal_mask[np.arange(16), bids].all()
    np.testing.assert_array_equal(bids, QBidder(engine, trainer.net)(state, np.arange(16)))


def test_without_features_the_networks_are_stored_as_before() -> None:
    assert "extra_inputs" not in NetConfig().to_dict()
    assert "extra_inputs" not in BidNetConfig().to_dict()
    assert NetConfig(extra_inputs=2).to_dict()["extra_inputs"] == 2


def test_the_sample_views_are_bids_of_a_game_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """The check's views come from games a GameLoop plays (DEVELOPERS.md: every place that
    plays games drives one): 10 tables, each waiting for its (t % 4 + 1)-th bid."""
    from fourhundred_env.loop import GameLoop
    from fourhundred_env.phases import Phase

    steps: list[np.ndarray] = []
    step = GameLoop.step

    def counted(loop: GameLoop, actions: np.ndarray, active: np.ndarray | None = None,
                **kwargs: object) -> np.ndarray:  # fmt: skip
        steps.append(active.copy())
        return step(loop, actions, active, **kwargs)

    monkeypatch.setattr(GameLoop, "step", counted)
    first, second = sample_views(Rules())
    assert [first.size, second.size] == [7, 3]
    assert [int(a.sum()) for a in steps] == [7, 4, 2]  # the tables that bid, round by round
    np.testing.assert_array_equal(np.concatenate([first.table, second.table]), np.arange(10))
    num_bids = np.concatenate([first.num_bids, second.num_bids])
    np.testing.assert_array_equal(num_bids, np.arange(10) % 4)
    for view in (first, second):
        assert (view.phase == Phase.BID).all() and view.legal_mask.any(axis=1).all()
        assert (view.seat == view.to_play).all()


def test_the_example_answers_the_contract() -> None:
    hook = load_features(EXAMPLE)
    view = sample_views(Rules())[0]
    out = hook(view)
    assert out.shape == (view.size, 3) and out.dtype == np.float32
    partner = (view.seat.astype(np.int64) + 2) % 4
    bid = view.bids[np.arange(view.size), partner]
    np.testing.assert_array_equal(out[:, 1], bid > 0)
    np.testing.assert_allclose(out[:, 2], bid / 13, rtol=1e-6)
    assert ((out[:, 0] * 4) % 1 == 0).all() and (out[:, 0] <= 1).all()


@pytest.mark.parametrize(
    ("features", "said"),
    [
        ("no_such_module_x:f", "features='no_such_module_x:f': cannot import 'no_such_module_x'"),
        ("numpy:no_such_thing", "module 'numpy' has no 'no_such_thing'"),
        ("numpy:pi", "is a float: expected a function"),
        ("justaword", "expected 'package.module:function'"),
        ("{tmp}/others.py:wrong", "returned shape (7,) for 7 tables: expected (7, F)"),
        ("{tmp}/others.py:ragged", "returned shape (3, 3) for 3 tables: expected (3, 7)"),
        ("{tmp}/others.py:fails", "failed on 7 bidding views (ZeroDivisionError"),
        ("{tmp}/others.py:nan", "values that are not finite"),
    ],
)
def test_a_bad_feature_function_is_one_line_before_any_work(
    features: str, said: str, tmp_path: Path, capsys
) -> None:
    (tmp_path / "others.py").write_text(textwrap.dedent(OTHERS))
    runs = tmp_path / "runs"
    code = main(["train", "bidding_q", *TINY, "net=mlp",
                 f"features={features.format(tmp=tmp_path)}", f"runs_dir={runs}"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and said in err, err
    assert not runs.exists() or not any(runs.iterdir())


def test_a_checkpoint_that_reads_features_it_does_not_name_is_refused(
    trained, tmp_path: Path
) -> None:
    data = torch.load(trained[0], weights_only=True)
    del data["extra"]["features"]
    torch.save(data, tmp_path / "nameless.pt")
    with pytest.raises(FourHundredError, match="records no feature function's name"):
        make_agent(f"neural-bid:{tmp_path / 'nameless.pt'},features={EXAMPLE}", Rules(), 0)


def test_a_spec_read_from_data_that_names_features_is_never_made() -> None:
    """A spec that names code to import (features=) is judged, from its text, as one that
    starts a program: a database's or a checkpoint's spec of it is never made."""
    from fourhundred_env.registry import starts_program

    assert starts_program(f"neural-bid:x.pt,features={EXAMPLE}")
    assert starts_program(f"compose:bid=neural:x.pt, Features ={EXAMPLE},play=heuristic-v1")
    assert not starts_program("neural-bid:agents/pretrained/bidder.pt")
    assert not starts_program("neural-bid:my_features=1.pt")


def test_a_checkpoint_whose_card_player_names_features_is_refused(trained, tmp_path) -> None:
    data = torch.load(trained[0], weights_only=True)
    data["extra"]["play_policy"] = f"compose:bid=neural:x.pt,features={EXAMPLE},play=heuristic"
    torch.save(data, tmp_path / "sly.pt")
    with pytest.raises(FourHundredError, match="never run as a program"):
        make_agent(f"neural-bid:{tmp_path / 'sly.pt'},features={EXAMPLE}", Rules(), 0)
