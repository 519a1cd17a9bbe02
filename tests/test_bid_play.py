"""One checkpoint that bids with a bidding network and plays the cards with a policy network
(agents/neural/bid_play.py): saved and loaded whole, played by ``neural:`` and searched over
as its two networks would be, refused in one line when its parts are not what they claim."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from fourhundred_agents.neural.bid_net import BidNet, BidNetConfig  # noqa: E402
from fourhundred_agents.neural.bid_play import BidPlayNet  # noqa: E402
from fourhundred_agents.neural.checkpoint import CheckpointError, load_policy  # noqa: E402
from fourhundred_agents.neural.network import NetConfig, PolicyValueNet  # noqa: E402
from fourhundred_agents.registry import make_agent  # noqa: E402
from fourhundred_env import Engine, Phase, Rules  # noqa: E402
from fourhundred_env.view import seat_view  # noqa: E402
from fourhundred_train.checkpoint import policy_record, save_policy  # noqa: E402
from fourhundred_train.exit import record_positions  # noqa: E402
from fourhundred_train.exit.config import load_exit_config  # noqa: E402

SMALL_BID = BidNetConfig(hidden=16, head=8, head_version=2)
SMALL_PLAY = NetConfig(hidden=16, layers=1)
_TINY_EXIT = ["positions=24", "bid_share=0", "num_tables=8", "worlds=2", "bid_worlds=2",
              "candidates=2", "chunk=8", "workers=1", "epochs=1", "batch_size=16",
              "eval_matches=0", "gate=null", "progress=false", "distill=0"]  # fmt: skip


def _parts(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A small bidding network, a small card network and the two joined, saved."""
    torch.manual_seed(0)
    bid, play = BidNet(SMALL_BID), PolicyValueNet(SMALL_PLAY)
    paths = tmp_path / "bid.pt", tmp_path / "play.pt", tmp_path / "both.pt"
    save_policy(paths[0], bid, Rules())
    save_policy(paths[1], play, Rules())
    save_policy(paths[2], BidPlayNet.join(bid, play), Rules())
    return paths


def _views(count: int = 64):
    """Views of `count` decisions of selfplay.pt's matches, half bids and half cards."""
    engine = Engine()
    net, _, _ = load_policy("agents/pretrained/selfplay.pt")
    config = load_exit_config("exit", [f"positions={count}", "bid_share=0.5", "bidder=",
                                       "num_tables=16", "progress=false"])  # fmt: skip
    return seat_view(engine, record_positions(engine, net, config, seed=3))


def test_a_joined_checkpoint_loads_whole_and_plays_each_part(tmp_path: Path) -> None:
    bid_path, play_path, both = _parts(tmp_path)
    net, _, meta = load_policy(both)
    assert isinstance(net, BidPlayNet)
    assert meta["net"] == {"bid": SMALL_BID.to_dict(), "play": SMALL_PLAY.to_dict()}
    raw = torch.load(both, weights_only=True)["state_dict"]
    assert all(torch.equal(net.state_dict()[k], v) for k, v in raw.items())
    view = _views()
    bidding = view.phase == int(Phase.BID)
    assert bidding.any() and (~bidding).any()
    joined = make_agent(f"neural:{both}", Rules(), seed=0).act(view)
    parts = make_agent(f"compose:bid=neural-bid:{bid_path},play=neural:{play_path}", Rules(),
                       seed=0).act(view)  # fmt: skip
    np.testing.assert_array_equal(joined, parts)
    assert view.legal_mask[np.arange(view.size), joined].all()


def test_the_search_over_a_joined_network_bids_with_its_bidding_network(tmp_path: Path) -> None:
    bid_path, play_path, both = _parts(tmp_path)
    view = _views(32)
    light = "worlds=2,candidates=2,bid_worlds=2,time_per_move=60"
    joined = make_agent(f"search:fast,{light},model={both},bid_model=policy", Rules(), seed=4)
    parts = make_agent(f"search:fast,{light},model={play_path},bid_model={bid_path}", Rules(),
                       seed=4)  # fmt: skip
    np.testing.assert_array_equal(joined.act(view), parts.act(view))
    # with the bids searched, the candidates are the bidding network's most likely bids
    searched = make_agent(f"search:{light},model={both}", Rules(), seed=4)
    bids = np.flatnonzero(view.phase == int(Phase.BID))
    own = make_agent(f"neural:{bid_path}", Rules(), seed=0, decides="bid").act(view.select(bids))
    np.testing.assert_array_equal(searched._policy(view.select(bids)).argmax(1), own)


@pytest.mark.parametrize(
    ("net", "message"),
    [
        ({"bid": SMALL_PLAY.to_dict(), "play": SMALL_PLAY.to_dict()},
         "its 'bid' config is not a bidding network's"),
        ({"bid": SMALL_BID.to_dict(), "play": SMALL_BID.to_dict()},
         "its 'bid' config is not a bidding network's or its 'play' config not a card"),
        ({"bid": SMALL_BID.to_dict(), "play": {**SMALL_PLAY.to_dict(), "depth": 2}},
         "(its card network): its network config has field(s) ['depth']"),
        ({"bid": SMALL_BID.to_dict(), "play": {**SMALL_PLAY.to_dict(), "hidden": 10**6}},
         "hidden=1,000,000: expected at most 4096"),
    ],
)  # fmt: skip
def test_a_joined_checkpoint_with_wrong_parts_is_refused(tmp_path: Path, net, message) -> None:
    _, _, both = _parts(tmp_path)
    record = torch.load(both, weights_only=True)
    record["net"] = net
    torch.save(record, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError) as info:
        load_policy(tmp_path / "bad.pt")
    text = str(info.value)
    assert message in text and "\n" not in text, text


def test_joined_weights_that_do_not_fit_are_refused(tmp_path: Path) -> None:
    bid = BidNet(SMALL_BID)
    record = policy_record(BidPlayNet.join(bid, PolicyValueNet(SMALL_PLAY)), Rules())
    record["state_dict"] = {
        k: v for k, v in record["state_dict"].items() if not k.startswith("play.value_head")
    }
    torch.save(record, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="do not fit its network config"):
        load_policy(tmp_path / "bad.pt")


def test_an_exit_run_with_a_bidder_fits_the_cards_and_keeps_the_bids(tmp_path: Path) -> None:
    from fourhundred_train.exit import DEFAULT_INIT, ExitTrainer

    bidder = "agents/pretrained/bidder.pt"
    config = load_exit_config("exit", [*_TINY_EXIT, f"bidder={bidder}", "iterations=2",
                                       "window=2", "eval_matches=2"])  # fmt: skip
    rows = ExitTrainer(config, tmp_path / "run").train()
    assert [r["iteration"] for r in rows] == [0, 1]
    net, _, _ = load_policy(tmp_path / "run" / "policy.pt")
    assert isinstance(net, BidPlayNet)
    bid, _, _ = load_policy(bidder)
    start, _, _ = load_policy(DEFAULT_INIT)
    for k, v in bid.state_dict().items():  # the bids are the bidder's, untouched
        assert torch.equal(net.bid.state_dict()[k], v)
    moved = [not torch.equal(net.play.state_dict()[k], v) for k, v in start.state_dict().items()]
    assert any(moved)  # the cards were fitted
    view = _views(32)
    bids = np.flatnonzero(view.phase == int(Phase.BID))
    own = make_agent(f"neural:{bidder}", Rules(), seed=0, decides="bid").act(view.select(bids))
    played = make_agent(f"neural:{tmp_path / 'run' / 'policy.pt'}", Rules(), seed=0).act(view)
    np.testing.assert_array_equal(played[bids], own)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        (["bidder=agents/pretrained/bidder.pt", "bid_share=0.2"],
         "bid_share=0.2 with bidder='agents/pretrained/bidder.pt': expected bid_share 0"),
        (["bidder=agents/pretrained/selfplay.pt"],
         "bidder='agents/pretrained/selfplay.pt' is not a bidding network"),
    ],
)  # fmt: skip
def test_a_bidder_that_cannot_bid_for_the_run_is_one_line(overrides, message, capsys) -> None:
    from fourhundred_cli import main

    code = main(["train", "exit", *_TINY_EXIT, *overrides, "runs_dir=/nonexistent/never"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and message in err[0], err


def test_the_bundled_exit_network_bids_as_the_bundled_bidder() -> None:
    net, _, _ = load_policy("agents/pretrained/exit.pt")
    assert isinstance(net, BidPlayNet)
    view = _views(48)
    bids = np.flatnonzero(view.phase == int(Phase.BID))
    own = make_agent("neural:agents/pretrained/bidder.pt", Rules(), seed=0, decides="bid").act(
        view.select(bids)
    )
    played = make_agent("neural:agents/pretrained/exit.pt", Rules(), seed=0).act(view)
    np.testing.assert_array_equal(played[bids], own)
