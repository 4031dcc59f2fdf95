// Activity: each audit line in words, with its link, the policy's decision and a dry-run mark;
// filters, search and paging back ("Show older") through every line the dashboard holds.
"use strict";
import { api, el, link, when, showError } from "./dom.js";

const PAGE = 50;
let older = null;
let filesReadable = false;

export function activityItem(a) {
  const decision = a.decision ? "policy: " + a.decision + (a.error && !a.decision.startsWith("refused") ? ` (${a.error})` : "") : "";
  return el("li", { class: "record outcome-" + a.outcome + (a.setup ? " setup" : ""), "data-status": a.outcome, "data-id": a.id || "", "data-command": a.command_id || "" },
    el("span", { class: "sentence" }, a.sentence + (a.text ? ": " : "")),
    a.text ? el("q", { class: "text" }, a.text) : null,
    a.dry_run ? el("span", { class: "tag dry" }, "dry run") : null,
    el("span", { class: "meta" }, [a.origin_words, when(a.ts), decision].filter(Boolean).join(" · ")),
    (a.read || []).length ? el("span", { class: "meta read" }, "after reading: " + a.read.join("; ")) : null,
    a.link ? el("span", { class: "meta" }, " · ", link(a.link, "open on " + (a.platform_name || "the platform"))) : null);
}

function summarise() {
  const shown = document.querySelectorAll("#activity li.record").length;
  document.getElementById("activity-summary").textContent =
    `${shown} line(s) shown${filtered() ? " matching the filters" : ""}` + (older ? "; older ones below"
      : filesReadable ? "; that is the whole audit log" : "; that is all the dashboard holds (the routers' audit files keep every line: ./safeclaw audit verify)");
}

function filters() {
  const form = document.getElementById("activity-filters");
  const query = {};
  for (const [k, v] of new FormData(form).entries()) if (String(v).trim()) query[k] = String(v).trim();
  return query;
}

function filtered() { return Object.keys(filters()).length > 0; }

export async function loadActivity(more) {
  const params = new URLSearchParams({ limit: String(PAGE), ...filters() });
  if (more && older) params.set("before", older);
  try {
    const page = await api("/api/activity?" + params.toString());
    renderActivity(page.activity, more ? "append" : "replace");
    older = page.older;
    filesReadable = page.files === true;
    const button = document.getElementById("activity-older");
    button.hidden = !older;
    summarise();
    showError("");
  } catch (e) { showError(e.message); }
}

// A line arriving live joins the list only when no filter hides it (a filtered view is reloaded).
export function liveActivity(item) {
  if (filtered()) return;
  if (item.outcome !== "started" && item.command_id) {  // its "started" line has said all it could
    document.querySelectorAll(`#activity li[data-status="started"][data-command="${CSS.escape(item.command_id)}"]`)
      .forEach((n) => n.remove());
  }
  renderActivity([item], "prepend");
  summarise();
}

export function renderActivity(items, mode) {
  const ol = document.getElementById("activity");
  ol.querySelectorAll("li.empty").forEach((n) => n.remove());
  const nodes = items.map(activityItem);
  if (mode === "prepend") ol.prepend(...nodes.reverse());
  else if (mode === "append") ol.append(...nodes);
  else ol.replaceChildren(...nodes);
  if (!ol.children.length) ol.replaceChildren(el("li", { class: "empty" }, filtered() ? "Nothing matches these filters." : "Nothing yet."));
}

export function setupActivity() {
  const form = document.getElementById("activity-filters");
  form.addEventListener("submit", (event) => { event.preventDefault(); loadActivity(false); });
  form.addEventListener("change", () => loadActivity(false));
  form.addEventListener("reset", () => setTimeout(() => loadActivity(false), 0));
  document.getElementById("activity-older").addEventListener("click", () => loadActivity(true));
}
