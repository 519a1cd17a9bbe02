"""Bots for 400: one protocol (`Agent`) for every kind, and a registry of names and specs."""

from agents.base import Agent, RandomAgent
from agents.registry import available_agents, make_agent, register_agent

__all__ = ["Agent", "RandomAgent", "available_agents", "make_agent", "register_agent"]
