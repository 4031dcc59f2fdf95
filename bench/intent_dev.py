"""The model's choice of label alone, on the development requests the ranking was chosen on.

    .venv/bin/python bench/intent_dev.py     # prints a table, writes bench/results/intent_dev.json

`bench/data/intent_dev_requests.json` is apart from the everyday suite (bench/llm_local.py): how
the embedded model chooses (prompt, answers, normalisation, calibration) was compared here, and
the suite is only run to report. No keyword rule, no fill: only the label is judged.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.actions import local_actions
from agent.config.sections import LLMSettings
from agent.llm.local.decide import ClassifyThenFill
from agent.llm.local.llm import LocalLLM
from agent.llm.local.prompt_turns import persona_of
from agent.mind.loop import AgentLoop
from bench.local_suite import RecordingRouter, fresh_workspace

DEV = Path(__file__).resolve().parent / "data" / "intent_dev_requests.json"
RESULTS = Path(__file__).resolve().parent / "results" / "intent_dev.json"


def main() -> int:
    data: dict[str, Any] = json.loads(DEV.read_text(encoding="utf-8"))
    llm = LocalLLM(LLMSettings(provider="local", model="", timeout=300.0))
    llama = llm._loaded()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        loop = AgentLoop(
            fresh_workspace(Path(tmp) / "w", data["memory"]), llm, local_actions(), RecordingRouter()
        )
        snapshot = loop.snapshot("")
        engine = ClassifyThenFill(llama, persona_of(snapshot.template), use_rules=False)
        engine.warm_up(snapshot.request_for(""))
        for case in data["cases"]:
            request = snapshot.request_for(case["request"])
            started = time.perf_counter()
            label, ranking, _ = engine.classify(request, list(engine.offered(request)))
            seconds = time.perf_counter() - started
            top = [(r.name, round(r.score, 2)) for r in (ranking or [])[:3]]
            rows.append({**case, "chosen": label, "seconds": round(seconds, 3), "top": top})
            mark = "pass" if label == case["label"] else "FAIL"
            print(f"{mark} {seconds:6.2f} s  {case['label']:<14} -> {label:<14} {case['request']}")
    times = sorted(r["seconds"] for r in rows)
    summary = {
        "right": sum(r["chosen"] == r["label"] for r in rows),
        "total": len(rows),
        "median_s": round(statistics.median(times), 3),
        "p90_s": times[int(0.9 * (len(times) - 1))],
        "cases": rows,
    }
    print(
        f"{summary['right']}/{summary['total']} labels right; "
        f"median {summary['median_s']} s, p90 {summary['p90_s']} s"
    )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
