// The console at /ui end to end, in headless Chromium driven by playwright-core, against a real
// `mnemo serve` that crates/cli/tests/console.rs started. Messages are ingested through the API
// first; then every step is done the way a person does it, on the page, and checked there.
// Every page is photographed at 1280 and at 375 px wide into --shots.
//
//   node console.cjs --base http://127.0.0.1:PORT --key KEY --admin ADMIN_KEY --shots DIR
"use strict";

const assert = require("node:assert/strict");
const fs = require("node:fs");
const path = require("node:path");
const { chromium } = require("playwright-core");

function arg(name) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing --${name}`);
  return process.argv[i + 1];
}

const base = arg("base");
const key = arg("key");
const adminKey = arg("admin");
const shots = arg("shots");
const executablePath = process.env.MNEMO_CHROMIUM || "/usr/bin/chromium";

async function call(method, route, body, as = key) {
  const res = await fetch(base + route, {
    method,
    headers: { Authorization: `Bearer ${as}`, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json();
  assert.ok(res.ok, `${method} ${route}: ${res.status} ${JSON.stringify(data)}`);
  return data;
}

async function seed() {
  const ingest = await call("POST", "/v1/messages", {
    user_id: "dana",
    chat_id: "c1",
    messages: [
      { id: "m1", role: "user", content: "Hi! I'm Dana. I live in Lisbon.", at: "2026-03-02T10:00:00Z" },
      { id: "m2", role: "assistant", content: "Nice to meet you, Dana!", at: "2026-03-02T10:00:05Z" },
      { id: "m3", role: "user", content: "I have a dog named Biscuit.", at: "2026-03-02T10:01:00Z" },
      { id: "m4", role: "user", content: "I love hiking in the mountains.", at: "2026-03-02T10:02:00Z" },
    ],
  });
  const written = ingest.ops.filter((o) => o.verdict.verdict === "written");
  assert.ok(written.length >= 2, `ingest wrote too little: ${JSON.stringify(ingest.ops)}`);
  await call("POST", "/v1/memos", { user_id: "dana", chat_id: "c1", text: "Dana introduced herself and her dog." });
  // Memory text is user data: markup in it must reach the page as text.
  const markup = await call("POST", "/v1/memories", {
    user_id: "dana", kind: "preference", content: 'User writes notes in <b>bold</b> <img src=x onerror="window.pwned=1">',
  });
  assert.equal(markup.verdict.verdict, "written", JSON.stringify(markup));
  const candidate = await call("POST", "/v1/memories", {
    kind: "knowledge",
    content: "Parcels from the shop ship on Tuesdays.",
  });
  assert.equal(candidate.memory.status, "provisional", JSON.stringify(candidate));
  // A coding agent corrected the same way in three sessions: `maintain` mines a skill candidate.
  for (const chat of ["s1", "s2", "s3"]) {
    await call("POST", "/v1/observations", {
      agent_id: "coder", user_id: "dana", chat_id: chat, tool: "edit_file",
      args_summary: "SwiftUI view ProfileView.swift", outcome: "failure",
      text: "Check accessibility modifiers on every SwiftUI view",
    });
  }
  const maintained = await call("POST", "/v1/maintain", undefined, adminKey);
  assert.equal(maintained.skipped, undefined, JSON.stringify(maintained));
  return written;
}

async function main() {
  fs.mkdirSync(shots, { recursive: true });
  await seed();
  const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  // Refusals the steps provoke (a wrong key, a 404) are logged by the browser as failed loads;
  // anything else the page logs as an error is a fault of the console.
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(`console: ${m.text()}`);
  });
  page.on("dialog", (d) => d.accept());
  page.setDefaultTimeout(10000);
  try {
    await walkThrough(page, problems);
  } catch (e) {
    // What the page showed when a step failed, beside the other screenshots.
    await page.screenshot({ path: path.join(shots, "failure.png"), fullPage: true }).catch(() => {});
    // and what it complained of on the way, which is often the cause.
    if (problems.length) console.error(problems.join("\n"));
    throw e;
  } finally {
    await browser.close();
  }
}

async function walkThrough(page, problems) {

  // A memory's card, found by what the memory says (its source quote may say more).
  const memoryCard = (text) => page.locator("article.card").filter({ has: page.locator("p.content", { hasText: text }) }).first();
  const shot = async (name) => {
    await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
    // At a laptop's 1280 px every table fits its panel: nothing to scroll sideways to read.
    const clipped = await page.evaluate(() => [...document.querySelectorAll(".scroll")]
      .filter((box) => box.scrollWidth > box.clientWidth + 1).map((box) => `${box.scrollWidth} > ${box.clientWidth}`));
    assert.deepStrictEqual(clipped, [], `${name} has a table wider than its panel at 1280 px`);
    await page.setViewportSize({ width: 375, height: 800 });
    await page.screenshot({ path: path.join(shots, `${name}-375.png`), fullPage: true });
    // Readable at 375 px: nothing pushes the page wider than the screen (wide tables scroll
    // inside their own box).
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(wide <= 375, `${name} is ${wide} px wide at 375`);
    await page.setViewportSize({ width: 1280, height: 900 });
  };
  const steps = [];
  const step = (name) => { steps.push(name); console.log(`step: ${name}`); };

  step("the console is served with a strict policy");
  const res = await page.goto(`${base}/ui`);
  const csp = res.headers()["content-security-policy"] || "";
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  await page.getByLabel("API key").waitFor();
  assert.ok(!(await page.getByRole("link", { name: "Candidates" }).isVisible()), "no navigation before signing in");
  await shot("01-sign-in");

  step("a wrong key is refused with a clear message");
  await page.getByLabel("API key").fill("mnemo_acme_not-a-real-key-000000000000");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "That API key was not accepted" }).waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.getItem("mnemo.key")), null);
  await shot("02-wrong-key");

  step("sign in by keyboard alone; the tenant's users are listed");
  await page.getByLabel("API key").fill("");
  await page.keyboard.type(key);
  await page.keyboard.press("Enter");
  await page.getByRole("heading", { name: "Users" }).waitFor();
  assert.ok(!page.url().includes(key), "the key never appears in a URL");
  await page.getByRole("link", { name: "dana" }).waitFor();
  await shot("03-users");

  step("search users");
  await page.getByLabel("Search users").fill("nobody");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByText('No user matches "nobody".').waitFor();
  await page.getByLabel("Search users").fill("DAN");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("link", { name: "dana" }).click();

  step("a user's memories, with where each came from");
  const lisbon = memoryCard("Lisbon");
  await lisbon.waitFor();
  const from = await lisbon.locator(".origin").textContent();
  assert.match(from, /From chat c1, 2 Mar 2026: "Hi! I'm Dana\. I live in Lisbon\."/, from);
  const notes = memoryCard("notes in");
  assert.match(await notes.locator("p.content").textContent(), /<b>bold<\/b> <img src=x/);
  assert.equal(await page.locator("main img, main b").count(), 0, "markup in memory text is never parsed");
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await shot("04-memories");

  step("bad input gets the API's reason, and nothing changes");
  await lisbon.getByRole("button", { name: "Edit" }).click();
  await lisbon.getByLabel("New text").fill("   ");
  await lisbon.getByRole("button", { name: "Save through the gate" }).click();
  const refusal = lisbon.locator(".error");
  await refusal.waitFor();
  assert.ok((await refusal.textContent()).length > 10, await refusal.textContent());
  await page.reload();
  await memoryCard("Lisbon").waitFor();

  step("edit a memory through the gate and see the superseded version in its history");
  const card = memoryCard("Lisbon");
  await card.getByRole("button", { name: "Edit" }).click();
  await card.getByLabel("New text").fill("User lives in Porto.");
  await card.getByRole("button", { name: "Save through the gate" }).click();
  await card.locator(".ok", { hasText: "Gate: superseded" }).waitFor();
  await shot("05-edit-verdict");
  await card.getByRole("button", { name: "Reload memories" }).click();
  const porto = memoryCard("Porto");
  await porto.waitFor();
  assert.equal(await page.locator("p.content", { hasText: "Lisbon" }).count(), 0, "the old version is no longer in use");
  await porto.getByRole("button", { name: "History" }).focus();
  await page.keyboard.press("Enter");
  const old = porto.locator(".version", { hasText: "Lisbon" });
  await old.waitFor();
  assert.match(await old.textContent(), /superseded/);
  await shot("06-history");

  step("pin and unpin");
  await porto.getByRole("button", { name: "Pin", exact: true }).click();
  const pinned = memoryCard("Porto");
  await pinned.locator(".badge", { hasText: "pinned" }).waitFor();
  await pinned.getByRole("button", { name: "Unpin" }).click();
  await memoryCard("Porto").getByRole("button", { name: "Pin", exact: true }).waitFor();

  step("delete a memory");
  const biscuit = memoryCard("Biscuit");
  await biscuit.waitFor();
  await biscuit.getByRole("button", { name: "Delete" }).click();
  await page.waitForFunction(() => ![...document.querySelectorAll("p.content")].some((c) => c.textContent.includes("Biscuit")));
  await page.getByLabel("Status").selectOption("all");
  await page.getByRole("button", { name: "Filter" }).click();
  await memoryCard("Biscuit").locator(".badge", { hasText: "archived" }).waitFor();
  await shot("07-all-statuses");

  step("a memory's source opens the conversation at that message");
  await memoryCard("hiking").getByRole("link", { name: "show in the conversation" }).click();
  const here = page.locator("ol.conversation li.here");
  await here.waitFor();
  assert.equal(await here.getAttribute("data-message"), "m4");
  assert.equal(await page.locator("ol.conversation li").count(), 4);

  step("the model's memo links to the span of messages it covers");
  await page.getByRole("link", { name: "Memo book" }).click();
  // The page shown until the memo book is drawn again is the one the step above opened, memos
  // and all: reading it would click a button the new drawing is about to replace.
  await page.locator("ol.conversation li.here").waitFor({ state: "detached" });
  const rolling = page.locator("[data-memo]", { hasText: "moved to Lisbon" });
  const drawn = page.getByRole("heading", { name: "Memo book of chat c1" });
  await drawn.waitFor();
  for (let i = 0; i < 50 && !(await rolling.count()); i += 1) {
    await page.waitForTimeout(200); // the server's worker writes it in the background
    await page.reload();
    await drawn.waitFor();
  }
  await rolling.getByRole("button", { name: "Covers 4 messages: show in the conversation" }).click();
  assert.equal(await page.locator("ol.conversation li.here").getAttribute("data-message"), "m1");

  step("the memo book: edit a memo, write a new one");
  const memo = page.locator("[data-memo]", { hasText: "introduced herself" });
  await memo.waitFor();
  await page.locator("ol.conversation li", { hasText: "I have a dog named Biscuit." }).waitFor();
  await memo.getByRole("button", { name: "Edit memo" }).click();
  await memo.getByLabel("Memo text").fill("Dana and the assistant joke about Biscuit being scared of pigeons.");
  await memo.getByRole("button", { name: "Save memo" }).click();
  await page.locator("[data-memo]", { hasText: "scared of pigeons" }).waitFor();
  await page.getByLabel("New memo (lore, backstory, a milestone)").fill("Dana is training for the Lisbon half marathon.");
  await page.getByRole("button", { name: "Write memo" }).click();
  await page.locator("[data-memo]", { hasText: "half marathon" }).waitFor();
  await shot("08-memo-book");

  step("the edited memo is in the context preview, with the why of every item");
  await page.getByRole("link", { name: "Context preview" }).click();
  await page.getByLabel("Message").fill("Where could I go hiking in the mountains this weekend?");
  await page.getByLabel("Budget (tokens)").fill("600");
  await page.getByRole("button", { name: "Preview the block" }).click();
  const block = page.locator("pre.block");
  await block.waitFor();
  const text = await block.textContent();
  assert.match(text, /scared of pigeons/, text);
  assert.doesNotMatch(text, /introduced herself/, text);
  await page.locator("tr[data-item]").first().waitFor();
  // The preference the message is about is in the block, and its row says why.
  assert.match(text, /hiking in the mountains/, text);
  const why = await page.locator("table.why").textContent();
  assert.match(why, /preference/, why);
  await shot("09-context-preview");
  const turn = (await page.locator("p.meta", { hasText: "Turn " }).first().textContent()).match(/Turn (\S+)/)[1];
  await page.getByLabel("Turn id of a past call").fill(turn);
  await page.getByRole("button", { name: "Show trace" }).click();
  await page.getByText(`"turn_id": "${turn}"`).waitFor();
  // The call just made is listed among the user's past calls once the page is opened again.
  await page.reload();
  await page.locator("ul.traces li", { hasText: "hiking in the mountains" }).getByRole("button").click();
  await page.getByText(`"turn_id": "${turn}"`).waitFor();

  step("reject a tenant-wide candidate, approve the skill maintain mined, with its evidence");
  await page.getByRole("link", { name: "Candidates" }).click();
  const cand = page.locator("[data-candidate]", { hasText: "Tuesdays" });
  await cand.waitFor();
  await cand.getByRole("button", { name: "Reject" }).click();
  await cand.locator(".ok", { hasText: "Rejected: now archived" }).waitFor();
  await page.getByLabel("Agent (empty: tenant-wide)").fill("coder");
  await page.getByRole("button", { name: "Show" }).click();
  const skill = page.locator("[data-candidate]", { hasText: "accessibility modifiers" });
  await skill.waitFor();
  assert.match(await skill.textContent(), /3 sessions/, await skill.textContent());
  await shot("10-candidates");
  await skill.getByRole("button", { name: "Approve" }).click();
  await skill.locator(".ok", { hasText: "Approved: now active" }).waitFor();
  await page.reload();
  await page.getByText("No candidate is waiting.").waitFor();
  await page.getByRole("link", { name: "Users" }).click();
  await page.getByRole("link", { name: "Candidates" }).click();
  await page.getByText("No candidate is waiting.").waitFor();

  step("policies: list and add a version; bad JSON is refused on the page");
  await page.getByRole("link", { name: "Policies" }).click();
  await page.getByLabel("Key").fill("tone");
  await page.getByLabel("Rule, as the model reads it").fill("Be warm and brief.");
  await page.getByLabel("Value (JSON, optional)").fill("{not json");
  await page.getByRole("button", { name: "Add version" }).click();
  await page.getByRole("alert").filter({ hasText: "The value is not JSON" }).waitFor();
  await page.getByLabel("Value (JSON, optional)").fill('{"max_words": 80}');
  await page.getByRole("button", { name: "Add version" }).click();
  await page.getByText("Policy tone is at version 1.").waitFor();
  await page.getByRole("cell", { name: "Be warm and brief." }).waitFor();
  await shot("11-policies");

  step("privacy: pause and resume, export, then erase with a typed confirmation");
  await page.goto(`${base}/ui#/user/dana/privacy`);
  // Each switch says what it does before anyone presses it.
  await page.getByText("Keeps what is known but learns and recalls nothing").waitFor();
  await page.getByText("Stores nothing at all").waitFor();
  await page.getByRole("button", { name: "Pause" }).click();
  await page.getByText("User dana is now paused.").waitFor();
  await page.getByRole("button", { name: "Resume" }).click();
  await page.getByText("User dana is now active.").waitFor();
  const json = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export JSON" }).click();
  const exported = await json;
  assert.equal(exported.suggestedFilename(), "dana.json");
  const copy = JSON.parse(fs.readFileSync(await exported.path(), "utf8"));
  assert.ok(JSON.stringify(copy).includes("User lives in Porto."), "the JSON export holds the edited memory");
  const download = page.waitForEvent("download");
  await page.getByRole("button", { name: "Export MEMORY.md" }).click();
  assert.equal((await download).suggestedFilename(), "MEMORY.md");
  assert.match(await page.locator("pre.export").textContent(), /- User lives in Porto/);
  const erase = page.getByRole("button", { name: "Erase for good" });
  assert.ok(await erase.isDisabled(), "erase waits for the typed confirmation");
  await page.getByLabel("Type the user id (dana) to confirm").fill("dan");
  assert.ok(await erase.isDisabled());
  await shot("12-privacy");
  await page.getByLabel("Type the user id (dana) to confirm").fill("dana");
  await erase.click();
  const receipt = page.locator("section.receipt");
  await receipt.waitFor();
  assert.match(await receipt.textContent(), /Digest: [0-9a-f]{64}/);
  await shot("13-erasure-receipt");
  await page.getByRole("link", { name: "Back to users" }).click();
  await page.getByText("No user has memories yet.").waitFor();

  step("the admin key sees every tenant");
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByLabel("API key").fill(adminKey);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Tenants" }).waitFor();
  await shot("14-admin-tenants");
  await page.getByRole("button", { name: "Open tenant acme" }).click();
  await page.getByRole("heading", { name: "Users" }).waitFor();
  await page.getByText("admin, tenant acme").waitFor();
  // The admin's view goes through the tenant's routes: what acme's key saw, the admin sees.
  await page.getByRole("link", { name: "Policies" }).click();
  await page.getByRole("cell", { name: "Be warm and brief." }).waitFor();
  await page.getByRole("button", { name: "Tenants" }).click();
  await page.getByRole("heading", { name: "Tenants" }).waitFor();

  assert.deepEqual(problems, [], problems.join("\n"));
  console.log(`${steps.length} checks passed`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
