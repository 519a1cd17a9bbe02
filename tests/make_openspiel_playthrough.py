"""Write tests/data/openspiel_fourhundred.txt, the OpenSpiel playthrough of one hand of 400
(tests/test_openspiel.py regenerates it and compares). Run after a deliberate change of the
game's strings, tensors or rules, and review the diff:

    .venv/bin/python tests/make_openspiel_playthrough.py
"""

from __future__ import annotations

from pathlib import Path

from open_spiel.python.algorithms import generate_playthrough

import fourhundred_env.envs.openspiel  # noqa: F401 - registers the game

PATH = Path(__file__).parent / "data" / "openspiel_fourhundred.txt"
GAME = "fourhundred"
SEED = 7  # a hand that is played out, not thrown in

if __name__ == "__main__":
    PATH.write_text(generate_playthrough.playthrough(GAME, None, seed=SEED))
    print(f"wrote {PATH} ({PATH.stat().st_size:,} bytes)")
