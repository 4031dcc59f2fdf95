"""Pick the provider to run: Ollama as configured, or the embedded model when nothing else can answer.

    python -m agent.llm.select <configured>   # prints the provider on stdout, the reason on stderr
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

from agent.config.sections import LLMSettings
from agent.config.settings import read_environment
from agent.errors import AgentError

PROBE_TIMEOUT = 1.0


def ollama_answers(host: str, timeout: float = PROBE_TIMEOUT) -> bool:
    """True when GET {host}/api/tags answers 200 within `timeout` seconds."""
    try:
        with urllib.request.urlopen(host.rstrip("/") + "/api/tags", timeout=timeout) as response:
            return bool(response.status == 200)
    except (OSError, ValueError):  # URLError, refused, timeout, a bad OLLAMA_HOST
        return False


def choose_provider(llm: LLMSettings) -> tuple[str, str | None]:
    """(provider, why it differs from the configured one, or None when it does not)."""
    configured = llm.provider
    if configured != "ollama" or llm.has_cloud_key():
        return configured, None
    host = llm.ollama_host
    if ollama_answers(host):
        return configured, None
    return "local", (
        f"No Ollama answers at {host} and no cloud API key is set, so the small embedded model "
        "(SmolLM2, weak at tool use) is used; start `ollama serve` (or set OLLAMA_HOST) for better answers."
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: ./safeclaw python -m agent.llm.select <configured-provider>", file=sys.stderr)
        return 2
    try:
        provider, reason = choose_provider(LLMSettings.from_env(read_environment(), provider=argv[0]))
    except AgentError as exc:
        print(f"safeclaw: {exc}", file=sys.stderr)
        return 2
    print(provider)
    if reason:
        print(reason, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
