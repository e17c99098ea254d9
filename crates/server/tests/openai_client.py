"""OpenAI's own Python SDK (`openai` from PyPI) through mnemo's proxy, against a scripted
OpenAI-compatible upstream on loopback (this file's `Upstream`, which records every request).

The script starts the upstream, then `mnemo serve` pointed at it, and checks: the second
conversation's upstream request carries what the first taught; a streamed answer arrives chunk
by chunk (usage chunk included); tools and unknown fields pass through untouched; an upstream
429 reaches the client as 429; a bad key is refused; a failure of mnemo's own leaves the chat
working. Run by crates/cli/tests/compat.rs:

    python openai_client.py --binary mnemo --data-dir DIR --key KEY
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import openai

CHECKS = 0
PAUSE = 0.3  # seconds between the upstream's streamed chunks


def check(cond, what):
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1


class Upstream(BaseHTTPRequestHandler):
    seen = []  # every chat request's JSON body, in order

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/v1/models":
            return self.reply(200, {"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "t"}]})
        self.reply(404, {"error": {"message": "no such route"}})

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        Upstream.seen.append({"body": body, "auth": self.headers.get("Authorization")})
        if body.get("model") == "rate-limited":
            return self.reply(429, {"error": {"message": "slow down", "type": "rate_limit_exceeded"}},
                              [("Retry-After", "7")])
        if not body.get("stream"):
            return self.reply(200, {
                "id": "c1", "object": "chat.completion", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "Noted, thanks."},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
            })
        # A server-sent event stream, closed-delimited, one event at a time with pauses.
        self.protocol_version = "HTTP/1.0"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()

        def event(delta, finish=None, usage=None):
            chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 0, "model": "scripted",
                     "choices": [] if usage else [{"index": 0, "delta": delta, "finish_reason": finish}]}
            if usage:
                chunk["usage"] = usage
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.flush()

        event({"role": "assistant", "content": ""})
        for piece in ["How about ", "some apple ", "slices?"]:
            event({"content": piece})
            time.sleep(PAUSE)
        event({}, finish="stop")
        if (body.get("stream_options") or {}).get("include_usage"):
            event(None, usage={"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


def start_upstream():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def start_mnemo(binary, data_dir, upstream_url):
    env = dict(os.environ, MNEMO_EMBEDDER="hash", MNEMO_PROXY_UPSTREAM_URL=upstream_url,
               MNEMO_PROXY_UPSTREAM_KEY="upstream-secret")
    for k in ("MNEMO_LOG", "RUST_LOG", "MNEMO_LOG_FORMAT", "MNEMO_CONFIG"):
        env.pop(k, None)
    proc = subprocess.Popen([binary, "--data-dir", data_dir, "serve", "--addr", "127.0.0.1:0"],
                            env=env, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        if "listening on http://" in line:
            addr = line.split("listening on http://")[1].strip()
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()
            return proc, f"http://{addr}"
    raise AssertionError("mnemo serve exited before listening")


def memories(base, key, user):
    r = httpx.get(f"{base}/v1/memories", params={"user_id": user}, headers={"Authorization": f"Bearer {key}"})
    r.raise_for_status()
    return [m["content"] for m in r.json()["items"]]


def wait_for(fn, what, seconds=10.0):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if fn():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def run(base, key):
    client = openai.OpenAI(base_url=f"{base}/openai/v1", api_key=key, max_retries=0)

    check("scripted" in [m.id for m in client.models.list().data], "models pass through")

    # Conversation 1, not streamed, with tools and a field OpenAI's SDK does not know.
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object", "properties": {}}}}]
    raw = client.chat.completions.with_raw_response.create(
        model="scripted", user="dana", tools=tools, extra_body={"mnemo_passthrough": {"x": [1, 2]}},
        messages=[{"role": "system", "content": "You are a helpful cook."},
                  {"role": "user", "content": "I am allergic to peanuts."}],
    )
    first = raw.parse()
    check(first.choices[0].message.content == "Noted, thanks.", f"answer passes through: {first}")
    check(raw.headers.get("x-mnemo-memory", "").startswith("turn "), f"memory header: {dict(raw.headers)}")
    sent = Upstream.seen[-1]
    check(sent["auth"] == "Bearer upstream-secret", "the upstream key replaces the client's")
    check(sent["body"]["tools"] == tools and sent["body"]["mnemo_passthrough"] == {"x": [1, 2]},
          f"tools and unknown fields untouched: {sent['body']}")
    check(sent["body"]["messages"][0]["content"] == "You are a helpful cook.", "the app's system message stays first")
    wait_for(lambda: any("peanut" in m.lower() for m in memories(base, key, "dana")), "the first conversation's memory")

    # Conversation 2, streamed: the upstream request carries what conversation 1 taught.
    started = time.monotonic()
    stream = client.chat.completions.create(
        model="scripted", user="dana", stream=True, stream_options={"include_usage": True},
        messages=[{"role": "system", "content": "You are a helpful cook."},
                  {"role": "user", "content": "Suggest a snack with peanuts for me."}],
    )
    arrivals, pieces, usage = [], [], None
    for chunk in stream:
        if chunk.usage:
            usage = chunk.usage
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.monotonic() - started)
            pieces.append(chunk.choices[0].delta.content)
    check("".join(pieces) == "How about some apple slices?", f"streamed answer: {pieces}")
    check(len(arrivals) == 3 and arrivals[-1] - arrivals[0] >= 1.5 * PAUSE,
          f"chunks arrive one by one, not buffered: {arrivals}")
    check(usage is not None and usage.total_tokens == 15, f"usage chunk: {usage}")
    msgs = Upstream.seen[-1]["body"]["messages"]
    check(msgs[0]["content"] == "You are a helpful cook." and msgs[1]["role"] == "system"
          and "peanut" in msgs[1]["content"].lower(), f"the block follows the app's system message: {msgs}")
    check(msgs[-1]["content"] == "Suggest a snack with peanuts for me.", "the user's message is last")

    # The user can come from a header too.
    headed = openai.OpenAI(base_url=f"{base}/openai/v1", api_key=key, max_retries=0,
                           default_headers={"X-Mnemo-User": "dana", "X-Mnemo-Chat": "kitchen"})
    headed.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "Any snack ideas?"}])
    check("peanut" in json.dumps(Upstream.seen[-1]["body"]["messages"]).lower(), "X-Mnemo-User names the user")

    # An upstream error reaches the client with its status and body.
    try:
        client.chat.completions.create(model="rate-limited", user="dana", messages=[{"role": "user", "content": "Hi"}])
        raise AssertionError("429 expected")
    except openai.RateLimitError as e:
        check(e.status_code == 429 and "slow down" in str(e), f"429 passes through: {e}")
        check(e.response.headers.get("retry-after") == "7", "its headers too")

    # A failure of mnemo's own (a user id it cannot take) leaves the chat working, without memory.
    raw = client.chat.completions.with_raw_response.create(
        model="scripted", user="u" * 300, messages=[{"role": "user", "content": "Hello"}])
    check(raw.parse().choices[0].message.content == "Noted, thanks.", "the chat still answers")
    check(raw.headers.get("x-mnemo-memory", "").startswith("skipped:"), f"and says why: {dict(raw.headers)}")
    check(all(m["role"] != "system" for m in Upstream.seen[-1]["body"]["messages"]), "forwarded without memory")

    # A bad key is refused before anything goes upstream.
    before = len(Upstream.seen)
    bad = openai.OpenAI(base_url=f"{base}/openai/v1", api_key="mnemo_acme_wrong", max_retries=0)
    try:
        bad.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "Hi"}])
        raise AssertionError("401 expected")
    except openai.AuthenticationError as e:
        check(e.status_code == 401, f"bad key: {e}")
    check(len(Upstream.seen) == before, "nothing forwarded for a bad key")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--binary", required=True)
    p.add_argument("--data-dir", required=True)
    p.add_argument("--key", required=True)
    args = p.parse_args()
    upstream = start_upstream()
    proc, base = start_mnemo(args.binary, args.data_dir, f"http://127.0.0.1:{upstream.server_address[1]}/v1")
    try:
        run(base, args.key)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        upstream.shutdown()
    print(f"{CHECKS} checks passed")


if __name__ == "__main__":
    sys.exit(main())
