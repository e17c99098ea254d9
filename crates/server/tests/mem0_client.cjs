// mem0's TypeScript SDK (`mem0ai` from npm) against `mnemo serve`: every memory method of its
// `MemoryClient` through the `/mem0` routes, and tenant isolation between two keys.
// Run by crates/cli/tests/compat.rs with the packages scripts/compat-npm.sh installs:
//
//   NODE_PATH=<dir>/node_modules node mem0_client.cjs --base http://127.0.0.1:PORT --key-a KEY --key-b KEY
"use strict";
process.env.MEM0_TELEMETRY = "false"; // the SDK otherwise reports usage to mem0's servers

const mem0 = require("mem0ai");
const MemoryClient = mem0.MemoryClient || mem0.default;

let checks = 0;
function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
  checks += 1;
}
async function rejects(promise, what) {
  try {
    await promise;
  } catch (e) {
    check(true, what);
    return e;
  }
  throw new Error(`${what}: expected an error`);
}

function arg(name) {
  const i = process.argv.indexOf(name);
  if (i < 0) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
}

async function main() {
  const base = arg("--base");
  const a = new MemoryClient({ apiKey: arg("--key-a"), host: `${base}/mem0` });
  const b = new MemoryClient({ apiKey: arg("--key-b"), host: `${base}/mem0` });
  await a.ping();
  check(a.organizationId === "acme" && a.projectId === "acme", `ping names the tenant: ${a.organizationId}`);

  const added = await a.add([{ role: "user", content: "I love sailing on weekends." }], { userId: "tess" });
  check(added.results.length > 0 && added.results[0].event === "ADD", `add: ${JSON.stringify(added)}`);
  const sailing = added.results[0].id;
  const given = await a.add([{ role: "user", content: "Tess owns a red kayak." }], {
    userId: "tess", infer: false, metadata: { source: "ts" },
  });
  const kayak = given.results[0].id;

  const all = await a.getAll({ filters: { user_id: "tess" } });
  check(all.count === 2 && all.results.length === 2, `getAll: ${JSON.stringify(all)}`);
  const page = await a.getAll({ filters: { user_id: "tess" }, page: 1, pageSize: 1 });
  check(page.results.length === 1 && page.next, `getAll page: ${JSON.stringify(page)}`);
  const tagged = await a.getAll({ filters: { AND: [{ user_id: "tess" }, { metadata: { source: "ts" } }] } });
  check(tagged.results.length === 1 && tagged.results[0].id === kayak, "metadata filter");

  const found = await a.search("sailing", { filters: { user_id: "tess" }, topK: 3 });
  check(found.results[0].memory.toLowerCase().includes("sailing"), `search: ${JSON.stringify(found)}`);
  check(found.results.every((r) => r.score >= 0 && r.score <= 1), "scores within 0..1");

  check((await a.get(kayak)).memory === "Tess owns a red kayak.", "get");
  await a.update(kayak, { text: "Tess owns a blue kayak." });
  check((await a.get(kayak)).memory === "Tess owns a blue kayak.", "update");
  const events = (await a.history(kayak)).map((h) => h.event);
  check(JSON.stringify(events) === JSON.stringify(["ADD", "UPDATE"]), `history: ${events}`);

  await a.feedback({ memoryId: sailing, feedback: "POSITIVE", feedbackReason: "right" });
  check(true, "feedback");
  const extra = (await a.add([{ role: "user", content: "Tess drinks coffee." }], { userId: "tess", infer: false }))
    .results[0].id;
  await a.batchUpdate([{ memoryId: extra, text: "Tess drinks black coffee." }]);
  check((await a.get(extra)).memory === "Tess drinks black coffee.", "batchUpdate");
  await a.batchDelete([extra]);
  await rejects(a.get(extra), "batchDelete");

  const users = await a.users();
  check(users.results.some((e) => e.type === "user" && e.name === "tess"), `users: ${JSON.stringify(users)}`);

  // Another tenant sees and touches nothing.
  check((await b.getAll({ filters: { user_id: "tess" } })).count === 0, "isolation: getAll");
  check((await b.search("sailing", { filters: { user_id: "tess" } })).results.length === 0, "isolation: search");
  await rejects(b.get(sailing), "isolation: get");
  await rejects(b.delete(sailing), "isolation: delete");
  await b.deleteUsers({ userId: "tess" });
  check((await a.getAll({ filters: { user_id: "tess" } })).count === 2, "the other tenant's delete changed nothing");

  await a.delete(sailing);
  await rejects(a.get(sailing), "delete");
  await a.deleteAll({ userId: "tess" });
  check((await a.getAll({ filters: { user_id: "tess" } })).count === 0, "deleteAll");
  await a.add([{ role: "user", content: "Tess plays chess." }], { userId: "tess", infer: false });
  await a.deleteUsers({ userId: "tess" });
  check((await a.getAll({ filters: { user_id: "tess" } })).count === 0, "deleteUsers");
  console.log(`${checks} checks passed`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
