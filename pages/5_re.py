"""The RE page: /re."""

from klue_viz.ui.task_page import task_page

task_page("re")
