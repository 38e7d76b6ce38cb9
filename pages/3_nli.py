"""The NLI page: /nli."""

from klue_viz.ui.task_page import task_page

task_page("nli")
