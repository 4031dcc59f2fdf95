// The state band: red while the kill switch is on, amber in dry run, one line per part in words.
"use strict";
import { api, el, when, ago, showError } from "./dom.js";

let killOn = false;
const STATE_WORDS = { ok: "OK", warn: "Needs a look", bad: "Problem", off: "Off", setup: "Set up", unknown: "Unknown" };

export function renderStatus(s) {
  const band = document.getElementById("band");
  band.className = "band level-" + s.level;
  band.dataset.level = s.level;
  document.getElementById("band-headline").textContent = s.headline;
  document.title = `${s.headline} · SafeClaw`;  // what a background tab shows
  renderKill(s.kill_switch);
  const dry = document.getElementById("dry-run");
  dry.hidden = !s.dry_run.on || s.headline === s.dry_run.words;
  dry.textContent = s.dry_run.words;
  const setup = document.getElementById("setup");
  setup.hidden = !s.setup.needed || s.headline === s.setup.words;
  setup.textContent = s.setup.words;
  document.getElementById("parts").replaceChildren(...s.parts.map((p) =>
    el("li", { class: "part state-" + p.state, "data-part": p.part, "data-state": p.state },
      el("span", { class: "badge" }, STATE_WORDS[p.state] || p.state),
      el("strong", {}, p.title), " ", el("span", { class: "words" }, p.words),
      p.fix ? el("span", { class: "fix" }, (p.state === "off" ? "To turn it on: " : "How to fix: ") + p.fix) : null)));
}

function renderKill(k) {
  const state = document.getElementById("kill-state");
  const button = document.getElementById("kill-toggle");
  const fix = document.getElementById("kill-fix");
  if (!k) { state.textContent = "unknown while Redis does not answer"; state.dataset.on = "unknown"; button.hidden = true; return; }
  killOn = k.on;
  let words = k.words;
  if (k.on && k.since) words += ` at ${when(k.since)} (${ago(k.since)})`;
  if (k.on) words += ".";
  state.textContent = words;
  state.dataset.on = String(k.on);
  fix.hidden = !k.fix;
  fix.textContent = k.fix ? "How to fix: " + k.fix : "";
  button.hidden = k.on && !k.liftable;
  button.textContent = k.on ? "Resume posting" : "Stop all posting";
  button.className = k.on ? "lift" : "stop";
}

export function setupKill(refresh) {
  const confirmBox = document.getElementById("kill-confirm");
  const toggle = document.getElementById("kill-toggle");
  toggle.addEventListener("click", () => {
    document.getElementById("kill-question").textContent = killOn
      ? "Resume posting? The routers will post, reply, like and delete again, within your rules."
      : "Stop all posting now? Nothing will be posted, replied to, liked or deleted until you resume.";
    confirmBox.hidden = false;
    document.getElementById("kill-yes").focus();
  });
  document.getElementById("kill-no").addEventListener("click", () => { confirmBox.hidden = true; toggle.focus(); });
  document.getElementById("kill-yes").addEventListener("click", async () => {
    confirmBox.hidden = true;
    try {
      await api("/api/kill", { method: "POST", body: JSON.stringify({ on: !killOn }) });
      showError("");
      await refresh();
      toggle.focus();
    } catch (e) { showError(e.message); }
  });
}
