// Autonomy: on or off, the last cycle and its outcome, the next one, the pause, the last cycles.
"use strict";
import { api, el, when, ago } from "./dom.js";

function fact(term, value) { return [el("dt", {}, term), el("dd", {}, value)]; }

export async function loadAutonomy() {
  const a = await api("/api/autonomy");
  const facts = [];
  facts.push(...fact("Enabled", a.enabled === true ? "yes" : a.enabled === false ? "no (channels.autonomy.enabled in config.json)" : "unknown (config.json not readable here)"));
  facts.push(...fact("Last cycle", a.last ? `#${a.last.cycle ?? "?"} at ${when(a.last.ts)} (${ago(a.last.ts)}): ${a.last.words}` : "none yet"));
  facts.push(...fact("Next cycle", a.next_at ? `${when(a.next_at)}` : a.enabled ? "when the current one ends" : "none: autonomy is off"));
  facts.push(...fact("Paused", a.paused ? `${a.paused.words}${a.paused.until ? ", until " + when(a.paused.until) : ""}${a.paused.detail ? " (" + a.paused.detail + ")" : ""}` : "no"));
  document.getElementById("autonomy").replaceChildren(...facts);
  const cycles = a.cycles.map((c) => el("li", { "data-outcome": c.outcome },
    el("strong", {}, `Cycle ${c.cycle ?? "?"} · ${when(c.ts)}: `), c.words, ` (${c.details})`,
    c.detail ? el("span", { class: "meta" }, " — " + c.detail) : null));
  document.getElementById("cycles").replaceChildren(...(cycles.length ? cycles : [el("li", { class: "empty" }, "No cycle yet.")]));
}
