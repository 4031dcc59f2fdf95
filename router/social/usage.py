"""What `./safeclaw social` says to a person: its --help, and the line it shows before reading
when its input is a terminal (it would otherwise wait in silence)."""

from __future__ import annotations

import textwrap

from router.social.cli import COMMANDS, SEED_ERRORS

EXAMPLE = '{"command": "auth_test", "platform": "bsky"}'

TYPE_ONE_COMMAND = f"Type one command as JSON, e.g. {EXAMPLE}, then press Enter and Ctrl-D (Ctrl-C leaves)."


def usage() -> str:
    commands = textwrap.fill(f"Commands: {', '.join(COMMANDS)}. With \"action\" instead it runs any of the "
                             "router's actions by name (workspace/router_actions.json lists them).", 96)
    answers = textwrap.fill('The answer is {"success": true, ...} or {"success": false, "error": KIND, '
                            f'"message": "..."}}, where KIND is one of: {", ".join(sorted(SEED_ERRORS))}. '
                            '"reason" may say more (a limit reached, with "retry_after" in seconds).', 96)
    return f"""usage: ./safeclaw social < command.json

Runs one command with the router's credentials, prints one JSON answer and exits (0 when it
worked, 1 when it did not). It reads one JSON object from its input:

  echo '{EXAMPLE}' | ./safeclaw social
  echo '{{"command": "post", "platform": "bsky", "text": "Hello"}}' | ./safeclaw social
  echo '{{"action": "GET_PROFILE", "params": {{"platform": "bsky"}}}}' | ./safeclaw social

{commands}

{answers}

The router's rules, limits, dry run, approvals and audit log apply as they do to the agent.
Credentials come from router/.env and the environment (the environment wins); no secret is ever
printed, and no error shows a program trace or a platform's raw answer."""
