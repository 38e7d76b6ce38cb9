"""klue-viz: evaluation and error analysis for the eight KLUE tasks."""

__version__ = "0.1.0"
