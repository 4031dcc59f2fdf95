"""Start the router: `python router/start_router.py` (from the repo root or from inside `router/`).

Reads REDIS_URL and the rest of its settings from the environment and `router/.env`, loads the
platform credentials (the router alone holds them), discovers the skills, and runs the worker
until SIGTERM or Ctrl-C, after which it finishes the command in hand and exits 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROUTER_DIR = Path(__file__).resolve().parent
REPO_ROOT = ROUTER_DIR.parent
# Run as a file, Python puts router/ first on the path, where router/queue/ would hide the standard
# library's `queue`: the path gets the repository root instead.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != ROUTER_DIR]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))


from protocol.ctrl_c import leave_on_ctrl_c  # noqa: E402
from protocol.installed_python import use_the_installed_python  # noqa: E402

use_the_installed_python(REPO_ROOT)
if __name__ == "__main__":
    leave_on_ctrl_c()  # until the worker's own stop is in place below: quietly, status 130

import argparse  # noqa: E402
import logging  # noqa: E402
import signal  # noqa: E402
from collections.abc import Mapping  # noqa: E402
from types import FrameType  # noqa: E402

from router.app import build_worker  # noqa: E402
from router.config.credentials import load_credentials, platforms_with_credentials, secret_values  # noqa: E402
from router.config.settings import DEFAULT_ENV_FILE, RouterSettings  # noqa: E402
from router.errors import ConfigError  # noqa: E402
from router.logs import setup_logging  # noqa: E402
from router.redaction import Redactor  # noqa: E402
from router.registry import Skill, discover_skills  # noqa: E402

log = logging.getLogger("safeclaw.router")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="./safeclaw router", description=__doc__.split("\n\n")[0],
        epilog="Settings (env or router/.env): REDIS_URL (required), COMMAND_QUEUE, RESPONSE_PREFIX, "
               "ROUTER_ID, "
               "ROUTER_REPLY_TTL, ROUTER_MAX_ATTEMPTS, ROUTER_DATA_DIR, ROUTER_DRY_RUN, ROUTER_KILL_SWITCH, "
               "ROUTER_RATE_LIMITS, ROUTER_REQUIRE_APPROVAL, ROUTER_LOG_FILE, ROUTER_LOG_LEVEL, "
               "ROUTER_HEARTBEAT_TTL, and the hard bounds: ROUTER_QUOTAS, ROUTER_PACING, "
               "ROUTER_MOLTBOOK_ACCOUNT_CREATED, ROUTER_DUPLICATE_THRESHOLD, ROUTER_DUPLICATE_DAYS, "
               "ROUTER_DUPLICATE_SCOPE, ROUTER_CIRCUIT_FAILURES, ROUTER_CIRCUIT_OPEN_SECONDS. "
               "See .env.example.",
    )
    parser.add_argument("--env-file", type=Path, default=DEFAULT_ENV_FILE,
                        help=f"dotenv file to read (default: {DEFAULT_ENV_FILE})")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None, extra_skills: Mapping[str, Skill] | None = None) -> int:
    """`extra_skills` lets a test run the real entry point with skills of its own."""
    args = parse_args(argv)
    try:
        settings = RouterSettings.load(args.env_file)
    except ConfigError as exc:
        print(f"router: {exc}", file=sys.stderr)
        return 2
    credentials = load_credentials(settings.env)
    redactor = Redactor([*secret_values(settings.env, credentials), settings.redis_password])
    if redactor.too_short:
        print("router: a credential value is shorter than 4 characters; refusing to run with it",
              file=sys.stderr)
        return 2
    setup_logging(settings.log_file, settings.log_level, redactor)
    try:
        skills = {**discover_skills(), **(extra_skills or {})}
    except (ImportError, TypeError, ValueError) as exc:
        log.exception("cannot load the skills: %s", exc)
        return 2
    log.info("platforms with credentials: %s", ", ".join(platforms_with_credentials(credentials)) or "none")
    try:
        worker = build_worker(settings, skills, credentials, redactor)
    except ConfigError as exc:  # a policy setting naming an unknown action or effect
        log.error("%s", exc)
        return 2

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        log.info("%s received; finishing the command in hand, then stopping", signal.Signals(signum).name)
        worker.stop()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    try:
        worker.run()
    except ConfigError as exc:
        log.error("%s", exc)
        return 2
    except Exception:
        # Logged through the redacting handlers: a raw traceback on stderr could carry a secret.
        log.exception("the router stopped on an unexpected error")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
