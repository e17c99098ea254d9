"""`Memory.context` latency from Python, beside `mnemo bench locomo`'s in-process figure.

Ingests one LoCoMo conversation through `Memory.add` (each session a chat, turns rendered as
"Speaker: text [shares a photo: caption]" at the session's time, as the Rust harness does), then
asks every question that has evidence once through `Memory.context` at one budget, each from a
fresh chat, and prints the wall time per call as seen by Python (p50 / p95), with the local
model. Run it with the wheel installed (`scripts/build-python.sh`, `pip install dist/...`):

    python crates/python/bench/context_latency.py --data ../shared/data/locomo10.json
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import sys
import tempfile
import time

import mnemo


def session_time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=dt.timezone.utc)


def render(turn: dict) -> str:
    out = f"{turn['speaker']}: {turn['text'].strip()}"
    if turn.get("blip_caption"):
        out += f" [shares a photo: {turn['blip_caption'].strip()}]"
    return out


def percentile(values: list, p: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", required=True, help="locomo10.json")
    ap.add_argument("--conversation", type=int, default=0)
    ap.add_argument("--budget", type=int, default=1000)
    ap.add_argument("--embedder", default=None, help="local (default) or hash")
    args = ap.parse_args()

    conv = json.load(open(args.data))[args.conversation]
    talk = conv["conversation"]
    user = conv["sample_id"]
    with tempfile.TemporaryDirectory() as tmp, mnemo.Memory(data_dir=tmp, embedder=args.embedder) as m:
        started = time.perf_counter()
        n = 1
        turns = 0
        while f"session_{n}" in talk:
            at = session_time(talk[f"session_{n}_date_time"])
            messages = [
                {"role": "user", "content": render(t), "id": t["dia_id"], "at": at + dt.timedelta(seconds=30 * i)}
                for i, t in enumerate(talk[f"session_{n}"])
            ]
            m.add(messages, user_id=user, chat_id=f"session_{n}")
            turns += len(messages)
            n += 1
        ingest = time.perf_counter() - started
        memories = len(m.get_all(user_id=user))
        questions = [q["question"] for q in conv["qa"] if q.get("evidence")]
        times = []
        for i, q in enumerate(questions):
            t = time.perf_counter()
            m.context(q, user_id=user, chat_id=f"q{i}", budget_tokens=args.budget)
            times.append((time.perf_counter() - t) * 1e3)
    print(f"{user}: {n - 1} sessions, {turns} turns ingested in {ingest:.1f} s, {memories} active memories")
    print(
        f"Memory.context at {args.budget} tokens, {len(times)} questions: "
        f"p50 {statistics.median(times):.1f} ms, p95 {percentile(times, 95):.1f} ms, "
        f"mean {statistics.fmean(times):.1f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
