// Small helpers shared by every panel. Every text from the server is put in the page with
// textContent (el() appends strings as text nodes), never as HTML.
"use strict";

const TOKEN_KEY = "safeclaw-dashboard-token";

export function token() {
  const hash = new URLSearchParams(location.hash.slice(1));
  if (hash.get("token")) {
    sessionStorage.setItem(TOKEN_KEY, hash.get("token"));
    history.replaceState(null, "", location.pathname);  // the token leaves the address bar
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function saveToken(value) { sessionStorage.setItem(TOKEN_KEY, value.trim()); }

export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v; else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

export function showError(text) { document.getElementById("error").textContent = text || ""; }

// Without a good token the page shows only the token form (no panel full of errors).
export function askToken() {
  document.body.classList.add("locked");
  document.getElementById("live").textContent = "Live updates: off";
  document.getElementById("token-form").hidden = false;
  document.getElementById("token-input").focus();
}

export function unlock() {
  document.body.classList.remove("locked");
  document.getElementById("token-form").hidden = true;
}

export async function api(path, options) {
  const opts = Object.assign({ headers: {} }, options || {});
  const t = token();
  if (t) opts.headers.Authorization = "Bearer " + t;
  if (opts.body !== undefined) opts.headers["Content-Type"] = "application/json";
  const response = await fetch(path, opts);
  if (response.status === 401) { askToken(); throw new Error("the dashboard token is missing or wrong"); }
  const type = response.headers.get("content-type") || "";
  const data = type.includes("json") ? await response.json() : { text: await response.text() };
  if (!response.ok) throw new Error(data.message || response.statusText);
  return data;
}

export function when(ts) {
  if (typeof ts !== "number" || !isFinite(ts) || ts <= 0) return "an unknown time";
  const date = new Date(ts * 1000);
  const today = new Date().toDateString() === date.toDateString();
  const clock = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return today ? clock : date.toLocaleDateString([], { day: "numeric", month: "short" }) + " " + clock;
}

export function ago(ts) {
  if (typeof ts !== "number" || !isFinite(ts)) return "";
  const s = Math.max(0, Math.round(Date.now() / 1000 - ts));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

export function money(v) {
  if (typeof v !== "number" || !isFinite(v)) return "unknown";
  return "$" + (v !== 0 && Math.abs(v) < 0.01 ? v.toFixed(4) : v.toFixed(2));
}

// A link only for http(s) addresses; anything else (javascript:, data:) is shown as text.
export function link(url, label) {
  const safe = typeof url === "string" && /^https?:\/\//i.test(url);
  return safe ? el("a", { href: url, rel: "noopener noreferrer", target: "_blank" }, label || url) : el("span", {}, url || "");
}
