"""Evaluation harnesses: `python -m agent.evals explain` scores the post explainer on a dataset."""
