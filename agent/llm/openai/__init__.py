"""The openai LLM provider."""
