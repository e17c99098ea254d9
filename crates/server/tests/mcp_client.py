"""mnemo's MCP server driven by the official MCP Python SDK, over both transports.

Run by crates/cli/tests/mcp.rs with the venv from scripts/mcp-venv.sh:

    python mcp_client.py --url http://127.0.0.1:PORT/mcp --binary target/debug/mnemo \
        --data-dir DIR --key-a KEY_OF_ACME --key-b KEY_OF_GLOBEX

Streamable HTTP goes to a running `mnemo serve`; stdio spawns `mnemo mcp` on the same data
directory. Tenant A writes over HTTP and reads back over both transports; tenant B, with the same
user and chat ids, must see none of it through any tool. Exits non-zero on the first failed check.
"""

import argparse
import asyncio
import json
import sys

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import McpError

TOOLS = {
    "remember",
    "recall",
    "context",
    "forget",
    "list_memories",
    "store_document",
    "find_similar_documents",
    "observe",
    "report_context_usage",
    "rotate_session",
}
checks = 0


def check(ok, what, detail=""):
    global checks
    if not ok:
        raise AssertionError(f"{what}: {detail}")
    checks += 1
    print(f"ok {checks}: {what}", flush=True)


async def call(session, name, args):
    """A tool call that must succeed; the SDK has already validated it against outputSchema."""
    result = await session.call_tool(name, args)
    text = result.content[0].text if result.content else ""
    check(not result.isError, f"{name} succeeds", text)
    check(json.loads(text) == result.structuredContent, f"{name}: text content is the structured JSON")
    return result.structuredContent


async def call_error(session, name, args):
    result = await session.call_tool(name, args)
    check(result.isError, f"{name} {args} fails as a tool error", result)
    return result.content[0].text


async def tenant_a_over_http(session):
    init = await session.initialize()
    check(init.protocolVersion == "2025-06-18", "the server offers 2025-06-18", init.protocolVersion)
    check(init.serverInfo.name == "mnemo", "server name", init.serverInfo)
    tools = (await session.list_tools()).tools
    check({t.name for t in tools} == TOOLS, "nine tools", [t.name for t in tools])
    check(all(t.inputSchema["type"] == "object" and t.outputSchema for t in tools), "every tool has schemas")

    r = await call(session, "remember", {"user_id": "dana", "chat_id": "c1",
                                         "content": "My name is Dana and I live in Lisbon."})
    check(r["mode"] == "message" and r["appended"] == 1, "remember appends the message", r)
    check(any(op["verdict"]["verdict"] == "written" for op in r["ops"]), "the gate writes a memory", r)
    r = await call(session, "remember", {"user_id": "dana", "kind": "fact",
                                         "content": "Dana's server runs on Debian 12"})
    check(r["mode"] == "memory" and r["ops"][0]["verdict"]["verdict"] == "written", "remember with a kind", r)
    debian = r["ops"][0]["verdict"]["memory_id"]
    r = await call(session, "remember", {"user_id": "dana", "kind": "preference",
                                         "content": "Dana prefers tea over coffee"})
    tea = r["ops"][0]["verdict"]["memory_id"]

    r = await call(session, "recall", {"user_id": "dana", "query": "which operating system does the server run?"})
    check("Debian 12" in json.dumps(r["items"] + r["exact"]), "recall finds the fact", r)
    r = await call(session, "context", {"user_id": "dana", "chat_id": "c2", "message": "Where do I live?",
                                        "budget_tokens": 500})
    check("Lisbon" in r["text"], "context carries the home town", r["text"])
    r = await call(session, "list_memories", {"user_id": "dana", "kind": "fact,preference"})
    ids = {m["id"] for m in r["items"]}
    check({debian, tea} <= ids, "list_memories lists both", r)

    r = await call(session, "forget", {"user_id": "dana", "memory_id": tea})
    check(r["memory"]["status"] == "archived", "forget archives", r)
    r = await call(session, "list_memories", {"user_id": "dana", "status": "active"})
    check(tea not in {m["id"] for m in r["items"]}, "a forgotten memory is not active", r)

    text = await call_error(session, "forget", {"user_id": "dana", "memory_id": "nope"})
    check("nope" in text, "a bad id is named", text)
    text = await call_error(session, "recall", {"user_id": "dana"})
    check("query" in text, "a missing argument is named", text)
    try:
        await session.call_tool("teleport", {})
        check(False, "an unknown tool is a protocol error")
    except McpError as e:
        check(e.error.code == -32602 and "teleport" in e.error.message, "unknown tool: -32602", e.error)
    return debian


async def tenant_b_sees_nothing(session, a_id, transport):
    for chat in (None, "c1"):
        args = {"user_id": "dana"} | ({"chat_id": chat} if chat else {})
        r = await call(session, "list_memories", args)
        check(r["items"] == [], f"{transport}: B lists nothing of A's (chat {chat})", r)
        r = await call(session, "recall", args | {"query": "Lisbon Debian Dana tea"})
        check(r["items"] == [] and r["exact"] == [] and r["excerpts"] == [], f"{transport}: B recalls nothing", r)
    r = await call(session, "context", {"user_id": "dana", "chat_id": "c1", "message": "Where do I live?"})
    leaks = [w for w in ("Lisbon", "Dana", "Debian", "tea") if w in json.dumps(r)]
    check(not leaks, f"{transport}: nothing of A's in B's context", leaks)
    text = await call_error(session, "forget", {"user_id": "dana", "memory_id": a_id})
    check("not found" in text, f"{transport}: B cannot forget A's memory", text)


async def http_session(url, key, body):
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"}, timeout=60) as client:
        async with streamable_http_client(url, http_client=client) as (read, write, session_id):
            async with ClientSession(read, write) as session:
                out = await body(session)
                check(bool(session_id()), "the HTTP transport got a session id")
                return out


async def stdio_session(binary, data_dir, key, body):
    params = StdioServerParameters(
        command=binary,
        args=["mcp", "--data-dir", data_dir],
        env={"MNEMO_API_KEY": key, "MNEMO_EMBEDDER": "hash"},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(init.protocolVersion == "2025-06-18", "stdio: negotiated 2025-06-18", init.protocolVersion)
            return await body(session)


async def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--binary", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--key-a", required=True)
    p.add_argument("--key-b", required=True)
    a = p.parse_args()

    # Without a valid key there is no MCP over HTTP at all.
    async with httpx.AsyncClient(timeout=30) as raw:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "raw", "version": "0"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        for auth in ({}, {"Authorization": "Bearer mnemo_acme_wrong"}):
            res = await raw.post(a.url, json=init, headers=headers | auth)
            check(res.status_code == 401 and "mcp-session-id" not in res.headers, "HTTP without a valid key: 401",
                  res.status_code)

    a_id = await http_session(a.url, a.key_a, tenant_a_over_http)

    async def b_over_http(session):
        await session.initialize()
        await tenant_b_sees_nothing(session, a_id, "http")

    await http_session(a.url, a.key_b, b_over_http)

    async def a_over_stdio(session):
        tools = (await session.list_tools()).tools
        check({t.name for t in tools} == TOOLS, "stdio: every tool")
        r = await call(session, "recall", {"user_id": "dana", "query": "Debian server"})
        check("Debian 12" in json.dumps(r["items"] + r["exact"]), "stdio: A recalls what A wrote over HTTP", r)
        r = await call(session, "remember", {"user_id": "dana", "chat_id": "c3",
                                             "content": "I have a dog named Biscuit."})
        check(any(op["verdict"]["verdict"] == "written" for op in r["ops"]), "stdio: remember writes", r)
        r = await call(session, "context", {"user_id": "dana", "chat_id": "c4", "message": "What is my dog called?"})
        check("Biscuit" in r["text"], "stdio: context recalls the dog", r["text"])

    await stdio_session(a.binary, a.data_dir, a.key_a, a_over_stdio)

    async def b_over_stdio(session):
        await tenant_b_sees_nothing(session, a_id, "stdio")
        r = await call(session, "recall", {"user_id": "dana", "query": "dog Biscuit"})
        check("Biscuit" not in json.dumps(r), "stdio: B does not see A's stdio writes", r)

    await stdio_session(a.binary, a.data_dir, a.key_b, b_over_stdio)
    print(f"mcp client: all {checks} checks passed", flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except Exception as e:  # noqa: BLE001 - report any failure as one line and a non-zero exit
        print(f"mcp client: FAILED after {checks} checks: {e!r}", file=sys.stderr, flush=True)
        sys.exit(1)
