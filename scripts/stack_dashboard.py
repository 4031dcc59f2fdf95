"""The dashboard as `./safeclaw` runs it: its environment, its token file, its address.

When no DASHBOARD_TOKEN is set (environment or dashboard/.env), a token is generated once into
`<run dir>/dashboard.token` (mode 0600) and only that path is printed. The dashboard gets the
control user's Redis login and nothing of the agent's or the router's secrets.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scripts.stack_env import (
    AGENT_ONLY_VARIABLES,
    CREDENTIAL_VARIABLES,
    ROUTER_ONLY_VARIABLES,
    merged,
    read_env_file,
    write_runtime_env,
)
from scripts.stack_processes import REPO_ROOT, Stack, dashboard_child_setup, say, shown_path
from scripts.stack_redis import free_port, read_or_create_secret

READY_SECONDS = 30.0
GRACE_SECONDS = 0.5  # the console waits this long at most for the dashboard, once the router is up
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
        # As uvicorn binds: a connection of the last run still in TIME_WAIT does not hold the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
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


@dataclass
class DashboardLaunch:
    plan: DashboardPlan
    process: subprocess.Popen[Any]
    log_dir: Path


def launch_dashboard(
    args: argparse.Namespace, stack: Stack, control_url: str | None
) -> DashboardLaunch | None:
    """Start the dashboard beside the stack (it gets ready while the router does); None when it
    is not started, said, never fatal."""
    if args.no_dashboard:
        return None
    if not control_url:
        say("no dashboard: with REDIS_URL given, it needs its own login (the control user): "
            "REDIS_URL=redis://control:PASSWORD@host:port/0 in dashboard/.env")
        return None
    plan = plan_dashboard(os.environ, read_env_file(args.dashboard_env), control_url, args.run_dir)
    if not port_is_free(plan.host, plan.port):  # a set port (an unset one is chosen free)
        say(f"no dashboard: its port {plan.port} (DASHBOARD_PORT) is in use by another program; set a "
            "free one in dashboard/.env, or leave it unset to have one chosen")
        return None
    write_runtime_env(args.run_dir / "dashboard.env", {"REDIS_URL": control_url})
    log_dir = Path(plan.env.get("SAFECLAW_LOG_DIR") or REPO_ROOT / "logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    with (log_dir / "dashboard.console.log").open("ab") as console:
        process = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "dashboard" / "start_dashboard.py"), "--env-file",
             str(args.dashboard_env)],
            cwd=REPO_ROOT, env=plan.env, stdin=subprocess.DEVNULL, stdout=console, stderr=console,
            start_new_session=True, preexec_fn=dashboard_child_setup,
        )
    stack.record("dashboard", process)
    return DashboardLaunch(plan, process, log_dir)


def settle_dashboard(stack: Stack, launch: DashboardLaunch | None) -> None:
    """Say where the dashboard is once it serves, waiting for it a moment at most: the console does
    not wait for a page (on 2 cores its start competes with the router's). One still starting is
    said so and watched; one that does not come up is stopped (its log says why)."""
    if launch is None:
        return
    log_file = launch.log_dir / "dashboard.console.log"
    token = (f"token in {shown_path(launch.plan.token_file)}" if launch.plan.token_file
             else "token: your DASHBOARD_TOKEN")

    def alive() -> bool:
        return launch.process.poll() is None

    if wait_until_serving(launch.plan, alive, GRACE_SECONDS):
        say(f"dashboard on {launch.plan.address} ({token})")
        return
    if not alive():
        say(f"the dashboard did not start; see {shown_path(log_file)}")
        stack.stop("dashboard")
        return
    say(f"dashboard on {launch.plan.address} ({token}), still starting; if it does not answer, see "
        f"{shown_path(log_file)}")

    def watch() -> None:
        if not wait_until_serving(launch.plan, alive):
            stack.stop("dashboard")

    threading.Thread(target=watch, name="dashboard-start", daemon=True).start()
