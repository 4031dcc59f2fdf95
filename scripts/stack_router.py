"""The router as `./safeclaw` runs it: started in its own session with its logs in logs/, and
ready once its heartbeat is in Redis.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from protocol.keys import Keys
from scripts.stack_processes import REPO_ROOT, Stack, StackError, die_with_parent

ROUTER_READY_SECONDS = 60.0


def start_router(args: argparse.Namespace, stack: Stack, env: dict[str, str]) -> subprocess.Popen[Any]:
    log_dir = Path(env.get("SAFECLAW_LOG_DIR") or REPO_ROOT / "logs")
    log_dir.mkdir(parents=True, exist_ok=True)
    env.setdefault("ROUTER_LOG_FILE", str(log_dir / "router.log"))
    with (log_dir / "router.console.log").open("ab") as console:
        router = subprocess.Popen(
            [sys.executable, str(REPO_ROOT / "router" / "start_router.py"), "--env-file",
             str(args.router_env)],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=console, stderr=console,
            start_new_session=True, preexec_fn=die_with_parent,
        )
    stack.record("router", router)
    return router


def wait_for_router(router: subprocess.Popen[Any], agent_url: str, keys: Keys, router_id: str,
                    stopped: Callable[[], bool] = lambda: False) -> None:
    """Until the router's heartbeat is in Redis (read with the agent's user, as `status` does), or
    the owner stops the start."""
    import redis  # the router is started before the runner pays for this import

    client = redis.Redis.from_url(agent_url, socket_connect_timeout=2, socket_timeout=5)
    deadline = time.monotonic() + ROUTER_READY_SECONDS
    try:
        while client.get(keys.router_heartbeat(router_id)) is None and not stopped():
            if router.poll() is not None:
                raise StackError(f"the router exited with code {router.returncode}; see logs/router.log "
                                 "and logs/router.console.log")
            if time.monotonic() > deadline:
                raise StackError(f"the router sent no heartbeat within {ROUTER_READY_SECONDS:.0f}s; "
                                 "see logs/router.log")
            time.sleep(0.1)
    finally:
        client.close()
