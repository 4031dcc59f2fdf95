"""The ollama LLM provider."""
