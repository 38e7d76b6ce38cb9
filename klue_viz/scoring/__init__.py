"""Scoring a prediction file against a gold: matching and evaluation (`evaluate`), bootstrap
intervals (`bootstrap`), per-slice metrics (`slicing`), filters (`filtering`), the user's own columns
(`user_features`), errors by surface form (`surface_forms`), harness logs and LLM outputs (`harness`,
`llm_outputs`) and a model across the benchmark (`benchmark`).
May import: tasks, drawing, reading, metrics, core.
"""
