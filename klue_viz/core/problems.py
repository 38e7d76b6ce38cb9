"""Problems found while reading a file: what went wrong, where, and for which guid."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Problem:
    """One unreadable or unusable record; `line` is 1-based, None when the file as a whole is at fault."""

    message: str
    line: int | None = None
    guid: str | None = None
    file: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        where = [self.file or "", f"line {self.line}" if self.line else "", f"guid {self.guid}" if self.guid else ""]
        prefix = ", ".join(w for w in where if w)
        return f"{prefix}: {self.message}" if prefix else self.message


def record_fault(err: Exception) -> str:
    """What was wrong with a record, in words: a KeyError's text is the bare key (`'premise'`), which reads as nothing
    to a user, so it is said as the field that is missing."""
    return f"missing field {err}" if isinstance(err, KeyError) else str(err)


class InputError(Exception):
    """A file that cannot be used at all (missing, empty, wrong task); the message is shown to the user as is."""
