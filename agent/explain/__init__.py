"""Explain a Bluesky post to someone outside the author's bubble: cited bullets, checked.

from agent.explain import explain_post
result = explain_post(url, router, llm, progress=print)
"""

from agent.explain.errors import ExplainError
from agent.explain.render import render_text
from agent.explain.run import ExplainResult, explain_post

__all__ = ["ExplainError", "ExplainResult", "explain_post", "render_text"]
