// Activity: each audit line in words, with its link, the policy's decision and a dry-run mark.
"use strict";
import { el, link, when } from "./dom.js";

export function activityItem(a) {
  const li = el("li", { class: "record outcome-" + a.outcome, "data-status": a.outcome, "data-id": a.id || "" },
    el("span", { class: "sentence" }, a.sentence),
    a.text ? el("q", { class: "text" }, a.text) : null,
    a.dry_run ? el("span", { class: "tag dry" }, "dry run") : null,
    el("span", { class: "meta" }, ` · ${a.origin_words} · ${when(a.ts)}`),
    a.decision ? el("span", { class: "decision" }, "Policy: " + a.decision + (a.error && !a.decision.startsWith("refused") ? ` (${a.error})` : "")) : null,
    a.link ? link(a.link, "Open on " + (a.platform_name || "the platform")) : null);
  return li;
}

export function renderActivity(items, mode) {
  const ol = document.getElementById("activity");
  const nodes = items.map(activityItem);
  if (mode === "prepend") ol.prepend(...nodes.reverse());
  else if (mode === "append") ol.append(...nodes);
  else ol.replaceChildren(...nodes);
  if (!ol.children.length) ol.replaceChildren(el("li", { class: "empty" }, "Nothing matches."));
  else ol.querySelectorAll("li.empty").forEach((n) => { if (ol.children.length > 1) n.remove(); });
}
