// LLM cost and the governance files with the rule form.
"use strict";
import { api, el, money, showError } from "./dom.js";

export function renderCost(c) {
  const box = document.getElementById("cost");
  if (!c.available) { box.textContent = c.message; return; }
  if (c.free) { box.textContent = `${c.message} ${c.calls_today ?? 0} call(s) and ${c.tokens_today ?? 0} token(s) today.`; return; }
  const budget = (v) => (v == null ? "no budget set" : money(v));
  box.textContent = `Today ${money(c.today_usd)} of ${budget(c.daily_budget_usd)}; ` +
    `in all ${money(c.total_usd)} of ${budget(c.total_budget_usd)}; ` +
    `${c.calls_today ?? 0} call(s) and ${c.tokens_today ?? 0} token(s) today.`;
  if (c.outside_budget_usd != null && c.outside_today_usd) {
    box.textContent += ` Words from outside (strangers, autonomy): ${money(c.outside_today_usd)} of ` +
      `${money(c.outside_budget_usd)}.`;
  }
  if ((c.outside_spent || []).length) {
    box.textContent += ` Share spent, their turns refused until tomorrow: ${c.outside_spent.join(", ")}.`;
  }
}

export function renderGovernance(g) {
  const box = document.getElementById("governance");
  const parts = Object.entries(g.files).map(([name, text]) => el("details", {}, el("summary", {}, name), el("pre", {}, text)));
  if (!parts.length) parts.push(el("p", { class: "hint" }, "No governance files yet."));
  if (g.injected_rules.length) {
    parts.push(el("h3", {}, "Rules you gave, waiting for the agent (it takes them in within seconds)"));
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
    `#${p.number} ${p.rule}${p.why ? " — why: " + p.why : ""}${(p.sources || []).length ? " — from: " + p.sources.join("; ") : ""} `);
  if (p.accepted_at) li.append(el("span", { class: "decided", "data-state": "accepted" }, "accepted"));
  else if (requested) li.append(el("span", { class: "decided", "data-state": "requested" }, "accepted; the agent writes it into DOS.md within seconds"));
  else {
    const button = el("button", { type: "button", class: "accept", "aria-label": `Accept proposal ${p.number}` }, "Accept");
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

export function setupRuleForm() {
  document.getElementById("rule-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const rule = document.getElementById("rule-text").value, why = document.getElementById("rule-why").value;
    try {
      await api("/api/inject-rule", { method: "POST", body: JSON.stringify({ rule, why }) });
      document.getElementById("rule-result").textContent = "added: the agent takes it in within seconds";
      document.getElementById("rule-text").value = "";
      renderGovernance(await api("/api/governance"));
    } catch (e) { showError(e.message); }
  });
}
