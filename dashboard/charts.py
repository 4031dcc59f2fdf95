"""Charts drawn on the server as SVG (no build step, no script): actions per hour by platform over
7 days, LLM cost per day over 30 days against the daily budget, and today's quota use per
platform. Every value is also a text label or a <title>, so it can be read, not only seen.

The SVG is built with ElementTree, so every name in it (a platform, a kind) is escaped text.
Only presentation attributes are used: the page's Content-Security-Policy allows no inline style.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from typing import Any

from dashboard.activity import KIND_WORDS, platform_name

HOUR = 3600
DAY = 86400
COLOURS = ("#1a56db", "#c2410c", "#047857", "#7e22ce", "#b91c1c", "#0e7490", "#4d7c0f", "#854d0e")


def _svg(width: int, height: int, title: str, desc: str, name: str) -> ET.Element:
    svg = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "viewBox": f"0 0 {width} {height}",
            "role": "img",
            "aria-labelledby": f"{name}-title {name}-desc",
            "class": "chart",
            "data-chart": name,
        },
    )
    ET.SubElement(svg, "title", {"id": f"{name}-title"}).text = title
    ET.SubElement(svg, "desc", {"id": f"{name}-desc"}).text = desc
    return svg


def _text(parent: ET.Element, x: float, y: float, words: str, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, "text", {"x": f"{x:.1f}", "y": f"{y:.1f}", **attrs})
    node.text = words
    return node


def _rect(parent: ET.Element, x: float, y: float, w: float, h: float, fill: str, tip: str) -> None:
    rect = ET.SubElement(
        parent,
        "rect",
        {"x": f"{x:.1f}", "y": f"{y:.1f}", "width": f"{w:.1f}", "height": f"{h:.1f}", "fill": fill},
    )
    ET.SubElement(rect, "title").text = tip


def _render(svg: ET.Element) -> str:
    return ET.tostring(svg, encoding="unicode")


def _day(ts: float) -> dt.date:
    return dt.datetime.fromtimestamp(ts, dt.UTC).date()


def actions_per_hour(hourly: dict[tuple[int, str], int], now: float) -> str:
    """Stacked bars, one per hour of the last 7 UTC days (today last), a colour per platform; each
    day's total above it and each platform's week total in the legend."""
    end = int(now) // DAY * DAY + DAY  # the end of today (UTC): seven whole days, today last
    start = end - 7 * DAY
    counts = {(h, p): n for (h, p), n in hourly.items() if start <= h < end}
    platforms = sorted({p for _, p in counts})
    totals = {p: sum(n for (_, q), n in counts.items() if q == p) for p in platforms}
    week = sum(totals.values())
    width, height, left, top, bottom = 760, 250, 40, 34, 200
    per_hour = {h: sum(n for (g, _), n in counts.items() if g == h) for h in range(start, end, HOUR)}
    peak = max(per_hour.values(), default=0) or 1
    words = ", ".join(f"{platform_name(p)} {totals[p]}" for p in platforms) or "none"
    svg = _svg(
        width, height, "Actions per hour, last 7 days", f"{week} actions in 7 days: {words}", "actions"
    )
    bar = (width - left - 10) / (7 * 24)
    scale = (bottom - top) / peak
    _text(svg, left - 6, top + 4, str(peak), **{"text-anchor": "end", "class": "axis"})
    _text(svg, left - 6, bottom, "0", **{"text-anchor": "end", "class": "axis"})
    ET.SubElement(
        svg,
        "line",
        {"x1": str(left), "y1": str(bottom), "x2": str(width - 10), "y2": str(bottom), "class": "axis-line"},
    )
    for i, hour in enumerate(range(start, end, HOUR)):
        x, y = left + i * bar, float(bottom)
        for p_index, platform in enumerate(platforms):
            n = counts.get((hour, platform), 0)
            if n:
                when = dt.datetime.fromtimestamp(hour, dt.UTC).strftime("%a %d %b %H:00 UTC")
                y -= n * scale
                _rect(
                    svg,
                    x,
                    y,
                    max(bar - 0.5, 0.5),
                    n * scale,
                    COLOURS[p_index % len(COLOURS)],
                    f"{platform_name(platform)}, {when}: {n}",
                )
    for d in range(7):
        day_start = start + d * DAY
        x = left + d * 24 * bar
        total = sum(per_hour.get(h, 0) for h in range(day_start, day_start + DAY, HOUR))
        label = _day(day_start + 1).strftime("%a %d")
        _text(svg, x + 12 * bar, bottom + 16, label, **{"text-anchor": "middle", "class": "axis"})
        _text(
            svg,
            x + 12 * bar,
            top - 8,
            str(total),
            **{"text-anchor": "middle", "class": "value", "data-day": _day(day_start + 1).isoformat()},
        )
        if d:
            ET.SubElement(
                svg,
                "line",
                {"x1": f"{x:.1f}", "y1": str(top), "x2": f"{x:.1f}", "y2": str(bottom), "class": "grid"},
            )
    x, y = float(left), 226.0
    for p_index, platform in enumerate(platforms):
        name = platform_name(platform)
        label = f"{name if len(name) <= 28 else name[:27] + '…'}: {totals[platform]}"
        step = 24 + 7.5 * len(label)
        if x + step > width and x > left:  # the legend wraps onto another row
            x, y = float(left), y + 20
        colour = COLOURS[p_index % len(COLOURS)]
        box = {"x": f"{x:.1f}", "y": f"{y:.0f}", "width": "12", "height": "12", "fill": colour}
        ET.SubElement(svg, "rect", box)
        _text(svg, x + 16, y + 11, label, **{"class": "legend", "data-platform": platform})
        x += step
    svg.set("viewBox", f"0 0 {width} {max(height, int(y) + 24)}")
    if not platforms:
        _text(
            svg,
            width / 2,
            (top + bottom) / 2,
            "Nothing done in the last 7 days (dry runs are not counted)",
            **{"text-anchor": "middle", "class": "empty"},
        )
    return _render(svg)


def cost_per_day(days: dict[str, float], budget: float | None, now: float) -> str:
    """A bar per UTC day of the last 30, its dollars written on it, and the daily budget as a line."""
    today = _day(now)
    dates = [today - dt.timedelta(days=29 - i) for i in range(30)]
    values = [days.get(d.isoformat(), 0.0) for d in dates]
    width, height, left, top, bottom = 760, 250, 56, 50, 200
    peak = max([*values, budget or 0.0]) or 1.0
    total = sum(values)
    budget_words = (
        f"against a daily budget of ${budget:.2f}" if budget is not None else "no daily budget known"
    )
    svg = _svg(
        width, height, "LLM cost per day, last 30 days", f"${total:.2f} in 30 days, {budget_words}", "cost"
    )
    bar = (width - left - 10) / 30
    scale = (bottom - top) / peak
    _text(svg, left - 6, top + 4, f"${peak:.2f}", **{"text-anchor": "end", "class": "axis"})
    _text(svg, left - 6, bottom, "$0", **{"text-anchor": "end", "class": "axis"})
    ET.SubElement(
        svg,
        "line",
        {"x1": str(left), "y1": str(bottom), "x2": str(width - 10), "y2": str(bottom), "class": "axis-line"},
    )
    for i, (day, usd) in enumerate(zip(dates, values, strict=True)):
        x = left + i * bar
        over = budget is not None and usd > budget
        if usd > 0:
            _rect(
                svg,
                x + 1,
                bottom - usd * scale,
                bar - 2,
                usd * scale,
                "#b91c1c" if over else "#1a56db",
                f"{day.isoformat()}: ${usd:.4f}",
            )
            # Written upwards from just above the bar, so thirty labels never overlap.
            label_x, label_y = x + bar / 2 + 4, bottom - usd * scale - 4
            _text(
                svg,
                label_x,
                label_y,
                f"${usd:.2f}",
                **{
                    "class": "value small",
                    "data-day": day.isoformat(),
                    "transform": f"rotate(-90 {label_x:.1f} {label_y:.1f})",
                },
            )
        if i % 5 == 4 or i == 29:
            _text(
                svg,
                x + bar / 2,
                bottom + 16,
                day.strftime("%d %b"),
                **{"text-anchor": "middle", "class": "axis"},
            )
    if budget is not None:
        y = bottom - budget * scale
        ET.SubElement(
            svg,
            "line",
            {"x1": str(left), "y1": f"{y:.1f}", "x2": str(width - 10), "y2": f"{y:.1f}", "class": "budget"},
        )
        _text(
            svg,
            width - 12,
            y - 4,
            f"daily budget ${budget:.2f}",
            **{"text-anchor": "end", "class": "value budget-label"},
        )
    _text(svg, left, 236, f"Total over 30 days: ${total:.2f}", **{"class": "legend"})
    if not total:
        words = "No LLM cost recorded in the last 30 days"
        _text(svg, width / 2, (top + bottom) / 2, words, **{"text-anchor": "middle", "class": "empty"})
    return _render(svg)


def quota_use(platforms: dict[str, dict[str, dict[str, int]]]) -> str:
    """One bar per platform and kind: how much of today's quota is used, with 'N of M' beside it."""
    rows = [
        (platform, kind, entry["used"], entry["limit"])
        for platform, kinds in sorted(platforms.items())
        for kind, entry in kinds.items()
        if kind in KIND_WORDS
    ]
    width, row_h, left, bar_w = 760, 26, 190, 400
    height = max(60, 20 + row_h * len(rows))
    words = (
        "; ".join(f"{platform_name(p)} {KIND_WORDS[k]} {u} of {m}" for p, k, u, m in rows)
        or "no quota reported"
    )
    svg = _svg(width, height, "Today's quota use per platform", words, "quotas")
    if not rows:
        _text(
            svg, width / 2, 36, "No router reports quotas yet", **{"text-anchor": "middle", "class": "empty"}
        )
    for i, (platform, kind, used, limit) in enumerate(rows):
        y = 10 + i * row_h
        label = f"{platform_name(platform)} {KIND_WORDS[kind]}"
        _text(svg, left - 8, y + 15, label, **{"text-anchor": "end", "class": "axis"})
        ET.SubElement(
            svg,
            "rect",
            {"x": str(left), "y": str(y + 3), "width": str(bar_w), "height": "16", "class": "track"},
        )
        share = min(1.0, used / limit) if limit else (1.0 if used else 0.0)
        colour = "#b91c1c" if share >= 1 else ("#b45309" if share >= 0.8 else "#047857")
        if used:
            _rect(svg, left, y + 3, bar_w * share, 16, colour, f"{label}: {used} of {limit}")
        _text(
            svg,
            left + bar_w + 10,
            y + 15,
            f"{used} of {limit}",
            **{"class": "value", "data-row": f"{platform}:{kind}"},
        )
    return _render(svg)


def all_charts(
    hourly: dict[tuple[int, str], int],
    days: dict[str, float],
    budget: float | None,
    quotas: dict[str, Any],
    now: float,
) -> dict[str, str]:
    return {
        "actions": actions_per_hour(hourly, now),
        "cost": cost_per_day(days, budget, now),
        "quotas": quota_use(quotas),
    }
