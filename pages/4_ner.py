"""The NER page: /ner."""

from klue_viz.ui.task_page import task_page

task_page("ner")
