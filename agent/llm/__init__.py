"""LLM providers, one subpackage each, imported only when chosen: an unused one needs no install."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from agent.errors import ConfigError
from agent.llm.base import BaseLLM, LLMError

if TYPE_CHECKING:
    from agent.config.sections import LLMSettings

__all__ = ["PROVIDERS", "BaseLLM", "LLMError", "create_llm"]

# provider name -> (module, class); the first is the default.
_CLASSES = {
    "ollama": ("agent.llm.ollama.llm", "OllamaLLM"),
    "openai": ("agent.llm.openai.llm", "OpenAILLM"),
    "gemini": ("agent.llm.gemini.llm", "GeminiLLM"),
    "local": ("agent.llm.local.llm", "LocalLLM"),
    "scripted": ("agent.llm.scripted.llm", "ScriptedLLM"),
}
PROVIDERS: tuple[str, ...] = tuple(_CLASSES)


def create_llm(settings: LLMSettings) -> BaseLLM:
    """The LLM object of `settings.provider`. An empty model means the provider's default.

    Raises ConfigError for an unknown provider, LLMError when the provider's library is not
    installed or a key it needs is missing.
    """
    provider = settings.provider
    if provider not in _CLASSES:
        raise ConfigError(f"unknown LLM provider {provider!r}; known providers: {', '.join(PROVIDERS)}")
    module_name, class_name = _CLASSES[provider]
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise LLMError(provider, f"its client library is not installed ({e.name})",
                       "run `pip install -r requirements.txt`") from None
    cls = getattr(module, class_name)
    llm: BaseLLM = cls.from_settings(settings) if provider == "scripted" else cls(settings)
    return llm
