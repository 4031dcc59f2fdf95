"""Start the dashboard: `python dashboard/start_dashboard.py` (uvicorn; Ctrl-C or SIGTERM stops it).

Settings (environment or dashboard/.env): REDIS_URL (the control user), DASHBOARD_TOKEN (or
DASHBOARD_TOKEN_FILE), DASHBOARD_HOST (127.0.0.1), DASHBOARD_PORT (8080), DASHBOARD_PUBLIC_READ.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import uvicorn  # noqa: E402

from dashboard.app import create_app  # noqa: E402
from dashboard.guard import RequestGuard  # noqa: E402
from dashboard.settings import DEFAULT_ENV_FILE, ConfigError, DashboardSettings  # noqa: E402

log = logging.getLogger("safeclaw.dashboard")


def setup_logging(settings: DashboardSettings) -> None:
    settings.log_file.parent.mkdir(parents=True, exist_ok=True)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    handlers: list[logging.Handler] = [
        logging.FileHandler(settings.log_file, encoding="utf-8"),
        logging.StreamHandler(sys.stderr),
    ]
    root = logging.getLogger()
    root.handlers[:] = []
    for handler in handlers:
        handler.setFormatter(formatter)
        root.addHandler(handler)
    root.setLevel(logging.INFO)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./safeclaw python dashboard/start_dashboard.py",
        description=__doc__.split("\n\n")[0],
        epilog="See .env.example (dashboard section).",
    )
    parser.add_argument("--env-file", type=Path, default=DEFAULT_ENV_FILE)
    args = parser.parse_args(argv)
    try:
        settings = DashboardSettings.load(args.env_file)
    except ConfigError as exc:
        print(f"dashboard: {exc}", file=sys.stderr)
        return 2
    setup_logging(settings)
    if settings.host not in ("127.0.0.1", "::1", "localhost"):
        log.warning(
            "listening on %s, beyond this machine: the token travels in clear over HTTP; "
            "put a TLS proxy in front, or keep DASHBOARD_HOST=127.0.0.1",
            settings.host,
        )
        if not settings.origin:
            log.warning(
                "only the names %s are answered (DNS rebinding): set DASHBOARD_ORIGIN to the address "
                "you open it at (https://claw.example.net) to reach it under another name",
                RequestGuard(settings).names_text(),
            )
    app = create_app(settings)
    log.info(
        "dashboard on http://%s:%d (public read: %s)",
        settings.host,
        settings.port,
        "on" if settings.public_read else "off",
    )
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=2,
        server_header=False,
    )
    server = uvicorn.Server(config)
    server.run()
    return 0 if server.started else 1


if __name__ == "__main__":
    sys.exit(main())
