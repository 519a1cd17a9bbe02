"""What a model file is, told from its first bytes and its zip directory (no torch, nothing
unpickled), so that each loader can refuse another library's file by naming the spec that
plays it: ``neural:model.zip`` says it is a Stable-Baselines3 model (``sb3:``), ``sb3:policy.pt``
that it is a torch file.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Literal

FileKind = Literal["missing", "sb3", "torch", "manifest", "zip", "other"]


def model_file_kind(path: str | Path) -> FileKind:
    """The kind of the file at `path`: "sb3" (a zip holding ``data`` and ``policy.pth``:
    ``model.save`` of SB3 or sb3-contrib), "torch" (a zip torch.save wrote: ``*/data.pkl``),
    "manifest" (a JSON text), "zip" (another or a damaged zip), "other" or "missing"."""
    path = Path(path)
    if not path.is_file():
        return "missing"
    with path.open("rb") as f:
        head = f.read(4)
    if head.lstrip()[:1] == b"{":
        return "manifest"
    if head != b"PK\x03\x04":
        return "other"
    try:
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return "zip"
    if "data" in names and "policy.pth" in names:
        return "sb3"
    if any(n.endswith("/data.pkl") for n in names):
        return "torch"
    return "zip"
