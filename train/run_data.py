"""A run folder is data: what its config.yaml records runs only when the command line names it
again (docs/security.md, "What data can do").

Run folders are shared like checkpoints (a paper's artefacts, a colleague's runs), so the
specs their config.yaml records are judged as specs read from a database are: an agent spec
that starts a program or imports code (``cmd:``, alone or inside another spec's settings;
``features=``) is judged by the registry's `starts_program`, and a field that names a function
of your own to import (bid features, a reward) by whether it names one at all. Each command
that reads a run (`train --resume` of every trainer, `evaluate-run`, its ``--ladder``) refuses
such a field in one line naming it and the flag or override that names it again."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from fourhundred_env.errors import ConfigError, short
from fourhundred_env.registry import starts_program

__all__ = ["check_run_fields", "names_code"]


def names_code(value: Any, built_in: Collection[str] = ()) -> bool:
    """Whether the value of a field that takes a function of your own (``package.module:
    function``, ``FILE.py:function`` or an entry point's name: bid features, a reward) names
    one to import: anything but empty and the field's `built_in` values."""
    return bool(value) and str(value) not in built_in


def check_run_fields(
    values: Mapping[str, Any],
    named: Collection[str],
    agents: Iterable[str] = (),
    code: Mapping[str, Collection[str]] | None = None,
    again: Mapping[str, str] | None = None,
    where: str = "",
) -> None:
    """Refuse (ConfigError, one line) the first field of `values`, a run's config as read from
    its folder, that would start a program or import code and that the command line does not
    name again (`named`: the keys it gives): each key of `agents` an agent spec
    (`starts_program`), each key of `code` a function of your own unless '' or one of the
    values it maps to (`names_code`). `again` is how the command line names a key (a flag);
    by default the override ``KEY=SPEC``; `where` begins the message (``--resume 'RUN': ``)."""
    again = again or {}
    risky = [(k, "starts a program") for k in agents
             if k not in named and starts_program(str(values.get(k) or ""))]  # fmt: skip
    risky += [(k, "imports code") for k, built_in in (code or {}).items()
              if k not in named and names_code(values.get(k), built_in)]  # fmt: skip
    if risky:
        key, what = risky[0]
        how = again.get(key, f"the override {key}=SPEC")
        raise ConfigError(
            f"{where}the run's {key} {short(str(values[key]))} {what}: name it again with {how} to "
            "run it (a run folder is data and starts nothing by itself: docs/security.md)"
        )
