"""Evaluation harnesses: `python -m evals explain` scores the post explainer on a dataset."""
