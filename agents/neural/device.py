"""Where a network runs: the one reading of a ``device`` setting, for the trainers' configs
and the model agents' specs alike.

A setting is ``auto`` (a CUDA GPU when torch finds one, else the CPU), ``cpu``, ``cuda`` (the
current GPU) or ``cuda:N`` (GPU number N). :func:`check_device` checks the form without
importing torch (a config saved on a machine with a GPU still loads on one without);
``present=True`` also checks that the machine has the device. :func:`torch_device` is the
torch device a setting names, ``auto`` resolved, refused in one line when it is not there.
``auto`` logs its choice once a process (this module's logger, INFO; :func:`auto_choice`
says it in words, :func:`device_used` as a run records and prints it). :func:`learner_copy`
is the trainers' one rule for where a network learns: the network itself on the CPU (a CPU
run is what it always was, bit for bit), a copy elsewhere.
"""

from __future__ import annotations

import copy
import logging
import re
from typing import TYPE_CHECKING, TypeVar

from fourhundred_env.errors import ConfigError, did_you_mean

if TYPE_CHECKING:
    import torch

_Module = TypeVar("_Module")

__all__ = [
    "DEVICE_FORMS",
    "auto_choice",
    "check_device",
    "device_used",
    "devices_present",
    "learner_copy",
    "torch_device",
]

DEVICE_FORMS = "'auto', 'cpu', 'cuda' or 'cuda:N' (N a GPU's number, from 0)"
"""What a device setting may be, as error messages say it."""

_FORM = re.compile(r"(?:auto|cpu|cuda|cuda:(?:0|[1-9][0-9]{0,3}))")

_log = logging.getLogger(__name__)
_told: set[str] = set()  # the devices `auto` chose that this process has logged


def check_device(text: object, present: bool = False) -> str:
    """`text` if it is a device setting (see the module docstring), else ConfigError naming
    the forms; with `present`, also ConfigError when the machine lacks it (torch is imported
    only for a ``cuda`` setting)."""
    if not isinstance(text, str) or not _FORM.fullmatch(text):
        hint = (
            did_you_mean(text, ["auto", "cpu", "cuda", "cuda:0"]) if isinstance(text, str) else ""
        )
        raise ConfigError(
            f"device={text!r}: expected {DEVICE_FORMS}" + (f"; {hint}" if hint else "")
        )
    if present and text.startswith("cuda"):
        torch_device(text)
    return text


def devices_present() -> list[str]:
    """The devices torch can run on here: ``cpu``, then ``cuda:0``, ``cuda:1``... ."""
    import torch

    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    return ["cpu", *(f"cuda:{i}" for i in range(gpus))]


def torch_device(text: str) -> torch.device:
    """The torch device of the setting `text`: ``auto`` is ``cuda`` when torch finds a GPU,
    else ``cpu``. ConfigError in one line for a malformed setting, or for a device the
    machine does not have (naming the ones it has)."""
    import torch

    check_device(text)
    if text == "cpu":
        return torch.device("cpu")
    present = devices_present()
    if text == "auto":
        chosen = torch.device("cuda" if len(present) > 1 else "cpu")
        if str(chosen) not in _told:  # once a process: every bot and trainer resolves it
            _told.add(str(chosen))
            _log.info("device=auto chose %s", auto_choice(chosen))
        return chosen
    wanted = "cuda:0" if text == "cuda" else text
    if wanted not in present:
        have = "cpu only" if len(present) == 1 else ", ".join(present)
        choices = ", ".join(repr(d) for d in present)
        raise ConfigError(
            f"device {text!r} is not available: this machine has {have}: expected "
            f"{choices} or 'auto'"
        )
    return torch.device(text)


def auto_choice(device: torch.device) -> str:
    """What ``device=auto`` chose, in words for a log line or a run's metadata: ``cpu (no
    CUDA GPU found)`` or ``cuda (NVIDIA H100 80GB HBM3; GPUs here: 1)``."""
    return f"{device} ({_why_auto(device)})"


def device_used(setting: str, device: torch.device) -> str:
    """The device a run used, as it records and prints it: the device of `setting`
    (``cpu``, ``cuda:1``), or for ``auto`` what it chose and why (``cpu (device=auto: no
    CUDA GPU found)``)."""
    if setting != "auto":
        return str(device)
    return f"{device} (device=auto: {_why_auto(device)})"


def _why_auto(device: torch.device) -> str:
    if device.type != "cuda":
        return "no CUDA GPU found"
    gpus = len(devices_present()) - 1
    try:
        import torch

        name = torch.cuda.get_device_name(device) + "; "
    except Exception:  # a name is a courtesy: no reason to fail the run
        name = ""
    return f"{name}GPUs here: {gpus}"


def learner_copy(net: _Module, device: torch.device) -> _Module:
    """The network a trainer fits on `device`: `net` itself on the CPU, else a copy of it
    moved there (the caller copies the weights back, or to its CPU copies, when it needs
    them: the games are played on the CPU)."""
    if device.type == "cpu":
        return net
    return copy.deepcopy(net).to(device)  # type: ignore[attr-defined]
