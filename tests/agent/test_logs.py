"""The agent's log: every secret the agent may hold is redacted from the file and stderr."""

import logging

import pytest

from agent.config.settings import settings_from_config
from agent.logs import setup_logging

SECRETS = {
    "OLLAMA_API_KEY": "ollama-PLANTED-7f3a9c2e1b",
    "OPENAI_API_KEY": "sk-PLANTED-0123456789abcdef",
    "GEMINI_API_KEY": "gemini-PLANTED-5d4c3b2a19",
}


@pytest.fixture
def restore_root_logging():
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])


@pytest.mark.parametrize("variable", sorted(SECRETS))
def test_each_llm_key_is_redacted_from_the_log_file(tmp_path, restore_root_logging, variable):
    secret = SECRETS[variable]
    log_file = tmp_path / "agent.log"
    settings = settings_from_config({}, tmp_path / "config.json", {variable: secret})
    setup_logging(log_file, settings.secrets())
    logging.getLogger("safeclaw.agent.test").warning("provider said: bad key %s", secret)
    for handler in logging.getLogger().handlers:
        handler.flush()
    text = log_file.read_text()
    assert "provider said: bad key [REDACTED]" in text
    assert secret not in text
