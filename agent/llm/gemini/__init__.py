"""The gemini LLM provider."""
