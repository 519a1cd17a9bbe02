"""Tournaments of bots: every pairing played duplicate, many tables in lockstep, across processes.

A tournament plays each pairing of its agents (X on seats 0 and 2 against Y on 1 and 3) for
`matches` **duplicate matches**: match id m is played twice, once with X holding team 0
(orientation 0) and once with the partnerships swapped (orientation 1). The engine deals hand
k of match m from ``(seed, m, k)`` and draws the first dealer from ``(seed, m)``, so both games
of a duplicate match get the same cards by seat, hand by hand, for as long as both last; card
luck cancels. Every pairing uses the same match ids, so all pairings see the same deals.

One module per job, imports pointing one way (down this list):

- :mod:`fourhundred_tournament.config`: :class:`~fourhundred_tournament.config.TournamentConfig` and its YAML loader;
- :mod:`fourhundred_tournament.db`: the SQLite results, one named row type per table;
- :mod:`fourhundred_tournament.planning`: the games cut into jobs (one pairing, a chunk of match ids);
- :mod:`fourhundred_tournament.runner`: one job played on many tables in lockstep, under the conduct rules;
- :mod:`fourhundred_tournament.parallel` and :mod:`fourhundred_tournament.ray_backend`: the jobs spread over
  worker processes, or over a Ray cluster;
- :mod:`fourhundred_tournament.tournament`: :func:`~fourhundred_tournament.tournament.run_tournament`, the
  entry point: the database opened or resumed, the jobs planned and handed to a backend;
- :mod:`fourhundred_tournament.ratings` and :mod:`fourhundred_tournament.report`: Wilson intervals, Bradley-Terry
  Elo, the leaderboard as text, JSON and CSV;
- :mod:`fourhundred_tournament.figures` and :mod:`fourhundred_tournament.plots`: the report's figures (matplotlib,
  the optional ``plots`` extra; `fourhundred_train.plots` shares the figure helpers).

The package sits above :mod:`agents` (it plays them) and below `train` and the command line;
nothing in :mod:`agents` or :mod:`fourhundred_env` imports it. This file imports nothing, so
importing one module (the figure helpers, say) does not load the others.
"""
