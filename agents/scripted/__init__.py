"""Scripted bots, compiled: random, heuristic, heuristic-v1, minbid, and their play-outs."""
