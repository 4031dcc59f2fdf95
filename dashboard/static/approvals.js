// Approvals: exactly what would happen (platform, action, every field it would publish, the post it
// answers, fenced with its author), when it expires, and Approve / Deny as ordinary buttons.
"use strict";
import { api, el, link, when, ago, showError } from "./dom.js";

const PLATFORMS = { bsky: "Bluesky", mastodon: "Mastodon", x: "X", reddit: "Reddit", moltbook: "Moltbook", telegram: "Telegram" };
export function platformName(p) { return PLATFORMS[p] || p || "an unknown platform"; }

function fieldList(payload) {
  if (!payload || typeof payload !== "object") return null;
  const rows = Object.entries(payload).filter(([, v]) => v !== null && v !== undefined && v !== "");
  if (!rows.length) return null;
  return el("dl", { class: "payload" }, ...rows.flatMap(([k, v]) => [
    el("dt", {}, k), el("dd", {}, typeof v === "string" ? v : JSON.stringify(v))]));
}

function repliedTo(a) {
  const post = a.reply_to || a.in_reply_to;
  if (!post || typeof post !== "object") return null;
  return el("figure", { class: "replied" },
    el("figcaption", {}, `In reply to ${post.author || "an unknown author"} (their words, not yours):`),
    el("blockquote", {}, post.text || ""),
    post.url ? el("p", {}, link(post.url)) : null);
}

function card(a, refresh) {
  const title = a.title || `${a.action || "An action"} on ${platformName(a.platform)}`;
  const approve = el("button", { class: "approve", type: "button", "aria-label": `Approve: ${title}` }, "Approve");
  const deny = el("button", { class: "deny", type: "button", "aria-label": `Deny: ${title}` }, "Deny");
  approve.addEventListener("click", () => decide(a.id, "approve", [approve, deny], refresh));
  deny.addEventListener("click", () => decide(a.id, "deny", [approve, deny], refresh));
  const expired = a.state === "expired";
  if (expired) { approve.disabled = true; deny.disabled = true; }
  const headingId = "approval-" + a.id;
  return el("li", { class: "approval", "data-id": a.id, "data-state": a.state, "aria-labelledby": headingId },
    el("h3", { id: headingId }, title),
    el("p", { class: "meta" },
      `Asked ${a.origin_words || "from " + (a.conversation || "an unknown conversation")} ${ago(a.requested_at)} (${a.action}); `,
      expired ? "expired: it will not run" : `expires ${when(a.expires_at)} (if nobody decides, it never runs)`),
    a.reason ? el("p", { class: "reason" }, "Why it waits: " + a.reason) : null,
    a.target ? el("p", {}, "Target: ", el("code", {}, a.target)) : null,
    el("p", { class: "label" }, "It would publish:"),
    el("div", { class: "text" }, a.text || "(no text)"),
    fieldList(a.payload || a.preview),
    repliedTo(a),
    el("div", { class: "actions" }, approve, deny),
    el("p", { class: "decided", role: "status" }));
}

async function decide(id, decision, buttons, refresh) {
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const result = await api(`/api/approvals/${encodeURIComponent(id)}/${decision}`, { method: "POST", body: "{}" });
    showError("");
    const li = document.querySelector(`.approval[data-id="${CSS.escape(id)}"] .decided`);
    if (li) li.textContent = result.message;
    setTimeout(refresh, 1500);
  } catch (e) { showError(e.message); buttons.forEach((b) => { b.disabled = false; }); }
}

export function renderApprovals(data, refresh) {
  const ul = document.getElementById("approvals");
  const list = data.approvals || [];
  if (!list.length) { ul.replaceChildren(el("li", { class: "empty" }, "Nothing waits for you.")); return; }
  const items = list.map((a) => card(a, refresh));
  if (data.total > list.length) items.push(el("li", { class: "empty" }, `${data.total - list.length} more wait; decide these first.`));
  ul.replaceChildren(...items);
}
