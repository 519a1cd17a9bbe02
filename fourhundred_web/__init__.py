"""The 400 table in a browser: play against the bots, watch a tournament's matches.

``fourhundred serve`` (the optional ``web`` extra: Starlette and uvicorn) serves plain HTML,
CSS and JavaScript from this package's ``static/`` folder and a JSON API
(:mod:`fourhundred_web.app`); nothing is fetched from the internet and nothing is built.
The server holds every game: :mod:`fourhundred_web.play` runs a person's match against three
bots on the engine and sends the browser only what the person's seat may know;
:mod:`fourhundred_web.watch` reads a results database and replays its games with
:mod:`fourhundred_tournament.replay`.

This package is a top layer, beside the command line: it imports the core, the agents and
the tournament, and nothing below imports it. This file imports nothing, so the command
line can name the package without loading Starlette.
"""
