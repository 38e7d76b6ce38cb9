"""What an uploaded file may be: the size limit (checked before a file is read) and run/model names."""

from __future__ import annotations

import math
import os

from klue_viz.core.problems import InputError

MAX_UPLOAD_ENV = "KLUE_VIZ_MAX_UPLOAD_MB"
#: Well under Streamlit's own ceiling (server.maxUploadSize in .streamlit/config.toml), so our message is the one shown.
DEFAULT_MAX_UPLOAD_MB = 100
MAX_NAME = 200


class RunTooLarge(InputError):
    """A file over the upload limit, refused before it is read."""


def max_upload_bytes() -> int:
    """The operator's limit (KLUE_VIZ_MAX_UPLOAD_MB, default 100 MB) in bytes."""
    value = os.environ.get(MAX_UPLOAD_ENV, "")
    try:
        megabytes = float(value) if value.strip() else DEFAULT_MAX_UPLOAD_MB
    except ValueError:
        megabytes = DEFAULT_MAX_UPLOAD_MB
    return int(max(megabytes, 0) * 1024 * 1024)


def limit_megabytes() -> int:
    """The limit in whole megabytes, for Streamlit's uploader (`max_upload_size`), so the browser refuses a larger file at once."""
    return max(1, math.ceil(max_upload_bytes() / 1024 / 1024))


def limit_text() -> str:
    """The limit and how to raise it, for the uploaders' labels."""
    return f"up to {human_size(max_upload_bytes())} a file; the operator raises it with {MAX_UPLOAD_ENV}"


def check_size(name: str, size: int) -> None:
    """Refuse a file over the limit before anything reads it, saying the limit and how to raise it."""
    limit = max_upload_bytes()
    if size > limit:
        raise RunTooLarge(
            f"{name} is {human_size(size)}, over the {human_size(limit)} limit for a prediction file; nothing was stored. "
            f"The operator can raise it with {MAX_UPLOAD_ENV}=<megabytes> (and STREAMLIT_SERVER_MAX_UPLOAD_SIZE for the app's uploader)."
        )


def human_size(size: int) -> str:
    return f"{size / 1024 / 1024:.1f} MB" if size >= 1024 * 1024 else f"{size / 1024:.1f} KB"


def clean_name(text: str) -> str:
    """A run or model name: one line, no surrounding blanks, at most MAX_NAME characters."""
    return " ".join(str(text).split())[:MAX_NAME]
