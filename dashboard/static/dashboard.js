// SafeClaw dashboard: plain JavaScript, no build step. Every API call carries the token as a
// Bearer header (no cookies); the live stream is read with fetch() so it can carry it too.
// Every text from the server is put in the page with textContent, never as HTML.
"use strict";

const TOKEN_KEY = "safeclaw-dashboard-token";
let killOn = false;

function token() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {
    sessionStorage.setItem(TOKEN_KEY, hash.get("token"));
    history.replaceState(null, "", location.pathname);  // the token leaves the address bar
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v; else node.setAttribute(k, v);
  }
  for (const child of children) node.append(child instanceof Node ? child : String(child ?? ""));
  return node;
}

function showError(text) { document.getElementById("error").textContent = text || ""; }

async function api(path, options) {
  const opts = Object.assign({ headers: {} }, options || {});
  const t = token();
  if (t) opts.headers.Authorization = "Bearer " + t;
  if (opts.body !== undefined) opts.headers["Content-Type"] = "application/json";
  const response = await fetch(path, opts);
  if (response.status === 401) { askToken(); throw new Error("the dashboard token is missing or wrong"); }
  const data = await response.json();
  if (!response.ok) throw new Error(data.message || response.statusText);
  return data;
}

function askToken() {
  const form = document.getElementById("token-form");
  form.hidden = false;
}

function age(seconds) { return seconds === undefined || seconds === null ? "" : ` (${Math.round(seconds)}s)`; }

function renderStatus(s) {
  const bar = document.getElementById("status-bar");
  const pills = [];
  const pill = (part, state, label) => pills.push(el("span", { class: "pill " + state, "data-part": part, "data-state": state }, label));
  pill("agent", s.agent.state, "agent" + age(s.agent.age));
  if (!s.routers.length) pill("routers", "red", "no router");
  for (const r of s.routers) pill("router:" + r.router_id, r.state, "router " + r.router_id + age(r.age));
  pill("redis", s.redis.state, "redis" + (s.redis.queue_depth !== undefined ? ` · queue ${s.redis.queue_depth}` : ""));
  pill("llm", s.llm.state, "LLM " + (s.llm.detail || ""));
  const a = s.autonomy || {};
  if (a.available) {
    const label = a.stuck ? "autonomy STUCK: " + a.reason
      : `autonomy cycle ${a.cycle} · ${a.paused ? "paused (" + a.paused + ")" : a.action}`;
    pill("autonomy", a.state, label);
  }
  bar.replaceChildren(...pills);
  if (s.kill_switch) renderKill(s.kill_switch);
}

function renderKill(k) {
  killOn = k.on || (k.environment_floor || []).length > 0;
  const state = document.getElementById("kill-state");
  const button = document.getElementById("kill-toggle");
  let text = k.on ? `ON: every side effect is denied (since ${new Date((k.since || 0) * 1000).toLocaleString()}, by ${k.by || "?"})`
                  : "off: routers act under their policy";
  if ((k.environment_floor || []).length) text += ` · held on by ROUTER_KILL_SWITCH on ${k.environment_floor.join(", ")}`;
  state.textContent = text;
  state.dataset.on = String(k.on);
  button.textContent = k.on ? "Resume posting" : "Stop all posting";
  button.className = k.on ? "on" : "off";
}

function renderApprovals(list) {
  const ul = document.getElementById("approvals");
  if (!list.length) { ul.replaceChildren(el("li", { class: "empty" }, "none")); return; }
  ul.replaceChildren(...list.map((a) => {
    const approve = el("button", { class: "approve", type: "button" }, "Approve");
    const deny = el("button", { class: "deny", type: "button" }, "Deny");
    approve.addEventListener("click", () => decide(a.id, "approve", approve, deny));
    deny.addEventListener("click", () => decide(a.id, "deny", approve, deny));
    const expires = new Date(a.expires_at * 1000).toLocaleString();
    return el("li", { class: "approval", "data-id": a.id, "data-state": a.state },
      el("div", {}, `${a.action} on ${a.platform || "?"} (${a.kind || "?"}) · asked by ${a.conversation} · ${a.state}, expires ${expires}`),
      el("div", { class: "text" }, a.text || ""),
      approve, " ", deny);
  }));
}

async function decide(id, decision, ...buttons) {
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const result = await api(`/api/approvals/${encodeURIComponent(id)}/${decision}`, { method: "POST", body: "{}" });
    showError("");
    const li = document.querySelector(`.approval[data-id="${CSS.escape(id)}"]`);
    if (li) li.append(el("div", { class: "decided" }, result.message));
  } catch (e) { showError(e.message); buttons.forEach((b) => { b.disabled = false; }); }
}

function renderActivity(records, prepend) {
  const ol = document.getElementById("activity");
  const items = records.map((r) => {
    const effect = r.effect || {};
    const when = new Date((r.ts || 0) * 1000).toLocaleTimeString();
    const origin = r.origin && typeof r.origin === "object" ? r.origin.conversation : (r.origin || "");
    const what = `${when} ${r.action || "?"} ${effect.platform ? "on " + effect.platform : ""} · ${origin}`;
    const li = el("li", { class: "record status-" + (r.status || ""), "data-status": r.status || "" },
      `${what} → ${r.status}${r.decision ? " (" + r.decision + ")" : ""}`);
    if (r.text) li.append(el("div", { class: "text" }, r.text));
    if (r.url) li.append(el("div", {}, r.url));
    return li;
  });
  if (prepend) ol.prepend(...items.reverse()); else ol.replaceChildren(...items);
  while (ol.children.length > 200) ol.lastChild.remove();
}

function renderStats(s) {
  const rows = Object.entries(s.today).map(([kind, v]) =>
    el("tr", { "data-kind": kind }, el("td", {}, { post: "posts", reply: "replies", like: "likes" }[kind] || kind),
       el("td", {}, String(v.count)),
       el("td", {}, v.limit === null || v.limit === undefined ? "(no limit)" : `of ${v.limit}`)));
  document.getElementById("stats").replaceChildren(...rows);
}

function renderCost(c) {
  const box = document.getElementById("cost");
  if (!c.available) { box.textContent = c.message; return; }
  const money = (v) => (typeof v === "number" ? "$" + v.toFixed(4) : "?");
  box.textContent = `today ${money(c.today_usd)} of ${c.daily_budget_usd == null ? "no budget" : money(c.daily_budget_usd)} · ` +
    `total ${money(c.total_usd)} of ${c.total_budget_usd == null ? "no budget" : money(c.total_budget_usd)} · ` +
    `${c.calls_today ?? 0} calls, ${c.tokens_today ?? 0} tokens today`;
}

function renderGovernance(g) {
  const box = document.getElementById("governance");
  const parts = Object.entries(g.files).map(([name, text]) => el("details", {}, el("summary", {}, name), el("pre", {}, text)));
  if (!parts.length) parts.push(el("p", { class: "hint" }, "no governance files yet"));
  if (g.injected_rules.length) {
    parts.push(el("h3", {}, "Injected rules waiting for the agent (it applies them within seconds)"));
    parts.push(el("ul", { id: "injected" }, ...g.injected_rules.map((r) => el("li", {}, `${r.rule}${r.why ? " — " + r.why : ""}`))));
  }
  const requested = g.accept_requested || [];
  if ((g.proposals || []).length) {
    parts.push(el("h3", {}, "Proposed rules (only you can accept one into DOS.md)"));
    parts.push(el("ul", { id: "proposals" }, ...g.proposals.map((p) => proposalItem(p, requested.includes(p.number)))));
  }
  box.replaceChildren(...parts);
}

function proposalItem(p, requested) {
  const li = el("li", { class: "proposal", "data-number": String(p.number) },
    `#${p.number} ${p.rule}${p.why ? " — why: " + p.why : ""} `);
  if (p.accepted_at) li.append(el("span", { class: "decided", "data-state": "accepted" }, "accepted"));
  else if (requested) li.append(el("span", { class: "decided", "data-state": "requested" }, "accepted; the agent writes it into DOS.md within seconds"));
  else {
    const button = el("button", { type: "button", class: "accept" }, "Accept");
    button.addEventListener("click", () => acceptProposal(p.number, button));
    li.append(button);
  }
  return li;
}

async function acceptProposal(number, button) {
  button.disabled = true;
  try {
    await api(`/api/proposals/${number}/accept`, { method: "POST", body: "{}" });
    renderGovernance(await api("/api/governance"));
    showError("");
  } catch (e) { showError(e.message); button.disabled = false; }
}

async function loadAll() {
  const [status, approvals, activity, stats, cost, governance] = await Promise.all([
    api("/api/status"), api("/api/approvals"), api("/api/activity?limit=50"), api("/api/stats"),
    api("/api/cost"), api("/api/governance")]);
  renderStatus(status); renderApprovals(approvals.approvals); renderActivity(activity.activity, false);
  renderStats(stats); renderCost(cost); renderGovernance(governance);
}

async function stream() {
  const live = document.getElementById("live");
  for (;;) {
    try {
      const headers = token() ? { Authorization: "Bearer " + token() } : {};
      const response = await fetch("/api/stream", { headers });
      if (response.status === 401) { askToken(); return; }
      live.className = "live on";
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
    await new Promise((r) => setTimeout(r, 2000));
  }
}

function handleEvent(block) {
  let name = "message", data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data += line.slice(6);
  }
  if (!data) return;
  const value = JSON.parse(data);
  if (name === "status") renderStatus(value);
  else if (name === "approvals") renderApprovals(value.approvals);
  else if (name === "activity") { renderActivity([value], true); api("/api/stats").then(renderStats).catch(() => {}); }
}

function setupKill() {
  const confirmBox = document.getElementById("kill-confirm");
  document.getElementById("kill-toggle").addEventListener("click", () => {
    document.getElementById("kill-question").textContent = killOn
      ? "Resume posting? Routers will act again under their policy." : "Stop all posting now? Every side effect will be denied.";
    confirmBox.hidden = false;
  });
  document.getElementById("kill-no").addEventListener("click", () => { confirmBox.hidden = true; });
  document.getElementById("kill-yes").addEventListener("click", async () => {
    confirmBox.hidden = true;
    try {
      const result = await api("/api/kill", { method: "POST", body: JSON.stringify({ on: !killOn }) });
      renderKill({ on: result.kill_switch.on, by: result.kill_switch.by, since: result.kill_switch.ts, environment_floor: [] });
      showError("");
    } catch (e) { showError(e.message); }
  });
}

function setupForms() {
  document.getElementById("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById("token-input").value.trim());
    document.getElementById("token-form").hidden = true;
    start();
  });
  document.getElementById("rule-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const rule = document.getElementById("rule-text").value, why = document.getElementById("rule-why").value;
    try {
      await api("/api/inject-rule", { method: "POST", body: JSON.stringify({ rule, why }) });
      document.getElementById("rule-result").textContent = "injected";
      document.getElementById("rule-text").value = "";
      renderGovernance(await api("/api/governance"));
    } catch (e) { showError(e.message); }
  });
}

async function start() {
  try { await loadAll(); showError(""); } catch (e) { showError(e.message); return; }
  stream();
}

document.addEventListener("DOMContentLoaded", () => { setupKill(); setupForms(); token(); start(); });
