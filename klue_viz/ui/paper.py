"""The 'SVG' download of a drawn example: the card as one standalone picture for a paper or a slide (klue_viz.outputs.example_document)."""

from __future__ import annotations

import streamlit as st

from klue_viz.outputs.example_document import example_svg, svg_name
from klue_viz.scoring.evaluate import RunResult
from klue_viz.tasks.base import Task


def svg_download(task: Task, result: RunResult, guids: list[str]) -> None:
    """A download button for the card of `guids`; the SVG is written only when the button is pressed."""
    st.download_button("Download as SVG", lambda: example_svg(task, result.frames, guids).encode("utf-8"), file_name=svg_name(task, result.run, guids[0]),
                       mime="image/svg+xml", key=f"svg|{result.run}|{guids[0]}", on_click="ignore", type="tertiary", icon=":material/download:",
                       help="Gold and prediction in one standalone SVG file, with a legend; Hangul in Noto Sans CJK KR where it is installed")
