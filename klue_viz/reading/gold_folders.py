"""Which folders the app's gold-folder box may read: the operator's policy (KLUE_VIZ_DATA_DIR, KLUE_VIZ_GOLD_ROOTS).

Its own concern, apart from loading and scoring gold (klue_viz.scoring.evaluate): only the app's pages ask it,
the CLI reads whatever path its user gives.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from klue_viz.core.lazy import lazy_module
from klue_viz.core.problems import InputError

#: Where the app may read gold folders from, besides KLUE_VIZ_DATA_DIR: folders separated by the OS path separator.
GOLD_ROOTS_ENV = "KLUE_VIZ_GOLD_ROOTS"
DATA_DIR_ENV = "KLUE_VIZ_DATA_DIR"
#: Never gold, whatever an operator allowed: the root itself and the kernel's virtual file systems.
FORBIDDEN_FOLDERS = (Path("/proc"), Path("/sys"), Path("/dev"))
if TYPE_CHECKING:
    import logging
else:  # only a refused folder writes to the log: `klue-viz evaluate` does not import it
    logging = lazy_module("logging")


def _log_refusal(message: str, *args: object) -> None:
    """A refused gold folder or file, for the server's operator (the user is told less: no allowed folder is named)."""
    logging.getLogger("klue_viz").warning(message, *args)


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
        _log_refusal("gold folder %r refused: not under the allowed folders %s", raw, ", ".join(str(r) for r in roots))
        raise InputError(f"{raw}: not under a folder this server allows gold from (its operator sets them with {DATA_DIR_ENV} "
                         f"and {GOLD_ROOTS_ENV}; the server log lists them)")
    try:
        is_folder = resolved.is_dir()
    except OSError:  # a name longer than the file system allows (ENAMETOOLONG) is not swallowed by is_dir
        is_folder = False
    if not is_folder:
        raise InputError(f"{raw[:200]}: no such folder")
    return resolved


def allowed_gold_file(path: Path) -> Path:
    """A file found in an allowed gold folder, resolved, if it still lies under an allowed folder; else a one-line InputError.

    The folder being allowed is not enough: a symbolic link inside it (to a folder outside, to /etc/passwd)
    is followed by the glob and by open(), so every file is resolved and checked before it is read."""
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError):
        raise InputError(f"{path.name}: cannot be resolved as a file") from None
    roots = gold_roots()
    if not resolved.is_file() or not any(root in resolved.parents for root in roots):
        _log_refusal("gold file %s refused: it resolves to %s, outside the allowed folders %s", path, resolved, ", ".join(map(str, roots)))
        raise InputError(f"{path.name}: a link that leads outside the folders this server allows gold from; it is not read")
    return resolved
