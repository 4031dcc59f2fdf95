// The charts come drawn from the server as SVG text; they are parsed as XML (never as HTML) and
// only an <svg> root is put in the page.
"use strict";
import { api, el } from "./dom.js";

function place(id, svgText) {
  const box = document.getElementById(id);
  const doc = new DOMParser().parseFromString(svgText || "", "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.namespaceURI !== "http://www.w3.org/2000/svg" || root.localName !== "svg") {
    box.replaceChildren(el("p", { class: "hint" }, "This chart could not be drawn."));
    return;
  }
  root.querySelectorAll("script, foreignObject").forEach((n) => n.remove());
  box.replaceChildren(document.importNode(root, true));
}

export async function loadCharts() {
  const { charts, quota_note: quotaNote } = await api("/api/charts");
  place("chart-actions", charts.actions);
  place("chart-cost", charts.cost);
  place("chart-quotas", charts.quotas);
  const note = document.getElementById("quota-note");
  note.textContent = quotaNote || "";
  note.hidden = !quotaNote;
}
