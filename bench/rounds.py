"""Alternating rounds: the sides of a comparison timed in turns, so a change in the machine's load
falls on every side alike.

Each round times every side twice, half its samples each time, in an order that rotates from round
to round (two sides: A B A B, then B A B A), and keeps each side's percentiles, the ratios asked
for (of the p50s) and the load average. Each round is printed as it ends.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

Side = Callable[[int], list[float]]  # takes that many samples (seconds each)
Percentiles = Callable[[list[float]], dict[str, float]]  # must give "p50_ms"


def alternating_rounds(
    sides: Mapping[str, Side],
    rounds: int,
    per_round: int,
    percentiles: Percentiles,
    ratios: Mapping[str, tuple[str, str]],
    label: str = "",
) -> list[dict[str, Any]]:
    """`ratios`: name -> (side, floor side), each round's p50 of the first over the second's."""
    names = list(sides)
    rows: list[dict[str, Any]] = []
    for index in range(rounds):
        shift = index % len(names)
        order = names[shift:] + names[:shift]
        samples: dict[str, list[float]] = {name: [] for name in names}
        for _ in range(2):
            for name in order:
                samples[name] += sides[name](per_round // 2)
        row: dict[str, Any] = {name: percentiles(samples[name]) for name in names}
        for ratio, (side, floor) in ratios.items():
            row[ratio] = round(row[side]["p50_ms"] / row[floor]["p50_ms"], 2)
        row["load_average"] = round(os.getloadavg()[0], 2)
        rows.append(row)
        timings = ", ".join(f"{name} p50 {row[name]['p50_ms']} ms" for name in names)
        shown = ", ".join(f"{ratio} {row[ratio]}" for ratio in ratios)
        print(f"{label}round {index + 1}: {timings}; {shown}; load average {row['load_average']}", flush=True)
    return rows
