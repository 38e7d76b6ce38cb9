"""Which folders the app's gold-folder box may read: the operator's policy (KLUE_VIZ_DATA_DIR, KLUE_VIZ_GOLD_ROOTS).

Its own concern, apart from loading and scoring gold (klue_viz.evaluate): only the app's pages ask it,
the CLI reads whatever path its user gives.
"""

from __future__ import annotations

import os
from pathlib import Path

from klue_viz.problems import InputError

#: Where the app may read gold folders from, besides KLUE_VIZ_DATA_DIR: folders separated by the OS path separator.
GOLD_ROOTS_ENV = "KLUE_VIZ_GOLD_ROOTS"
DATA_DIR_ENV = "KLUE_VIZ_DATA_DIR"
#: Never gold, whatever an operator allowed: the root itself and the kernel's virtual file systems.
FORBIDDEN_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))


def gold_roots() -> list[Path]:
    """The folders an operator allowed the app's gold-folder box to read under (KLUE_VIZ_DATA_DIR, KLUE_VIZ_GOLD_ROOTS)."""
    values = [os.environ.get(DATA_DIR_ENV, "")] + os.environ.get(GOLD_ROOTS_ENV, "").split(os.pathsep)
    roots = []
    for value in values:
        if value.strip():
            root = Path(value.strip()).expanduser().resolve()
            if root.is_dir() and root not in roots:
                roots.append(root)
    return roots


def allowed_gold_folder(text: str) -> Path:
    """A folder typed in the app's gold box, if it lies under a folder the operator allowed; else a one-line InputError."""
    raw = text.strip()
    if not raw:
        raise InputError("no folder given")
    if len(raw) > 1000 or "\x00" in raw:
        raise InputError("not a folder path")
    folder = Path(raw).expanduser()
    try:
        resolved = folder.resolve()
    except (OSError, RuntimeError):
        raise InputError(f"{raw}: cannot be resolved as a folder") from None
    if resolved == Path(resolved.anchor) or any(resolved == f or f in resolved.parents for f in FORBIDDEN_FOLDERS):
        raise InputError(f"{raw}: gold is never read from the root of the file system or from /proc, /sys or /dev")
    roots = gold_roots()
    if not roots:
        raise InputError(f"gold folders are off on this server: its operator allows them by setting {DATA_DIR_ENV} "
                         f"or {GOLD_ROOTS_ENV} (folders separated by '{os.pathsep}')")
    if not any(resolved == root or root in resolved.parents for root in roots):
        shown = ", ".join(str(r) for r in roots)
        raise InputError(f"{raw}: not under a folder this server allows gold from ({shown}; set by {DATA_DIR_ENV} and {GOLD_ROOTS_ENV})")
    if not resolved.is_dir():
        raise InputError(f"{raw}: no such folder")
    return resolved
