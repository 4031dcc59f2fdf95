"""python -m agent.explain URL [--json]: progress on stderr, the explanation on stdout.

Exit status: 0 an answer that passed its checks and critique, 1 the best answer that did not,
2 no answer (the message says why)."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path
from typing import NoReturn

from dotenv import load_dotenv

from agent.errors import AgentError
from agent.explain.errors import ExplainError
from agent.explain.render import render_text
from agent.explain.run import MAX_ITERATIONS, explain_post

REPO_ROOT = Path(__file__).resolve().parents[2]


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # said by main, as JSON too under --json
        raise _UsageError(message)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = _Parser(
        prog="./safeclaw python -m agent.explain",
        description="Explain a Bluesky post with cited background bullets."
    )
    parser.add_argument("url", help="a bsky.app post URL (handle or DID) or an at:// URI")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON object")
    parser.add_argument("--max-iterations", type=int, default=MAX_ITERATIONS, help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        args = parse_args(argv)
    except _UsageError as exc:
        message = f"{exc}; usage: ./safeclaw python -m agent.explain URL [--json]"
        if "--json" in argv:
            print(json.dumps({"error": "usage", "message": message}))
        print(f"explain: {message}", file=sys.stderr)
        return 2
    load_dotenv(REPO_ROOT / "agent" / ".env", override=False)
    from agent.app import build_guard, build_llm, build_router
    from agent.config.settings import load_settings
    from agent.cost.metered import meter
    from agent.link.origin import Speaking, explain_origin
    from agent.link.redis_pool import build_redis

    def progress(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    router = None
    try:
        settings = load_settings()
        conn = build_redis(settings)
        # the owner's budget applies here too
        llm = meter(build_llm(settings), build_guard(settings, conn=conn))
        router = build_router(settings, conn)
        reader = Speaking(router, explain_origin(args.url))
        result = explain_post(args.url, reader, llm, progress, max(1, args.max_iterations))
    except ExplainError as exc:
        return _fail(args, exc.kind, exc.message)
    except AgentError as exc:
        return _fail(args, "setup", str(exc))
    except Exception as exc:  # a bug must still end in one clear line (and valid JSON), not a traceback
        logging.getLogger("safeclaw.explain").debug("explain crashed", exc_info=True)
        return _fail(
            args, "internal", f"an internal error ({type(exc).__name__}: {str(exc)[:200]}); please report it"
        )
    finally:
        close = getattr(router, "close", None)
        if close is not None:
            close()
    print(json.dumps(result.to_json(), ensure_ascii=False) if args.json else render_text(result))
    return 0 if result.passed else 1


def _fail(args: argparse.Namespace, kind: str, message: str) -> int:
    if args.json:
        print(json.dumps({"error": kind, "message": message}, ensure_ascii=False))
    print(f"explain: {message}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
