"""The local LLM provider."""
