"""The lowest floor: the containers and small services every other floor shares.

Problems found while reading (`problems`), the per-example frames and scores that flow between floors
(`results`), exact JSON (`exact_json`), the bounded shared cache (`cache`), lazy imports (`lazy`) and the
statistics of human votes (`crowd`). May import: nothing of klue_viz.
"""
