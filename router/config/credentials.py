"""Platform credentials: loaded by the router alone, from its environment or `router/.env`."""

from __future__ import annotations

import re
from collections.abc import Mapping

from protocol.credentials import PLATFORM_CREDENTIAL_VARIABLES, SECRET_CREDENTIAL_VARIABLES
from protocol.hidden import HiddenValues

# Other variables whose values are secrets by their name (LLM keys, bot tokens, passwords)
# are redacted too if they happen to be in the router's environment.
_SECRET_NAME = re.compile(r"(PASSWORD|PASSWD|SECRET|TOKEN|API_KEY|PRIVATE_KEY)$", re.IGNORECASE)


def load_credentials(env: Mapping[str, str]) -> HiddenValues:
    """Every known platform credential variable that is set (non-empty) in `env`; printed, its
    names only."""
    names = {name for variables in PLATFORM_CREDENTIAL_VARIABLES.values() for name in variables}
    return HiddenValues({name: env[name] for name in sorted(names) if env.get(name, "").strip()})


def platforms_with_credentials(credentials: Mapping[str, str]) -> list[str]:
    """Platforms whose every credential variable is present."""
    return sorted(
        platform
        for platform, variables in PLATFORM_CREDENTIAL_VARIABLES.items()
        if all(credentials.get(name) for name in variables)
    )


def secret_values(env: Mapping[str, str], credentials: Mapping[str, str]) -> list[str]:
    """The values the redactor must never let out: secret credentials and secret-named variables."""
    values = [value for name, value in credentials.items() if name in SECRET_CREDENTIAL_VARIABLES]
    values += [value for name, value in env.items() if _SECRET_NAME.search(name) and value.strip()]
    return sorted(set(values))
