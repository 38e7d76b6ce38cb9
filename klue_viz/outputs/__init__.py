"""Things a user takes away: the self-contained HTML report (`report`), the LLM answer card
(`answer_card`) and a drawn example as a standalone document (`example_document`).
May import: discovery, compare, store, scoring, tasks, drawing, reading, metrics, core.
"""
