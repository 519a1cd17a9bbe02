"""Bots in their own processes: cmd: bots (the JSON-lines protocol), isolated Python bots,
and the --agent-module imports every process that makes agents runs."""
