"""A living ladder: bots added to one results database as they come, ratings after every event.

``fourhundred ladder add SPEC... --db FILE`` puts bots on the ladder and plays only the pairings
they are missing (each new bot against every bot on it, duplicate, on the ladder's deals: hand k
of match m is dealt from ``(seed, m, k)`` whatever the pairing, so a new bot's games are
comparable with the old ones); ``ladder remove`` retires a bot and keeps its games; ``ladder
report`` reads everything from the file. The games are played by the tournament's own machinery
(:func:`fourhundred_tournament.tournament.play_pairings`: the same jobs, runner, backends, resume and writer
lock), so a ladder whose bots never changed holds the rows of a tournament of the same bots.

- :mod:`fourhundred_tournament.db.ladder`: the ladder's tables (bots, events, pairings) and how any
  database is read as a ladder;
- :mod:`fourhundred_tournament.ladder.play`: :func:`~fourhundred_tournament.ladder.play.add_bots` and
  :func:`~fourhundred_tournament.ladder.play.remove_bots`;
- :mod:`fourhundred_tournament.ladder.history`: the ratings after each event, the report as a dict and
  as text;
- :mod:`fourhundred_tournament.ladder.plots`: the history figure and the Elo by training step (matplotlib).
"""
