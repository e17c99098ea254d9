// The mnemo console: a client of the JSON API under /v1, routed by the URL's hash.
//
// Every page is built with DOM calls and textContent, never innerHTML: memory text is user
// data. The key lives in sessionStorage (this tab only) and travels in the Authorization
// header, never in a URL. Every change goes through the API, so what the page reports (the
// gate's verdict, an error's message) is the API's own words.
"use strict";

const KEY = "mnemo.key";
const TENANT = "mnemo.tenant"; // set only when signed in with the admin key
const ADMIN = "mnemo.admin";

// ---- DOM helpers --------------------------------------------------------------------------

/** An element with attributes (on* keys become listeners) and children (strings are text). */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "text") el.textContent = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

const main = () => document.getElementById("main");
let fieldIds = 0;

/** A labelled control: every input of the console has a visible label. */
function field(label, control) {
  const id = control.id || `f${++fieldIds}`;
  control.id = id;
  return h("div", {}, h("label", { for: id }, label), control);
}

/** Replaces the page's content; arrays among `nodes` are spread, empty slots skipped. */
function show(...nodes) {
  main().replaceChildren(...nodes.flat(Infinity).filter((n) => n !== null && n !== undefined && n !== false));
}

function errorBox(message) {
  return h("p", { class: "error", role: "alert" }, message);
}

function okBox(message) {
  return h("p", { class: "ok", role: "status" }, message);
}

function setStatus(text) {
  document.getElementById("status").textContent = text;
}

function date(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return d.toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric", timeZone: "UTC" });
}

function dateTime(iso) {
  if (!iso) return "";
  return `${date(iso)} ${new Date(iso).toISOString().slice(11, 16)} UTC`;
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function badge(text, cls) {
  return h("span", { class: `badge ${cls || ""}` }, text);
}

// ---- API -----------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message, code) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** Calls the API with the signed-in key; resolves to JSON (or text), rejects with its message. */
async function api(method, path, body, key) {
  const headers = { Authorization: `Bearer ${key || sessionStorage.getItem(KEY)}` };
  const tenant = sessionStorage.getItem(TENANT);
  if (!key && tenant && path.startsWith("/v1/") && !path.startsWith("/v1/admin/")) headers["X-Mnemo-Tenant"] = tenant;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  setStatus(`${method} ${path.split("?")[0]}…`);
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    setStatus("");
    throw new ApiError(0, `The server could not be reached: ${e.message}`, "network");
  }
  setStatus("");
  const type = res.headers.get("content-type") || "";
  const data = type.includes("json") ? await res.json() : await res.text();
  if (!res.ok) {
    const message = data && data.message ? data.message : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message, data && data.code);
  }
  return data;
}

function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** Runs an action, putting its error (the API's message) into `where` instead of throwing. */
async function attempt(where, action) {
  where.replaceChildren();
  try {
    return await action();
  } catch (e) {
    where.replaceChildren(errorBox(e.message));
    return undefined;
  }
}

// ---- routing -------------------------------------------------------------------------------

function route() {
  const hash = location.hash.replace(/^#/, "") || "/users";
  const [path, search] = hash.split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(search || "") };
}

function go(parts, params) {
  const path = parts.map(encodeURIComponent).join("/");
  location.hash = `#/${path}${params ? query(params) : ""}`;
}

/**
 * Shows the page at `hash` with exactly one render: a changed hash renders through its
 * `hashchange` event, an unchanged one directly. Setting the hash and rendering as well drew
 * the page twice, and the second draw replaced a form someone was already typing into.
 */
function openPage(hash) {
  if (location.hash === hash) render();
  else location.hash = hash;
}

/** Drops the hash without a `hashchange`, so the page drawn next is the only one drawn. */
function clearHash() {
  history.replaceState(null, "", location.pathname + location.search);
}

async function render() {
  const nav = document.getElementById("nav");
  if (!sessionStorage.getItem(KEY)) {
    nav.hidden = true;
    return signIn();
  }
  const admin = sessionStorage.getItem(ADMIN) === "1";
  const tenant = sessionStorage.getItem(TENANT);
  if (admin && !tenant) {
    nav.hidden = true;
    return tenants();
  }
  nav.hidden = false;
  document.getElementById("who").textContent = admin ? `admin, tenant ${tenant}` : "tenant key";
  document.getElementById("switch-tenant").hidden = !admin;
  const { parts, params } = route();
  for (const a of nav.querySelectorAll("a")) {
    a.toggleAttribute("aria-current", a.getAttribute("href") === `#/${parts[0]}`);
    if (a.hasAttribute("aria-current")) a.setAttribute("aria-current", "page");
  }
  try {
    if (parts[0] === "user" && parts[1]) {
      const user = parts[1];
      const tab = parts[2] || "memories";
      if (tab === "memos") return await memoBook(user, params);
      if (tab === "context") return await contextPreview(user, params);
      if (tab === "privacy") return await privacy(user);
      return await memories(user, params);
    }
    if (parts[0] === "candidates") return await candidates(params);
    if (parts[0] === "policies") return await policies();
    return await users(params);
  } catch (e) {
    if (e.status === 401) {
      signOut(`Signed out: ${e.message}`);
      return undefined;
    }
    show(errorBox(e.message));
    return undefined;
  } finally {
    // Focus moves to the new page unless the page put it on a control of its own.
    if (!main().contains(document.activeElement)) main().focus();
  }
}

// ---- sign in -------------------------------------------------------------------------------

function signOut(message) {
  sessionStorage.clear();
  clearHash();
  signIn(message);
}

function signIn(message) {
  document.getElementById("nav").hidden = true;
  const key = h("input", { type: "password", name: "key", autocomplete: "off", required: true, id: "api-key" });
  const out = h("div", {});
  if (message) out.append(errorBox(message));
  const form = h(
    "form",
    {
      onsubmit: async (ev) => {
        ev.preventDefault();
        const k = key.value.trim();
        if (!k) {
          out.replaceChildren(errorBox("Enter an API key."));
          return;
        }
        await attempt(out, async () => {
          // A tenant key reads its tenant's users; the admin key reads the key list.
          try {
            await api("GET", "/v1/users", undefined, k);
            sessionStorage.setItem(KEY, k);
          } catch (e) {
            if (e.status !== 401) throw e;
            try {
              await api("GET", "/v1/admin/keys", undefined, k);
            } catch {
              throw new ApiError(401, `That API key was not accepted: ${e.message}`);
            }
            sessionStorage.setItem(KEY, k);
            sessionStorage.setItem(ADMIN, "1");
          }
          openPage("#/users");
        });
      },
    },
    field("API key", key),
    h("p", { class: "meta" }, "A tenant key opens that tenant; the admin key (MNEMO_ADMIN_KEY) sees every tenant. The key stays in this tab only."),
    h("button", { type: "submit" }, "Sign in"),
  );
  show(h("h1", {}, "Sign in"), form, out);
  key.focus();
}

async function tenants() {
  const data = await api("GET", "/v1/admin/keys");
  const names = [...new Set(data.items.map((k) => k.tenant))].sort();
  const list = h("ul", {}, names.map((t) => h("li", {}, h("button", {
    type: "button",
    class: "plain",
    onclick: () => {
      sessionStorage.setItem(TENANT, t);
      openPage("#/users");
    },
  }, `Open tenant ${t}`))));
  const other = h("input", { name: "tenant" });
  const form = h("form", {
    class: "row",
    onsubmit: (ev) => {
      ev.preventDefault();
      if (!other.value.trim()) return;
      sessionStorage.setItem(TENANT, other.value.trim());
      openPage("#/users");
    },
  }, field("Another tenant", other), h("button", { type: "submit" }, "Open"));
  show(
    h("h1", {}, "Tenants"),
    h("p", { class: "meta" }, "Signed in with the admin key: pick the tenant to look into."),
    names.length ? list : h("p", {}, "No tenant has a key yet."),
    form,
    h("button", { type: "button", class: "plain", onclick: () => signOut() }, "Sign out"),
  );
}

// ---- users ---------------------------------------------------------------------------------

async function users(params) {
  const text = params.get("text") || "";
  const box = h("input", { type: "search", name: "text", value: text });
  const form = h("form", {
    class: "row",
    role: "search",
    onsubmit: (ev) => {
      ev.preventDefault();
      go(["users"], { text: box.value.trim() });
    },
  }, field("Search users", box), h("button", { type: "submit" }, "Search"));
  const data = await api("GET", `/v1/users${query({ text })}`);
  const list = data.items.length
    ? h("ul", { class: "plain" }, data.items.map((u) => h("li", { class: "card" },
      h("a", { href: `#/user/${encodeURIComponent(u.user_id)}` }, u.user_id),
      h("p", { class: "meta" },
        u.chats.length
          ? `some memories private to chats: ${u.chats.join(", ")}`
          : "every memory shared across their chats",
        u.agents.length ? ` · agents: ${u.agents.join(", ")}` : ""))))
    : h("p", {}, text ? `No user matches "${text}".` : "No user has memories yet.");
  show(h("h1", {}, "Users"), form, list);
}

function userTabs(user, current) {
  const tab = (name, label) => h("a", {
    href: `#/user/${encodeURIComponent(user)}${name === "memories" ? "" : `/${name}`}`,
    "aria-current": current === name ? "page" : undefined,
  }, label);
  return h("nav", { class: "tabs", "aria-label": "User" },
    tab("memories", "Memories"), tab("memos", "Memo book"), tab("context", "Context preview"), tab("privacy", "Privacy"));
}

async function userHeader(user) {
  const state = await api("GET", `/v1/users/${encodeURIComponent(user)}`);
  return h("h1", {}, `User ${user} `, badge(state.state, state.state));
}

// ---- memories ------------------------------------------------------------------------------

const KINDS = ["profile", "preference", "fact", "event", "episode", "open_loop", "lore", "protocol", "ephemeral", "reflection", "knowledge", "memo", "summary", "skill"];
const STATUSES = ["active", "provisional", "stale", "archived", "contradicted", "superseded"];

function select(name, options, value, any) {
  return h("select", { name }, h("option", { value: "" }, any),
    options.map((o) => h("option", { value: o, selected: o === value }, o)));
}

async function memories(user, params) {
  const filters = { kind: params.get("kind") || "", status: params.get("status") || "", text: params.get("text") || "" };
  const kind = select("kind", KINDS, filters.kind, "any kind");
  const status = select("status", ["all", ...STATUSES], filters.status, "in use (active, provisional, stale)");
  const text = h("input", { type: "search", name: "text", value: filters.text });
  const form = h("form", {
    class: "row",
    onsubmit: (ev) => {
      ev.preventDefault();
      go(["user", user], { kind: kind.value, status: status.value, text: text.value.trim() });
    },
  }, field("Kind", kind), field("Status", status), field("Text", text), h("button", { type: "submit" }, "Filter"));
  const header = await userHeader(user);
  // Superseded and archived versions stay reachable through a memory's history and the
  // status filter; by default the page shows what is in use.
  const statuses = filters.status === "all" ? "" : filters.status || "active,provisional,stale";
  const list = await api("GET", `/v1/memories${query({ user_id: user, ...filters, status: statuses, limit: 100 })}`);
  // Each memory's sources say where it came from; one detail call per memory on the page.
  const details = await Promise.all(list.items.map((m) =>
    api("GET", `/v1/memories/${m.id}${query(ownerQuery(m))}`).catch(() => null)));
  const groups = new Map();
  list.items.forEach((m, i) => {
    if (!groups.has(m.kind)) groups.set(m.kind, []);
    groups.get(m.kind).push(memoryCard(user, m, details[i]));
  });
  const body = groups.size
    ? [...groups].map(([k, cards]) => h("section", { "aria-label": `${k} memories` }, h("h3", {}, `${k.replace("_", " ")} (${cards.length})`), cards))
    : [h("p", {}, "No memory matches.")];
  show(header, userTabs(user, "memories"), form, ...body);
}

/** The scope a memory's routes need: its own owner's user, agent and chat. */
function ownerQuery(m) {
  return { user_id: m.owner.user_id, agent_id: m.owner.agent_id, chat_id: m.owner.chat_id };
}

/** Who wrote a memory that no message proposed, in words. */
function author(extractor) {
  const names = { api: "a person, through the API", user: "a person", job: "a maintenance job", memo: "the chat model", llm: "the chat model" };
  return names[extractor] || extractor;
}

/** Where a memory came from: its chat, day and first source message, linked to the conversation. */
function origin(user, m, detail) {
  const chat = m.provenance.chat_id || m.owner.chat_id;
  const source = detail && detail.sources.length ? detail.sources[0] : null;
  const where = chat ? `From chat ${chat}` : `Written by ${author(m.provenance.extractor)}`;
  const when = date(source ? source.at : m.created_at);
  const quote = source ? `: "${clip(source.content, 120)}"` : "";
  const rule = m.provenance.rule ? ` (rule ${m.provenance.rule})` : "";
  const link = chat && source
    ? [" ", h("a", { href: `#/user/${encodeURIComponent(user)}/memos${query({ chat, at: source.id })}` }, "show in the conversation")]
    : [];
  return h("p", { class: "meta origin" }, `${where}, ${when}${quote}${rule}`, ...link);
}

function memoryCard(user, m, detail) {
  const inUse = ["active", "provisional", "stale"].includes(m.status);
  const out = h("div", { "aria-live": "polite" });
  const historyBox = h("div", {});
  const card = h("article", { class: "card", "data-memory": m.id },
    h("p", { class: "content" }, m.content),
    h("div", { class: "badges" },
      badge(m.status, m.status),
      badge(`confidence ${m.confidence.toFixed(2)}`),
      badge(`surface ${m.surface}`),
      m.pinned ? badge("pinned", "active") : null,
      m.owner.user_id ? null : badge(m.owner.agent_id ? `agent ${m.owner.agent_id}` : "tenant-wide"),
      m.sensitivity !== "normal" ? badge(m.sensitivity) : null),
    origin(user, m, detail),
    // Only what applies to the memory's status is offered: a superseded or archived version
    // is history, read but not changed.
    h("div", { class: "actions" },
      m.status === "active" ? h("button", { type: "button", class: "plain", onclick: () => editForm(user, m, card, out) }, "Edit") : null,
      inUse ? h("button", { type: "button", class: "plain", onclick: () => pin(user, m, out) }, m.pinned ? "Unpin" : "Pin") : null,
      h("button", { type: "button", class: "plain", onclick: () => showHistory(m, historyBox) }, "History"),
      inUse ? h("button", { type: "button", class: "danger", onclick: () => forget(user, m, out) }, "Delete") : null),
    out, historyBox);
  return card;
}

function editForm(user, m, card, out) {
  if (card.querySelector("form")) return;
  const text = h("textarea", { name: "content" }, m.content);
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      const res = await attempt(out, () => api("PATCH", `/v1/memories/${m.id}`, { ...ownerQuery(m), content: text.value }));
      if (!res) return;
      const v = res.verdict;
      const box = v.verdict === "rejected" ? errorBox(`Gate: ${v.verdict}: ${v.reason}`) : okBox(`Gate: ${v.verdict}: ${v.reason}`);
      form.remove();
      out.replaceChildren(box, h("button", { type: "button", class: "plain", onclick: () => render() }, "Reload memories"));
    },
  }, field("New text", text), h("div", { class: "actions" },
    h("button", { type: "submit" }, "Save through the gate"),
    h("button", { type: "button", class: "plain", onclick: () => form.remove() }, "Cancel")));
  card.insertBefore(form, out);
  text.focus();
}

async function pin(user, m, out) {
  const res = await attempt(out, () => api("POST", `/v1/memories/${m.id}/${m.pinned ? "unpin" : "pin"}${query(ownerQuery(m))}`));
  if (res !== undefined) render();
}

async function forget(user, m, out) {
  if (!window.confirm(`Delete this memory?\n\n${m.content}`)) return;
  const res = await attempt(out, () => api("DELETE", `/v1/memories/${m.id}${query(ownerQuery(m))}`));
  if (res !== undefined) render();
}

/** A memory's account: every version (following supersession) with its transitions and reasons. */
async function showHistory(m, box) {
  if (box.childElementCount) {
    box.replaceChildren();
    return;
  }
  await attempt(box, async () => {
    const versions = [];
    const seen = new Set();
    let next = m.id;
    // Older versions are linked from the newer one (supersedes); walk back through them.
    while (next && !seen.has(next) && versions.length < 20) {
      seen.add(next);
      const d = await api("GET", `/v1/memories/${next}${query(ownerQuery(m))}`);
      versions.push(d);
      const older = d.links.find((l) => l.kind === "supersedes" && l.from === next);
      next = older ? older.to : null;
    }
    box.replaceChildren(h("h4", {}, "History"), ...versions.map((d) => h("div", { class: "card version", "data-version": d.memory.id },
      h("p", {}, badge(d.memory.status, d.memory.status), " ", d.memory.content),
      h("ul", { class: "history" }, d.history.map((e) => h("li", {},
        `${dateTime(e.at)}: ${e.event} (${e.from_status ? `${e.from_status} → ` : ""}${e.to_status}): ${e.reason}`))),
      d.sources.length ? h("p", { class: "meta" }, `Said: ${d.sources.map((s) => `${s.role} in ${s.scope.chat_id || "?"}, ${date(s.at)}: "${clip(s.content, 160)}"`).join(" · ")}`) : null)));
  });
}

// ---- memo book -----------------------------------------------------------------------------

async function chatsOf(user) {
  const [u, mem] = await Promise.all([
    api("GET", `/v1/users${query({ text: user })}`),
    api("GET", `/v1/memories${query({ user_id: user, limit: 500 })}`),
  ]);
  const chats = new Set();
  for (const x of u.items) if (x.user_id === user) x.chats.forEach((c) => chats.add(c));
  for (const m of mem.items) if (m.provenance.chat_id) chats.add(m.provenance.chat_id);
  return [...chats].sort();
}

async function memoBook(user, params) {
  const header = await userHeader(user);
  const chats = await chatsOf(user);
  const chat = params.get("chat") || chats[0] || "";
  const picker = select("chat", chats, chat, "pick a chat");
  const other = h("input", { name: "chat_id", value: chat });
  const pick = h("form", {
    class: "row",
    onsubmit: (ev) => {
      ev.preventDefault();
      go(["user", user, "memos"], { chat: other.value.trim() || picker.value });
    },
  }, field("Chat", picker), field("Chat id", other), h("button", { type: "submit" }, "Open"));
  picker.addEventListener("change", () => { other.value = picker.value; });
  if (!chat) {
    show(header, userTabs(user, "memos"), pick, h("p", {}, "No chat yet."));
    return;
  }
  const scope = { user_id: user, chat_id: chat };
  const [memos, conversation] = await Promise.all([
    api("GET", `/v1/memos${query(scope)}`),
    api("GET", `/v1/messages${query({ ...scope, limit: 500 })}`),
  ]);
  const talk = h("ol", { class: "conversation", "aria-label": `Conversation ${chat}` },
    conversation.items.map((msg) => h("li", { id: `msg-${msg.id}`, tabindex: "-1", "data-message": msg.id },
      h("span", { class: "meta" }, `${msg.role}, ${dateTime(msg.at)}: `), msg.content)));
  const at = params.get("at");
  const list = h("ol", { class: "memos" }, memos.items.map((memo) => memoCard(user, chat, memo, talk)));
  const lore = h("textarea", { name: "lore" });
  const out = h("div", {});
  const write = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      const res = await attempt(out, () => api("POST", "/v1/memos", { ...scope, text: lore.value }));
      if (res) render();
    },
  }, field("New memo (lore, backstory, a milestone)", lore), h("button", { type: "submit" }, "Write memo"), out);
  show(header, userTabs(user, "memos"), pick,
    h("div", { class: "cols" },
      h("section", { "aria-label": "Memos" }, h("h2", {}, `Memo book of chat ${chat}`),
        memos.items.length ? list : h("p", {}, "No memo in this chat yet."), write),
      h("section", { "aria-label": "Conversation" }, h("h2", {}, "Conversation"),
        conversation.items.length ? talk : h("p", {}, "No message stored for this chat."))));
  if (at) jumpTo(talk, at);
}

function jumpTo(talk, id) {
  for (const li of talk.querySelectorAll("li.here")) li.classList.remove("here");
  const target = [...talk.children].find((li) => li.dataset.message === id);
  if (!target) return false;
  target.classList.add("here");
  target.scrollIntoView({ block: "center" });
  target.focus();
  return true;
}

function memoCard(user, chat, memo, talk) {
  const out = h("div", {});
  const sources = memo.provenance.sources;
  const span = sources.length
    ? h("button", {
      type: "button",
      class: "plain",
      onclick: () => {
        if (!jumpTo(talk, sources[0])) out.replaceChildren(errorBox("That message is not among the chat's latest 500."));
      },
    }, `Covers ${sources.length} message${sources.length === 1 ? "" : "s"}: show in the conversation`)
    : h("span", { class: "meta" }, "Covers no message (written by hand)");
  const card = h("li", { class: "card", "data-memo": memo.id },
    h("p", { class: "content" }, memo.content),
    h("p", { class: "meta" }, `${date(memo.created_at)} · by ${author(memo.provenance.extractor)}`),
    h("div", { class: "actions" }, span,
      h("button", { type: "button", class: "plain", onclick: () => editMemo(user, chat, memo, card, out) }, "Edit memo")),
    out);
  return card;
}

function editMemo(user, chat, memo, card, out) {
  if (card.querySelector("form")) return;
  const text = h("textarea", { name: "memo" }, memo.content);
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      const res = await attempt(out, () => api("PATCH", `/v1/memos/${memo.id}`, { user_id: user, chat_id: chat, text: text.value }));
      if (res) render();
    },
  }, field("Memo text", text), h("div", { class: "actions" }, h("button", { type: "submit" }, "Save memo"),
    h("button", { type: "button", class: "plain", onclick: () => form.remove() }, "Cancel")));
  card.insertBefore(form, out);
  text.focus();
}

// ---- context preview -----------------------------------------------------------------------

async function contextPreview(user, params) {
  const header = await userHeader(user);
  const chats = await chatsOf(user);
  const chat = h("input", { name: "chat_id", value: params.get("chat") || chats[0] || "console", required: true });
  const message = h("textarea", { name: "message", required: true });
  const budget = h("input", { type: "number", name: "budget", min: "1", value: "500" });
  const result = h("div", {});
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      await attempt(result, async () => {
        const budgetTokens = Number.parseInt(budget.value, 10);
        const ctx = await api("POST", "/v1/context", {
          user_id: user, chat_id: chat.value.trim(), message: message.value,
          budget_tokens: Number.isNaN(budgetTokens) ? undefined : budgetTokens,
        });
        const trace = ctx.turn_id ? await api("GET", `/v1/traces/${encodeURIComponent(ctx.turn_id)}`) : null;
        const names = await describe(user, chat.value.trim(), [
          ...ctx.held_back.map((x) => x.id),
          ...(trace ? (trace.envelope.below_floor || []).map(([id]) => id) : []),
          ...(trace ? (trace.envelope.shed || []).map((x) => x.id) : []),
        ]);
        result.replaceChildren(...contextView(ctx, trace, names));
      });
    },
  }, h("div", { class: "row" }, field("Chat", chat), field("Budget (tokens)", budget)),
  field("Message", message), h("button", { type: "submit" }, "Preview the block"));
  const turn = h("input", { name: "turn_id" });
  const past = h("div", {});
  const lookup = h("form", {
    class: "row",
    onsubmit: async (ev) => {
      ev.preventDefault();
      await attempt(past, async () => {
        const trace = await api("GET", `/v1/traces/${encodeURIComponent(turn.value.trim())}`);
        past.replaceChildren(...traceView(trace));
      });
    },
  }, field("Turn id of a past call", turn), h("button", { type: "submit" }, "Show trace"));
  const recent = await api("GET", `/v1/traces${query({ user_id: user, limit: 20 })}`);
  const openTrace = async (id) => {
    turn.value = id;
    await attempt(past, async () => past.replaceChildren(...traceView(await api("GET", `/v1/traces/${encodeURIComponent(id)}`))));
  };
  const calls = recent.items.length
    ? h("ul", { class: "plain traces" }, recent.items.map((t) => h("li", {},
      h("button", { type: "button", class: "plain", onclick: () => openTrace(t.turn_id) }, `${t.op}, ${dateTime(t.at)}`),
      " ", h("span", { class: "meta" }, [t.scope.chat_id ? `chat ${t.scope.chat_id}` : "", t.query ? `"${clip(t.query, 80)}"` : "", `${t.surfaced.length} surfaced`].filter(Boolean).join(" · ")))))
    : h("p", {}, "No past call is recorded for this user.");
  show(header, userTabs(user, "context"), form, result, h("h2", {}, "Past traces"), calls, lookup, past);
  message.focus();
}

/** What each of `ids` says (memories the user's scope sees), for lists that name only ids. */
async function describe(user, chat, ids) {
  const names = new Map();
  const memories = [...new Set(ids)].filter((id) => /^[0-9a-z]{26}$/.test(id)).slice(0, 40);
  await Promise.all(memories.map(async (id) => {
    const d = await api("GET", `/v1/memories/${id}${query({ user_id: user, chat_id: chat })}`).catch(() => null);
    if (d) names.set(id, `${d.memory.kind} "${clip(d.memory.content, 80)}"`);
  }));
  return names;
}

function contextView(ctx, trace, names) {
  const name = (id) => names.get(id) || id;
  const why = new Map((trace ? trace.envelope.retrieved || [] : []).map((r) => [r.id, r]));
  const rows = ctx.sections.flatMap((s) => s.items.map((i) => {
    const r = why.get(i.id);
    const parts = r && r.score
      ? `relevance ${r.score.relevance.toFixed(2)} · salience ${r.score.salience.toFixed(2)} · urgency ${r.score.urgency.toFixed(2)} · confidence ${r.score.confidence.toFixed(2)} · recency ${r.score.recency.toFixed(2)} · strength ${r.score.strength.toFixed(2)} → ${r.score.total.toFixed(3)}`
      : r && r.exact ? `exact: ${JSON.stringify(r.exact)}` : "";
    return h("tr", { "data-item": i.id },
      h("td", {}, s.name), h("td", { class: "text" }, i.text), h("td", {}, i.kind),
      h("td", {}, i.surface || ""), h("td", {}, [r && r.tier ? `tier ${r.tier}` : "", i.detail ? ` level ${i.detail}` : ""].join("")),
      h("td", { class: "text" }, parts), h("td", {}, String(i.tokens)));
  }));
  const held = ctx.held_back.map((x) => h("li", {}, `${name(x.id)}: ${x.reason.replace("_", " ")}`));
  const shed = trace ? (trace.envelope.shed || []).map((x) => h("li", {}, `${name(x.id)}: placed at ${x.detail} (${x.tokens} of ${x.full_tokens} tokens)`)) : [];
  const floor = trace ? (trace.envelope.below_floor || []).map(([id, rel]) => h("li", {}, `${name(id)}: relevance ${Number(rel).toFixed(2)}, below the floor`)) : [];
  return [
    h("p", { class: "meta" }, `Turn ${ctx.turn_id || "(not recorded)"} · ${ctx.tokens} of ${ctx.budget} tokens · mode ${ctx.mode}${ctx.user_state ? ` · user ${ctx.user_state}` : ""}`),
    h("div", { class: "cols why-cols" },
      h("section", { "aria-label": "The block" }, h("h2", {}, "The block, as the model gets it"), h("pre", { class: "block" }, ctx.text || "(empty)")),
      h("section", { "aria-label": "Why" }, h("h2", {}, "Why each item"),
        h("div", { class: "scroll" }, h("table", { class: "why" }, h("thead", {}, h("tr", {}, ["section", "item", "kind", "surface", "tier / level", "score parts", "tokens"].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, rows))),
        h("h2", {}, "Held back"), held.length ? h("ul", {}, held) : h("p", {}, "Nothing was held back."),
        shed.length ? [h("h2", {}, "Shortened to fit"), h("ul", {}, shed)] : null,
        floor.length ? [h("h2", {}, "Below the relevance floor"), h("ul", {}, floor)] : null)),
  ];
}

function traceView(t) {
  return [
    h("p", { class: "meta" }, `${t.op} at ${dateTime(t.at)} · ${t.mode || ""} · ${t.micros} µs`),
    h("p", {}, `Query: ${t.query}`),
    h("p", {}, `Surfaced: ${t.surfaced.join(", ") || "nothing"}`),
    h("pre", {}, JSON.stringify(t.envelope, null, 2)),
  ];
}

// ---- candidates ----------------------------------------------------------------------------

async function candidates(params) {
  const agent = h("input", { name: "agent_id", value: params.get("agent") || "" });
  const form = h("form", {
    class: "row",
    onsubmit: (ev) => {
      ev.preventDefault();
      go(["candidates"], { agent: agent.value.trim() });
    },
  }, field("Agent (empty: tenant-wide)", agent), h("button", { type: "submit" }, "Show"));
  const data = await api("GET", `/v1/candidates${query({ agent_id: params.get("agent") })}`);
  const details = await Promise.all(data.items.map((m) =>
    api("GET", `/v1/memories/${m.id}${query(ownerQuery(m))}`).catch(() => null)));
  const cards = data.items.map((m, i) => candidateCard(m, details[i]));
  show(h("h1", {}, "Candidates"),
    h("p", { class: "meta" }, "Knowledge proposed for a whole tenant or agent: nothing here is told to anyone until approved."),
    form, cards.length ? cards : h("p", {}, "No candidate is waiting."));
}

function candidateCard(m, detail) {
  const out = h("div", {});
  const evidence = [];
  if (detail) {
    const derived = detail.links.filter((l) => l.kind === "derived_from" && l.from === m.id);
    if (derived.length) evidence.push(`derived from ${derived.length} memor${derived.length === 1 ? "y" : "ies"}`);
    const sessions = new Set(detail.sources.map((s) => s.scope.chat_id).filter(Boolean));
    if (sessions.size) evidence.push(`sessions: ${[...sessions].join(", ")}`);
    const corrections = detail.history.filter((e) => ["superseded", "contradicted", "edited"].includes(e.event));
    if (corrections.length) evidence.push(`${corrections.length} correction(s)`);
    evidence.push(...detail.history.map((e) => `${e.event}: ${e.reason}`));
  }
  const decide = async (what) => {
    const res = await attempt(out, () => api("POST", `/v1/candidates/${m.id}/${what}${query(ownerQuery(m))}`));
    if (res) {
      out.replaceChildren(okBox(`${what === "approve" ? "Approved" : "Rejected"}: now ${res.status || what}`));
      for (const b of card.querySelectorAll("button")) b.disabled = true;
    }
  };
  const card = h("article", { class: "card", "data-candidate": m.id },
    h("p", { class: "content" }, m.content),
    h("div", { class: "badges" }, badge(m.kind), badge(m.status, m.status),
      badge(m.owner.agent_id ? `agent ${m.owner.agent_id}` : "tenant-wide")),
    h("ul", { class: "meta" }, evidence.map((e) => h("li", {}, e))),
    h("div", { class: "actions" },
      h("button", { type: "button", onclick: () => decide("approve") }, "Approve"),
      h("button", { type: "button", class: "danger", onclick: () => decide("reject") }, "Reject")),
    out);
  return card;
}

// ---- privacy -------------------------------------------------------------------------------

// What each switch does, in the words of docs/http.md: the page says it beside the button.
const SWITCHES = [
  ["pause", "Keeps what is known but learns and recalls nothing: new messages stay in the chat's recent window, are never extracted or quoted back, and blocks carry policies only."],
  ["resume", "Ends a pause: learning and recall start again from what was kept."],
  ["disable", "Stores nothing at all: messages are discarded and counted, and adding memories or memos is refused."],
  ["enable", "Ends a disable: the user is active again, with nothing of the disabled period to resume from."],
];

async function privacy(user) {
  const header = await userHeader(user);
  const base = `/v1/users/${encodeURIComponent(user)}`;
  const out = h("div", { "aria-live": "polite" });
  const switchTo = (what) => h("button", {
    type: "button",
    class: "plain",
    onclick: async () => {
      const res = await attempt(out, () => api("POST", `${base}/${what}`));
      if (res) {
        const state = header.querySelector(".badge");
        state.textContent = res.state;
        state.className = `badge ${res.state}`;
        out.replaceChildren(okBox(`User ${res.user_id} is now ${res.state}.`));
      }
    },
  }, what[0].toUpperCase() + what.slice(1));
  const download = (format, name, type) => h("button", {
    type: "button",
    class: "plain",
    onclick: async () => {
      const body = await attempt(out, () => api("GET", `${base}/export${query({ format })}`));
      if (body === undefined) return;
      const text = typeof body === "string" ? body : JSON.stringify(body, null, 2);
      const url = URL.createObjectURL(new Blob([text], { type }));
      const a = h("a", { href: url, download: name }, `Download ${name}`);
      const note = text.length > 4000 ? h("p", { class: "meta" }, "The first 4,000 characters; the download holds all of it.") : null;
      out.replaceChildren(a, note || "", h("pre", { class: "export" }, clip(text, 4000)));
      a.click();
    },
  }, `Export ${format === "json" ? "JSON" : "MEMORY.md"}`);
  const clear = h("button", {
    type: "button",
    class: "danger",
    onclick: async () => {
      if (!window.confirm(`Archive everything known about ${user}?`)) return;
      const res = await attempt(out, () => api("POST", `${base}/clear`));
      if (res) out.replaceChildren(okBox(`Cleared: ${res.archived} memories archived.`));
    },
  }, "Clear");
  const typed = h("input", { name: "confirm", autocomplete: "off" });
  const erase = h("button", { type: "submit", class: "danger", disabled: true }, "Erase for good");
  typed.addEventListener("input", () => { erase.disabled = typed.value !== user; });
  const eraseForm = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      if (typed.value !== user) return;
      const res = await attempt(out, () => api("POST", `${base}/erase`));
      if (!res) return;
      const counts = Object.entries(res.counts).map(([t, n]) => h("tr", {}, h("td", {}, t), h("td", {}, String(n))));
      show(h("h1", {}, `User ${user} erased`), h("section", { class: "card receipt", "aria-label": "Erasure receipt" },
        h("h2", {}, "Receipt"),
        h("p", {}, `Subject: ${res.subject}`), h("p", {}, `At: ${dateTime(res.at)}`), h("p", {}, `Digest: ${res.digest}`),
        h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "table"), h("th", { scope: "col" }, "rows removed"))), h("tbody", {}, counts))),
      h("a", { href: "#/users" }, "Back to users"));
    },
  }, field(`Type the user id (${user}) to confirm`, typed), erase);
  show(header, userTabs(user, "privacy"), out,
    h("h2", {}, "Switches"),
    h("dl", { class: "switches" }, SWITCHES.flatMap(([what, meaning]) => [h("dt", {}, switchTo(what)), h("dd", { class: "meta" }, meaning)])),
    h("h2", {}, "Export"), h("div", { class: "actions" }, download("json", `${user}.json`, "application/json"), download("memory-md", "MEMORY.md", "text/markdown")),
    h("h2", {}, "Clear"), h("p", { class: "meta" }, "Archives every memory (history kept); erase is what deletes."), clear,
    h("h2", {}, "Erase"), h("p", { class: "meta" }, "Deletes everything of this user across every agent and chat; only a content-free receipt remains."), eraseForm);
}

// ---- policies ------------------------------------------------------------------------------

async function policies() {
  const data = await api("GET", "/v1/policies");
  const rows = data.items.map((p) => h("tr", {},
    h("td", {}, p.key), h("td", {}, `v${p.version}`), h("td", {}, p.text), h("td", {}, JSON.stringify(p.value)),
    h("td", {}, `${date(p.effective_from)}${p.effective_until ? ` – ${date(p.effective_until)}` : " –"}`)));
  const key = h("input", { name: "key", required: true });
  const text = h("textarea", { name: "text", required: true });
  const value = h("input", { name: "value", placeholder: "null" });
  const out = h("div", {});
  const form = h("form", {
    onsubmit: async (ev) => {
      ev.preventDefault();
      let parsed = null;
      if (value.value.trim()) {
        try {
          parsed = JSON.parse(value.value);
        } catch (e) {
          out.replaceChildren(errorBox(`The value is not JSON: ${e.message}`));
          return;
        }
      }
      const res = await attempt(out, () => api("POST", "/v1/policies", { key: key.value.trim(), text: text.value, value: parsed }));
      if (res) {
        await render();
        main().append(okBox(`Policy ${res.key} is at version ${res.version}.`));
      }
    },
  }, field("Key", key), field("Rule, as the model reads it", text), field("Value (JSON, optional)", value),
  h("button", { type: "submit" }, "Add version"), out);
  show(h("h1", {}, "Policies"),
    rows.length ? h("div", { class: "scroll" }, h("table", {}, h("thead", {}, h("tr", {}, ["key", "version", "rule", "value", "in force"].map((c) => h("th", { scope: "col" }, c)))), h("tbody", {}, rows)))
      : h("p", {}, "No policy yet."),
    h("h2", {}, "Add a policy or a new version"), form);
}

// ---- start ---------------------------------------------------------------------------------

window.addEventListener("hashchange", render);
document.addEventListener("DOMContentLoaded", () => {
  document.getElementById("signout").addEventListener("click", () => signOut());
  document.getElementById("switch-tenant").addEventListener("click", () => {
    sessionStorage.removeItem(TENANT);
    clearHash();
    render();
  });
  render();
});
