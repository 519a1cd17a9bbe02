"""A ladder bot's identity is all of its code (issue 67, "seats that cannot talk"): a helper
module beside a ``cmd:`` bot's script, or any file of a ``python -m pkg`` bot's package,
changed since the bot was added, is refused in one line naming the file; a bot recorded by an
older fourhundred, whose checksum covered only its command line's files, is refused until its
spec is added again."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from pathlib import Path

import pytest

from fourhundred_cli import main
from fourhundred_env.errors import FourHundredError
from fourhundred_tournament.identity import file_digests, files_digest, legacy_digest
from fourhundred_tournament.ladder.play import LadderError, add_bots
from tests.dbedit import reseal

ROOT = Path(__file__).resolve().parents[1]
PLAY = {"workers": 1, "progress": False, "chunk_matches": 2, "table_batch": 8}


def _script_bot(tmp_path: Path) -> tuple[str, Path]:
    """A ``cmd:`` bot in a folder of its own: its script and a helper module beside it."""
    folder = tmp_path / "bot"
    folder.mkdir()
    shutil.copy(ROOT / "examples/bots/simple_bot.py", folder / "bot.py")
    (folder / "helper.py").write_text("STYLE = 'plain'\n")
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"compiled")
    return f"cmd:{sys.executable} {folder / 'bot.py'},sandbox=off", folder


def _module_bot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Path]:
    """A ``python -m mybot`` bot: a package in the working folder."""
    work = tmp_path / "work"
    package = work / "mybot"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(ROOT / "examples/bots/simple_bot.py", package / "__main__.py")
    (package / "tactics.py").write_text("AGGRESSION = 1\n")
    monkeypatch.chdir(work)
    return f"cmd:{sys.executable} -m mybot,sandbox=off", package


def test_a_script_bot_is_every_file_of_its_folder(tmp_path: Path) -> None:
    spec, folder = _script_bot(tmp_path)
    names = sorted(Path(n).name for n in file_digests(spec))
    assert names == ["bot.py", "helper.py"]  # no __pycache__, no .pyc
    before = files_digest(spec)
    (folder / "__pycache__" / "helper.cpython-311.pyc").write_bytes(b"compiled again")
    assert files_digest(spec) == before
    (folder / "helper.py").write_text("STYLE = 'sly'\n")
    assert files_digest(spec) != before
    # a checkpoint bot keeps the checksum it always had
    exit_pt = "neural:agents/pretrained/exit.pt"
    assert files_digest(exit_pt) == legacy_digest(exit_pt) is not None


def test_a_helper_changed_under_a_ladder_bot_is_refused_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec, folder = _script_bot(tmp_path)
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", spec], 1, max_hands=2, play=PLAY)
    (folder / "helper.py").write_text("STYLE = 'sly'\n")  # the script itself is unchanged
    before = db.read_bytes()
    capsys.readouterr()
    argv = ["ladder", "add", "minbid", "--db", str(db), "--run", spec, "--matches", "1",
            "--workers", "1", "--no-progress", "--out", str(tmp_path / "o")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"{str(folder / 'helper.py')!r} changed" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert db.read_bytes() == before
    (folder / "helper.py").unlink()
    with pytest.raises(LadderError, match=r"helper\.py' is gone"):
        add_bots(db, ["minbid"], 1, play=PLAY, run=[spec])
    (folder / "helper.py").write_text("STYLE = 'plain'\n")  # as it was: it plays again
    (folder / "notes.py").write_text("")
    with pytest.raises(LadderError, match=r"notes\.py' is new"):
        add_bots(db, ["minbid"], 1, play=PLAY, run=[spec])
    (folder / "notes.py").unlink()
    assert add_bots(db, ["minbid"], 1, play=PLAY, run=[spec]).games_played == 4


def test_a_module_bot_whose_package_changed_is_refused_naming_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, package = _module_bot(tmp_path, monkeypatch)
    assert sorted(Path(n).name for n in file_digests(spec)) == [
        "__init__.py", "__main__.py", "tactics.py"
    ]  # fmt: skip
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", spec], 1, max_hands=2, play=PLAY)
    (package / "tactics.py").write_text("AGGRESSION = 9\n")
    before = db.read_bytes()
    with pytest.raises(LadderError, match=r"tactics\.py' changed since it was added"):
        add_bots(db, ["minbid"], 1, play=PLAY, run=[spec])
    assert db.read_bytes() == before
    # its spec added again: a new version, the old one retired
    s = add_bots(db, [spec], 1, play=PLAY)
    assert s.added == [f"{spec}@v2"] and s.retired == [spec]


def test_a_bot_recorded_with_the_old_checksum_is_refused_until_added_again(
    tmp_path: Path,
) -> None:
    spec, _folder = _script_bot(tmp_path)
    db = tmp_path / "ladder.sqlite"
    add_bots(db, ["random", spec], 1, max_hands=2, play=PLAY)
    con = sqlite3.connect(db)
    with con:  # what an older fourhundred recorded: the script's checksum alone
        con.execute("DROP TABLE ladder_files")
        con.execute("UPDATE ladder_bots SET files = ? WHERE label = ?", (legacy_digest(spec), spec))
        reseal(con)
    con.close()
    with pytest.raises(LadderError, match="command line names only"):
        add_bots(db, ["minbid"], 1, play=PLAY, run=[spec])
    s = add_bots(db, [spec], 1, play=PLAY)  # recorded again, with all of its files
    assert s.added == [f"{spec}@v2"] and s.retired == [spec]


def test_a_bot_folder_too_big_to_be_its_own_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec, folder = _script_bot(tmp_path)
    monkeypatch.setattr("fourhundred_tournament.identity.MAX_FILES", 3)
    for i in range(3):
        (folder / f"data{i}.txt").write_text(str(i))
    with pytest.raises(FourHundredError, match="a folder of the bot's own"):
        add_bots(tmp_path / "ladder.sqlite", ["random", spec], 1, max_hands=2, play=PLAY)
    assert not (tmp_path / "ladder.sqlite").exists()
