"""The dashboard as `./safeclaw` runs it: its environment, its token file, its address.

When no DASHBOARD_TOKEN is set (environment or dashboard/.env), a token is generated once into
`<run dir>/dashboard.token` (mode 0600) and only that path is printed. The dashboard gets the
control user's Redis login and nothing of the agent's or the router's secrets.
"""

from __future__ import annotations

import socket
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from scripts.stack_env import AGENT_ONLY_VARIABLES, CREDENTIAL_VARIABLES, ROUTER_ONLY_VARIABLES, merged
from scripts.stack_redis import free_port, read_or_create_secret

READY_SECONDS = 30.0
DEFAULT_PORT = 8080


@dataclass(frozen=True)
class DashboardPlan:
    env: dict[str, str]
    host: str
    port: int
    token_file: Path | None  # the generated token's file, or None when the user set a token

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def plan_dashboard(
    environ: Mapping[str, str], dashboard_file: Mapping[str, str], control_url: str, run_dir: Path
) -> DashboardPlan:
    """The dashboard's environment: the shell's minus every secret of the agent and the router."""
    secrets = CREDENTIAL_VARIABLES | AGENT_ONLY_VARIABLES | ROUTER_ONLY_VARIABLES
    env = {k: v for k, v in environ.items() if k not in secrets and not k.startswith("ROUTER_")}
    env["REDIS_URL"] = control_url
    settings = merged(dashboard_file, env)
    token_file = None
    if not settings.get("DASHBOARD_TOKEN", "").strip() and not settings.get("DASHBOARD_TOKEN_FILE"):
        token_file = run_dir / "dashboard.token"
        read_or_create_secret(token_file)
        env["DASHBOARD_TOKEN_FILE"] = str(token_file)
    host = settings.get("DASHBOARD_HOST", "").strip() or "127.0.0.1"
    raw_port = settings.get("DASHBOARD_PORT", "").strip()
    port = int(raw_port) if raw_port.isdigit() else DEFAULT_PORT
    if not raw_port and not port_is_free(host, port):
        port = free_port()  # 8080 is taken: any free port, printed below
    env["DASHBOARD_PORT"] = str(port)
    return DashboardPlan(env, host, port, token_file)


def wait_until_serving(plan: DashboardPlan, alive: object, seconds: float = READY_SECONDS) -> bool:
    """True once the page answers; False if the process ended (`alive()` false) or time ran out."""
    deadline = time.monotonic() + seconds
    host = "127.0.0.1" if plan.host in ("0.0.0.0", "::", "") else plan.host
    url = f"http://{'[' + host + ']' if ':' in host else host}:{plan.port}/"
    while time.monotonic() < deadline:
        if callable(alive) and not alive():
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    return False
