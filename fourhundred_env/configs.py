"""Typed configs: frozen dataclasses filled from YAML, mappings, ``key=value`` text and agent specs.

One loader serves every config of the project: the rules, the environments, tournaments,
training runs and each bot's settings. A field's type annotation says what it takes:

- ``bool``, ``int``, ``float``, ``str``; a ``Literal`` of choices; ``X | None``; a union;
- ``tuple[X, ...]`` (from a list, a tuple, or comma-separated text);
- a nested config dataclass (from a mapping of its fields);
- :class:`~fourhundred_env.rules.Rules` (a preset name, or a mapping of flags with an
  optional ``preset``).

Values given as Python or YAML values must have the type (an int for a float field is taken;
``1`` for a bool, ``2.0`` for an int are not); values read from text (command-line overrides,
agent specs) are parsed by the type they go into (``1e6`` for an int, ``yes`` for a bool). An unknown key, or a value that does not fit, raises :class:`ConfigError` naming the
key, the value and what was expected; each dataclass's own ``__post_init__`` checks its
ranges after :func:`check_fields`. PyYAML is imported only to read or write files.

The YAML files in the repository's ``configs/`` are installed with the package
(``fourhundred_env.bundled_configs``): :func:`config_path` finds one by name from any
directory (``tiny``, ``default`` for a tournament), and a path is still a path.
"""

from __future__ import annotations

import dataclasses
import math
import types
import typing
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np

from fourhundred_env.errors import ConfigError, did_you_mean, short

T = TypeVar("T")
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_NONE = {"none", "null", "~", ""}

MAX_YAML_BYTES = 1 << 20
"""The largest YAML file `load_yaml` reads (1 MiB; the bundled configs are under 2 KB)."""
MAX_YAML_DEPTH = 32
"""The deepest nesting of lists and mappings a YAML config may have."""
MAX_YAML_ALIASES = 256
"""The most aliases (``*name``) a YAML config may use."""
MAX_YAML_NODES = 100_000
"""The most values a YAML config may hold once every alias is expanded (a "billion laughs"
file of a few hundred bytes expands to 10**9): refused while reading, before it is built."""


def _name(hint: Any) -> str:
    """What a type annotation accepts, in words."""
    origin = typing.get_origin(hint)
    if origin is Literal:
        return "one of " + ", ".join(repr(a) for a in typing.get_args(hint))
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_name(a) for a in typing.get_args(hint))
    if origin is tuple:
        return f"a list of {_name(typing.get_args(hint)[0])}"
    if hint is type(None):
        return "null"
    if dataclasses.is_dataclass(hint):
        names = {"Rules": "a rules preset name or a mapping of rules flags"}
        return names.get(hint.__name__, f"a mapping of {hint.__name__} fields")
    words = {bool: "true or false", int: "an integer", float: "a number", str: "text"}
    return words.get(hint, getattr(hint, "__name__", str(hint)))


class _Mismatch(Exception):
    pass


def convert(hint: Any, value: Any, text: bool = False) -> Any:
    """`value` as the annotation `hint` takes it (from text when `text`); raises _Mismatch."""
    origin = typing.get_origin(hint)
    if hint is Any:
        return value
    if isinstance(value, np.ndarray):  # as the Python values it holds (`==` on arrays is no bool)
        value = value.tolist()
    if origin is Literal:
        choices = typing.get_args(hint)
        for choice in choices:
            if value == choice or (text and isinstance(value, str) and value == str(choice)):
                return choice
        raise _Mismatch
    if origin in (typing.Union, types.UnionType):
        arms = typing.get_args(hint)
        if type(None) in arms and (value is None or (text and str(value).lower() in _NONE)):
            return None
        for arm in arms:
            if arm is type(None):
                continue
            try:
                return convert(arm, value, text)
            except _Mismatch:
                pass
        raise _Mismatch
    if hint is type(None):
        if value is None:
            return None
        raise _Mismatch
    if origin is tuple:
        args = typing.get_args(hint)
        if text and isinstance(value, str):
            value = [v.strip() for v in value.strip("()[] ").split(",") if v.strip()]
        if isinstance(value, str | bytes) or not isinstance(value, Iterable):
            raise _Mismatch
        items = list(value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(convert(args[0], v, text) for v in items)
        if len(items) != len(args):
            raise _Mismatch
        return tuple(convert(a, v, text) for a, v in zip(args, items, strict=True))
    if isinstance(value, np.generic):  # numpy scalars count as the Python values they hold
        value = value.item()
    if hint is bool:
        if isinstance(value, bool):
            return value
        if text and isinstance(value, str) and value.strip().lower() in _TRUE | _FALSE:
            return value.strip().lower() in _TRUE
        raise _Mismatch
    if hint is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        if text and isinstance(value, str):
            try:
                number = float(value) if any(c in value for c in ".eE") else int(value)
            except ValueError:
                raise _Mismatch from None
            if isinstance(number, float):
                if not number.is_integer():
                    raise _Mismatch
                return int(number)
            return number
        raise _Mismatch
    if hint is float:
        if isinstance(value, bool):
            raise _Mismatch
        if isinstance(value, int | float):
            return float(value)
        if text and isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                raise _Mismatch from None
        raise _Mismatch
    if hint is str:
        if isinstance(value, str):
            return value
        raise _Mismatch
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        if isinstance(value, hint):
            return value
        if hint.__name__ == "Rules":  # a preset name or flags (Rules validates itself)
            if isinstance(value, str):
                return hint.preset(value)
            if isinstance(value, Mapping):
                return hint.from_dict(value)
            raise _Mismatch
        if isinstance(value, Mapping):
            return build(hint, value, hint.__name__)
        raise _Mismatch
    if isinstance(hint, type) and not isinstance(value, hint):
        raise _Mismatch
    return value


def check_numbers(obj: Any) -> None:
    """ConfigError naming the first float field of the dataclass `obj` that is nan or infinite
    (it would run, then fail or learn nothing), or a ``seed`` field outside 0 to 2**63 - 1."""
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{f.name}={value}: expected a finite number")
    seed = getattr(obj, "seed", None)
    if seed is not None and not 0 <= seed < 2**63:
        raise ConfigError(f"seed={seed}: expected a seed of 0 or more, below 2**63")


def check_fields(obj: Any, skip: Iterable[str] = ()) -> None:
    """Convert and check every field of the (frozen) dataclass `obj` against its annotation,
    in place: call it first in ``__post_init__``. Raises ConfigError naming a misfit."""
    hints = typing.get_type_hints(type(obj))
    skip = set(skip)
    for f in dataclasses.fields(obj):
        if f.name in skip or not f.init:
            continue
        value = getattr(obj, f.name)
        try:
            new = convert(hints[f.name], value)
        except _Mismatch:
            raise ConfigError(f"{f.name}={short(value)}: expected {_name(hints[f.name])}") from None
        except ConfigError as e:
            raise ConfigError(f"{f.name}: {e}") from None
        if new is not value:
            object.__setattr__(obj, f.name, new)


def build(cls: type[T], values: Mapping[str, Any], source: str = "config",
          text: Iterable[str] = ()) -> T:  # fmt: skip
    """An instance of the config dataclass `cls` from `values`; the keys in `text` hold text
    to parse by their field's type. Unknown keys and misfits raise ConfigError, prefixed by
    `source` (a file name, "agent 'pimc:...'"), or, for a key of `text` that is an
    :class:`Overrides` (what :func:`parse_overrides` returns), by the override as it was
    written and where (``total_decision=1000 (command line)``): the mistake is blamed where it
    was made, not on the file it overrides. An unknown key names the closest known ones."""
    if not isinstance(values, Mapping):
        raise ConfigError(
            f"{source}: got {type(values).__name__}: expected a mapping of keys to values"
        )
    known = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    given = text if isinstance(text, Overrides) else Overrides()

    def blamed(key: str) -> str:
        return f"{key}={given[key]} ({given.source})" if key in given else source

    unknown = sorted(set(values) - known, key=short)
    for key in unknown:
        if key in given:
            hint = did_you_mean(key, known)
            raise ConfigError(
                f"{blamed(key)}: unknown key {key!r}: "
                + (hint if hint else f"expected one of {sorted(known)}")
            )
    if unknown:
        hint = did_you_mean(unknown[0], known) if len(unknown) == 1 else ""
        raise ConfigError(
            f"{source}: unknown key(s) {short(unknown)}: expected some of {sorted(known)}"
            + (f"; {hint}" if hint else "")
        )
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key in text:
            try:
                value = convert(hints[key], value, text=True)
            except _Mismatch:
                choices = (
                    typing.get_args(hints[key]) if typing.get_origin(hints[key]) is Literal else ()
                )
                hint = did_you_mean(value, [str(c) for c in choices])
                raise ConfigError(
                    f"{blamed(key)}: {key}={short(value)}: expected {_name(hints[key])}"
                    + (f"; {hint}" if hint else "")
                ) from None
        kwargs[key] = value
    try:
        return cls(**kwargs)
    except ConfigError as e:
        # a check of the dataclass names its field first ("device='mps': ...", "opponent:
        # unknown agent ..."): one an override gave is blamed on the override
        head = str(e).partition(":")[0].partition("=")[0]
        raise ConfigError(f"{blamed(head) if head in given else source}: {e}") from None


def replace(obj: T, **changes: Any) -> T:
    """A copy of the config `obj` with some fields changed, checked like a new one."""
    return build(type(obj), {**asdict_shallow(obj), **changes}, type(obj).__name__)


def asdict_shallow(obj: Any) -> dict[str, Any]:
    """The init fields of a dataclass as a dict (values as they are, not copied)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if f.init}


class Overrides(dict[str, str]):
    """``key=value`` overrides as {key: value text}, with `source`, where they were given
    (``"command line"``): :func:`build` blames a misfit among them on the override, not on
    the config file it overrides."""

    def __init__(self, items: Mapping[str, str] | None = None, source: str = "command line"):
        super().__init__(items or {})
        self.source = source


def parse_overrides(items: Iterable[str], source: str = "command line") -> Overrides:
    """``["key=value", ...]`` as {key: value text} (an :class:`Overrides` from `source`); a
    malformed item raises ConfigError."""
    out = Overrides(source=source)
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"override {short(item)}: expected key=value, like learning_rate=1e-4"
            )
        out[key.strip()] = value.strip()
    return out


BUNDLED_PACKAGE = "fourhundred_env.bundled_configs"
"""The package the repository's configs/*.yaml install as (pyproject.toml's package-dir)."""


def bundled_configs(kind: str | None = None) -> dict[str, Path]:
    """The bundled configs by name: {"tiny": .../tiny.yaml, ...}; with `kind`
    ("tournament"), only that kind's, named without the prefix ({"default": ...})."""
    from importlib.resources import files

    root = Path(str(files(BUNDLED_PACKAGE)))
    found = {p.stem: p for p in sorted(root.glob("*.yaml"))}
    if kind is None:
        return found
    prefix = f"{kind}_"
    return {n.removeprefix(prefix): p for n, p in found.items() if n.startswith(prefix)}


def config_path(name_or_path: str | Path, kind: str | None = None) -> Path:
    """The config file `name_or_path` stands for: an existing file as given; else a bundled
    config by name, with or without ``.yaml`` or a leading ``configs/`` (``tiny``,
    ``configs/tiny.yaml``; for `kind` "tournament" also ``default`` for
    ``tournament_default.yaml``). Anything else raises ConfigError naming the closest choices
    and all of them: `kind`'s, or without `kind` the configs of no kind (the trainers'; a
    tournament config is no training config), though any bundled name is found."""
    path = Path(name_or_path)
    if path.is_file():
        return path
    text = str(name_or_path)
    name = text.removeprefix("configs/").removesuffix(".yaml").removesuffix(".yml")
    if "/" not in name and "\\" not in name:
        choices = bundled_configs(kind) if kind else {}
        found = {**bundled_configs(), **choices}
        if name in found:
            return found[name]
    names = sorted(bundled_configs(kind) if kind else _kindless_configs())
    hint = did_you_mean(name, names)
    raise ConfigError(
        f"config {text!r}: no such file, nor a bundled config: "
        + (f"{hint} " if hint else "")
        + f"expected a YAML path or one of {names}"
    )


CONFIG_KINDS = ("tournament",)
"""The kinds of bundled configs named by a prefix (``tournament_default.yaml``); the configs
of no kind are the trainers' (``tiny.yaml``, ``exit.yaml``)."""


def _kindless_configs() -> dict[str, Path]:
    """The bundled configs of no kind (see :data:`CONFIG_KINDS`): the trainers'."""
    prefixes = tuple(f"{k}_" for k in CONFIG_KINDS)
    return {n: p for n, p in bundled_configs().items() if not n.startswith(prefixes)}


def load_yaml(path: str | Path, what: str = "config") -> dict[str, Any]:
    """The mapping in a YAML file; a missing, malformed or non-mapping file raises ConfigError."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{what} file {str(p)!r} does not exist")
    try:
        with p.open("rb") as f:
            data = f.read(MAX_YAML_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{what} file {str(p)!r} cannot be read: {e}") from None
    if len(data) > MAX_YAML_BYTES:
        raise ConfigError(
            f"{what} file {str(p)!r} is larger than {MAX_YAML_BYTES:,} bytes (MAX_YAML_BYTES): "
            "expected a config"
        )
    loaded = parse_yaml(text, f"{what} file {str(p)!r}")
    if loaded is None:
        raise ConfigError(
            f"{what} file {str(p)!r} is empty: expected a mapping of keys to values (a file "
            "of only the keys to change is enough)"
        )
    if not isinstance(loaded, dict):
        raise ConfigError(
            f"{what} file {str(p)!r} holds {type(loaded).__name__}: expected a mapping of keys to values"
        )
    return loaded


class _YamlLimit(Exception):
    pass


class _YamlTwice(Exception):
    pass


def parse_yaml(text: str, source: str = "YAML") -> Any:
    """The value of the YAML document `text` (``yaml.safe_load``), within the bounds above:
    nesting depth (MAX_YAML_DEPTH), aliases (MAX_YAML_ALIASES, none inside the node it names)
    and values once expanded (MAX_YAML_NODES), checked while the document is read, before
    anything is built. Malformed or over-large text raises ConfigError in one line naming
    `source`."""
    import yaml

    loader = _limited_loader(yaml)(text)
    try:
        return loader.get_single_data()
    except _YamlLimit as e:
        raise ConfigError(f"{source} is refused: {e}") from None
    except _YamlTwice as e:
        raise ConfigError(f"{source}: {e}: expected each key once") from None
    except yaml.YAMLError as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"{source} is not valid YAML: {first}") from None
    except (ValueError, TypeError, RecursionError, OverflowError) as e:  # e.g. a 5,000-digit int
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise ConfigError(f"{source} holds a value that cannot be read: {first:.200}") from None
    finally:
        loader.dispose()


_LOADERS: dict[int, type] = {}


def _limited_loader(yaml: Any) -> type:
    """A subclass of yaml.SafeLoader whose composer enforces the bounds of `parse_yaml`."""
    if id(yaml) in _LOADERS:
        return _LOADERS[id(yaml)]

    class LimitedLoader(yaml.SafeLoader):  # type: ignore[misc, name-defined]
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self._depth = 0
            self._aliases = 0
            self._sizes: dict[int, int] = {}  # id(node) -> values under it, aliases expanded

        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                self._aliases += 1
                if self._aliases > MAX_YAML_ALIASES:
                    raise _YamlLimit(f"more than {MAX_YAML_ALIASES} aliases (MAX_YAML_ALIASES)")
                node = self.anchors.get(self.peek_event().anchor)
                if node is not None and id(node) not in self._sizes:
                    raise _YamlLimit("an alias inside the value it names (a recursive value)")
                return super().compose_node(parent, index)
            self._depth += 1
            if self._depth > MAX_YAML_DEPTH:
                raise _YamlLimit(f"nested deeper than {MAX_YAML_DEPTH} levels (MAX_YAML_DEPTH)")
            try:
                node = super().compose_node(parent, index)
            finally:
                self._depth -= 1
            sizes = self._sizes
            if isinstance(node, yaml.SequenceNode):
                size = 1 + sum(sizes[id(v)] for v in node.value)
            elif isinstance(node, yaml.MappingNode):
                size = 1 + sum(sizes[id(k)] + sizes[id(v)] for k, v in node.value)
                lines: dict[str, int] = {}
                for k, _ in node.value:  # the last of a key given twice would win, unseen
                    if isinstance(k, yaml.ScalarNode) and k.tag != "tag:yaml.org,2002:merge":
                        line = k.start_mark.line + 1
                        if k.value in lines:
                            raise _YamlTwice(
                                f"key {k.value!r} is given twice (lines {lines[k.value]} and "
                                f"{line})"
                            )
                        lines[k.value] = line
            else:
                size = 1
            if size > MAX_YAML_NODES:
                raise _YamlLimit(
                    f"more than {MAX_YAML_NODES:,} values once its aliases are expanded "
                    "(MAX_YAML_NODES)"
                )
            sizes[id(node)] = size
            return node

    _LOADERS[id(yaml)] = LimitedLoader
    return LimitedLoader


def save_yaml(values: Mapping[str, Any], path: str | Path) -> None:
    """Write a mapping as YAML, atomically (a temporary file, then a rename)."""
    import yaml

    p = Path(path)
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(yaml.safe_dump(dict(values), sort_keys=False))
    tmp.replace(p)
