// SafeClaw dashboard: plain JavaScript modules, no build step. Every API call carries the token as
// a Bearer header (no cookies); the live stream is read with fetch() so it can carry it too.
"use strict";
import { api, askToken, el, saveToken, showError, token, unlock } from "./dom.js";
import { renderStatus, setupKill } from "./band.js";
import { renderApprovals } from "./approvals.js";
import { liveActivity, loadActivity, setupActivity } from "./activity.js";
import { loadCharts } from "./charts.js";
import { loadAutonomy } from "./autonomy.js";
import { renderCost, renderGovernance, setupRuleForm } from "./panels.js";

async function refreshStatus() { renderStatus(await api("/api/status")); }
async function refreshApprovals() { renderApprovals(await api("/api/approvals"), refreshApprovals); }

// Each panel loads on its own: one that fails says so in its own place and never hides another.
const PANELS = [
  ["band-headline", () => api("/api/status").then(renderStatus)],
  ["approvals", refreshApprovals],
  ["cost", () => api("/api/cost").then(renderCost)],
  ["governance", () => api("/api/governance").then(renderGovernance)],
  ["activity-summary", () => loadActivity(false)],
  ["chart-actions", loadCharts],
  ["autonomy", loadAutonomy],
];

async function loadAll() {
  const results = await Promise.allSettled(PANELS.map(([, load]) => load()));
  const failed = [];
  results.forEach((result, i) => {
    if (result.status === "fulfilled") return;
    const [id] = PANELS[i];
    failed.push(result.reason.message);
    const box = document.getElementById(id);
    const words = "Could not be read: " + result.reason.message;
    // The message in an element the panel may hold (a list item in a list, a pair in a dl).
    const tag = box.tagName;
    const parts = tag === "UL" || tag === "OL" ? [el("li", { class: "panel-error" }, words)]
      : tag === "DL" ? [el("dt", {}, "Error"), el("dd", { class: "panel-error" }, words)]
      : [el("span", { class: "panel-error" }, words)];
    box.replaceChildren(...parts);
  });
  if (failed.length === PANELS.length) throw new Error(failed[0]);
  showError(failed.length ? "Some panels could not be read: " + [...new Set(failed)].join("; ") : "");
}

// Cost, charts and autonomy follow new activity and state changes, at most once every 3 s.
let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => {
    refreshTimer = null;
    Promise.all([api("/api/cost").then(renderCost), loadCharts(), loadAutonomy()]).catch(() => {});
  }, 3000);
}

function handleEvent(block) {
  let name = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return;
  const value = JSON.parse(data);
  if (name === "status") { renderStatus(value); refreshSoon(); }
  else if (name === "approvals") renderApprovals(value, refreshApprovals);
  else if (name === "activity") { liveActivity(value); refreshSoon(); }
}

async function stream() {
  const live = document.getElementById("live");
  for (;;) {
    try {
      const headers = token() ? { Authorization: "Bearer " + token() } : {};
      const response = await fetch("/api/stream", { headers });
      if (response.status === 401) { askToken(); return; }
      if (!response.ok) throw new Error(response.statusText);
      live.className = "live on";
      live.textContent = "Live updates: on";
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          handleEvent(buffer.slice(0, cut));
          buffer = buffer.slice(cut + 2);
        }
      }
    } catch (e) { /* reconnect below */ }
    live.className = "live off";
    live.textContent = "Live updates: reconnecting";
    await new Promise((r) => setTimeout(r, 2000));
    loadAll().catch(() => {});
  }
}

async function start() {
  // No token: the page opens only if the dashboard allows reading without one (public read).
  if (!token()) {
    try { await api("/api/status"); } catch (e) { askToken(); return; }
  }
  unlock();
  try { await loadAll(); } catch (e) { showError(e.message); return; }
  stream();
}

document.addEventListener("DOMContentLoaded", () => {
  setupKill(refreshStatus);
  setupRuleForm();
  setupActivity();
  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    saveToken(document.getElementById("token-input").value);
    document.getElementById("token-input").value = "";
    start();
  });
  // A token put in the address of this open tab changes only the fragment: no reload, so read it here.
  window.addEventListener("hashchange", () => {
    const locked = !document.getElementById("token-form").hidden;
    if (locked && new URLSearchParams(location.hash.slice(1)).get("token")) start();
  });
  start();
});
