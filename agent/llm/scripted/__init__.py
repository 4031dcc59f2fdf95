"""The scripted LLM provider."""
