"""python -m evals explain [--live] [--provider P]: score the post explainer on its dataset.

Prints each post's verdict and the pass rate; writes evals/results/explain-<time>.json and
.html (open the .html in a browser). Offline by default: the dataset's posts are served by a
fake Bluesky AppView and read through a real router and Redis, so any provider can be scored
without the internet; the scripted provider replays the dataset's recorded replies."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from dotenv import load_dotenv

from agent.errors import AgentError
from agent.workspace.files import write_failure_reason, write_text_atomic
from evals.dataset import DEFAULT_DATASET, load_dataset
from evals.explain_eval import run_live, run_offline, scripted_factory, summarise
from evals.report import render_report

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "evals" / "results"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__.split("\n")[0])
    parser.add_argument("suite", choices=["explain"], help="which eval to run")
    parser.add_argument(
        "--live", action="store_true", help="read the real Bluesky AppView (items with a live_url)"
    )
    parser.add_argument(
        "--provider",
        help="LLM provider (default: the agent's config); 'scripted' replays the dataset's recorded replies",
    )
    parser.add_argument("--model", help="LLM model (default: the agent's config)")
    parser.add_argument("--dataset", type=Path, help="another dataset JSON file")
    parser.add_argument("--only", action="append", metavar="ID", help="run only this item (repeatable)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where results go (default: evals/results)"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    load_dotenv(REPO_ROOT / "agent" / ".env", override=False)
    try:
        return run(args)
    except AgentError as exc:
        print(f"evals: {exc}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace) -> int:
    items = load_dataset(args.dataset or DEFAULT_DATASET)
    if args.only:
        unknown = [name for name in args.only if name not in {item.id for item in items}]
        if unknown:
            raise AgentError(
                f"no item with id {unknown[0]!r} in the dataset; ids: " + ", ".join(item.id for item in items)
            )
        items = [item for item in items if item.id in args.only]
    if args.live and not any(item.live_url for item in items):
        raise AgentError(
            "--live reads the real AppView at each item's live_url, and no item has one: record "
            "checked public post URLs in the dataset's live_url fields first"
        )
    provider, model, llm = _provider(args)

    def say(line: str) -> None:
        print(line, flush=True)

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with tempfile.TemporaryDirectory(prefix="safeclaw-eval-") as scratch:
        if args.live:
            if llm is None:
                raise AgentError(
                    "--live needs a real provider: the scripted replies fit the offline fixtures only"
                )
            outcomes = run_live(items, llm, Path(scratch), say)
        else:
            outcomes = run_offline(
                items, (lambda replies: llm) if llm else scripted_factory, Path(scratch), say
            )
    results: dict[str, Any] = {
        "eval": "explain",
        "started_at": started,
        "provider": provider,
        "model": model,
        "live": args.live,
        "summary": summarise(outcomes),
        "posts": outcomes,
    }
    summary = results["summary"]
    print(
        f"pass rate: {summary['passed']}/{summary['posts']} = {summary['pass_rate']:.0%} "
        f"(citations valid {summary['citation_validity_rate']:.0%}, "
        f"{summary['bullets_per_answer']:.1f} bullets, {summary['iterations_per_post']:.1f} iterations, "
        f"{summary['llm_calls_per_post']:.1f} LLM calls, "
        f"{summary['tokens_per_post']:.0f} tokens per post)"
    )
    stem = args.out / f"explain-{started.replace(':', '')}-{provider}{'-live' if args.live else ''}"
    try:  # whole files or none: a full disk leaves no empty results behind
        args.out.mkdir(parents=True, exist_ok=True)
        write_text_atomic(stem.with_suffix(".json"), json.dumps(results, indent=1, ensure_ascii=False) + "\n")
        write_text_atomic(stem.with_suffix(".html"), render_report(results))
    except OSError as exc:
        raise AgentError(f"cannot write the results to {args.out}: {write_failure_reason(exc)}") from None
    print(f"results: {stem.with_suffix('.json')}\nreport:  {stem.with_suffix('.html')}")
    return 0


def _provider(args: argparse.Namespace) -> tuple[str, str, Any]:
    """(provider, model, the LLM to use or None for per-item scripted replies)."""
    if args.provider == "scripted":
        return "scripted", "recorded", None
    from agent.app import build_guard
    from agent.config.settings import load_settings
    from agent.cost.metered import meter
    from agent.llm import create_llm

    settings = load_settings()
    provider = args.provider or settings.llm.provider
    if provider == "scripted":
        return "scripted", "recorded", None
    same = provider == settings.llm.provider
    model = args.model or (settings.llm.model if same else "")
    chosen = replace(settings.llm, provider=provider, model=model)
    llm = create_llm(chosen)
    llm.check()  # an unreachable provider stops the run here, not as ten identical failures
    return provider, llm.model, meter(llm, build_guard(settings))  # evals spend the owner's budget too


if __name__ == "__main__":
    sys.exit(main())
