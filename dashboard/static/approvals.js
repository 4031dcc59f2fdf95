// Approvals: exactly what would happen (platform, action, every field it would publish, the post it
// answers, fenced with its author), when it expires, and Approve / Deny as ordinary buttons.
"use strict";
import { api, el, link, when, ago, showError } from "./dom.js";

const PLATFORMS = { bsky: "Bluesky", mastodon: "Mastodon", x: "X", reddit: "Reddit", moltbook: "Moltbook", telegram: "Telegram" };
export function platformName(p) { return PLATFORMS[p] || p || "an unknown platform"; }

// The payload as the router shows it: [{field, label, value}], every field the platform receives.
function fieldList(payload) {
  let rows = [];
  if (Array.isArray(payload)) rows = payload.filter((p) => p && typeof p === "object").map((p) => [p.label || p.field, p.value]);
  else if (payload && typeof payload === "object") rows = Object.entries(payload);
  rows = rows.filter(([, v]) => v !== null && v !== undefined && v !== "");
  if (!rows.length) return null;
  return el("dl", { class: "payload" }, ...rows.flatMap(([k, v]) => [
    el("dt", {}, String(k)), el("dd", {}, typeof v === "string" ? v : JSON.stringify(v))]));
}

// The post a reply answers, fenced and attributed: never mistaken for the owner's words.
function repliedTo(a) {
  const origin = a.origin && typeof a.origin === "object" ? a.origin : {};
  const field = (Array.isArray(a.payload) ? a.payload : []).find((p) => p && p.field === "reply_to");
  const post = a.reply_to || a.in_reply_to || (origin.author || origin.post || field ? {
    author: origin.author, url: origin.post || (field && field.value), text: origin.author_words && origin.author_words.join("\n") } : null);
  if (!post || typeof post !== "object") return null;
  return el("figure", { class: "replied" },
    el("figcaption", {}, `In reply to ${post.author || "a post by someone else"} (their words, not yours):`),
    post.text ? el("blockquote", {}, post.text) : null,
    post.url ? el("p", {}, link(post.url)) : null);
}

function readBefore(a) {
  const read = Array.isArray(a.read) ? a.read.filter((r) => typeof r === "string") : [];
  if (!read.length) return null;
  return el("div", { class: "read" }, el("p", { class: "label" }, "Before asking, the turn had read (outside text):"),
    el("ul", {}, ...read.map((r) => el("li", {}, r))));
}

function card(a, refresh) {
  const title = a.title || `${a.action || "An action"} on ${platformName(a.platform)}`;
  const approve = el("button", { class: "approve", type: "button", "aria-label": `Approve: ${title}` }, "Approve");
  const deny = el("button", { class: "deny", type: "button", "aria-label": `Deny: ${title}` }, "Deny");
  approve.addEventListener("click", () => decide(a.id, "approve", [approve, deny], refresh));
  deny.addEventListener("click", () => decide(a.id, "deny", [approve, deny], refresh));
  const expired = a.state === "expired";
  const decided = a.decision && typeof a.decision === "object" ? a.decision : null;
  if (expired || decided) { approve.disabled = true; deny.disabled = true; }
  const headingId = "approval-" + a.id;
  return el("li", { class: "approval", "data-id": a.id, "data-state": a.state, "aria-labelledby": headingId },
    el("h3", { id: headingId }, title),
    el("p", { class: "meta" },
      `Asked ${a.origin_words || "from " + (a.conversation || "an unknown conversation")} ${ago(a.requested_at)}; `,
      expired ? "expired: it will not run" : `expires ${when(a.expires_at)} (if nobody decides, it never runs)`),
    a.reason ? el("p", { class: "reason" }, "Why it waits: " + a.reason) : null,
    a.target ? el("p", {}, "Target: ", el("code", {}, a.target)) : null,
    el("p", { class: "label" }, `It would publish on ${platformName(a.platform)}:`),
    el("div", { class: "text" }, a.text || "(no text)"),
    Array.isArray(a.payload) && a.payload.length ? el("p", { class: "label" }, "Every field the platform would receive:") : null,
    fieldList(a.payload),
    repliedTo(a),
    readBefore(a),
    el("div", { class: "actions" }, approve, deny),
    el("p", { class: "decided", role: "status" }, decided
      ? `${decided.decision === "approve" ? "Approved" : "Denied"} by ${decided.by === "dashboard" ? "you, from the dashboard" : decided.by}; waiting for a router to ${decided.decision === "approve" ? "run it once" : "close it"}.`
      : ""));
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
  const total = typeof data.total === "number" ? data.total : list.length;
  document.getElementById("approvals-title").textContent = total ? `Waiting for your approval (${total})` : "Waiting for your approval";
  if (!list.length) { ul.replaceChildren(el("li", { class: "empty" }, "Nothing waits for you.")); return; }
  const items = list.map((a) => card(a, refresh));
  if (data.total > list.length) items.push(el("li", { class: "empty" }, `${data.total - list.length} more wait; decide these first.`));
  ul.replaceChildren(...items);
}
