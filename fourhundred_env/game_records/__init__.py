"""Game records of 400: a match written down so that it can be saved, read and played again.

One module per job, imports pointing one way (down this list, the last above
:class:`~fourhundred_env.table.Table`, the others below it):

- :mod:`fourhundred_env.game_records.hands`: :class:`~fourhundred_env.game_records.hands.HandRecord`,
  a finished hand as a table keeps it (:attr:`Table.history <fourhundred_env.table.Table.history>`);
- :mod:`fourhundred_env.game_records.data`: :class:`~fourhundred_env.game_records.data.GameRecord`
  and :class:`~fourhundred_env.game_records.data.RecordedHand`, written as text and as JSON;
- :mod:`fourhundred_env.game_records.readers`: the text and JSON forms read into a record;
- :mod:`fourhundred_env.game_records.replay`: a record played through a table (given as an
  argument), and a table's record;
- :mod:`fourhundred_env.game_records.files`: what most callers want: records parsed, read,
  written and gone through decision by decision
  (:func:`~fourhundred_env.game_records.files.read_record`,
  :func:`~fourhundred_env.game_records.files.decisions`), each through a
  :class:`~fourhundred_env.table.Table`.

This file imports nothing: the table imports the modules below it, and a module of this
package that loaded the files module here would import the table back.
"""
