#!/usr/bin/env python3
"""Fresh-voice evaluation harness for mnemo (Python 3.11 stdlib only).

Usage (from the repository root):

    python3 eval/fresh-voice/run.py --mnemo /path/to/mnemo --out report.json [--only PATTERN]

For every conversation in eval/fresh-voice/conversations/ it creates a fresh
data directory, ingests each session as its own chat (user "fv", chats s1..sN),
lists every memory of the user with its provenance, asks each probe question
through `mnemo context` (chat "probe", budget 1000 tokens) and applies four
checks:

  wrong_person       content presented as the user's ("User …", "User's …",
                     "the user …" anywhere, unless the memory itself
                     attributes it: "mum thinks User …", or its subject is
                     one of the user's people: "User's sister …") while every source
                     turn is an assistant turn, another speaker's line, or a
                     reported/hypothetical statement (the literal reading,
                     memory starts with "User"/"User's"/"the user", is kept as
                     wrong_person_strict for comparison)
  non_english_wrong  every source turn is non-English (the extractor is
                     English-only, so any such memory is listed for a human)
  unreadable         readability.problems() finds something (see readability.py)
  probe_hit          the probe's `expect` phrase occurs in the context block
                     (case-insensitive, whitespace-normalised)

A summary table per category is printed and the full report (every memory
text, every flagged memory, every context block) is written to --out.
A failing mnemo command is recorded as an error for that conversation; the run
goes on.
"""

import argparse
import datetime as dt
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from readability import problems as readability_problems  # noqa: E402

USER = "fv"
PROBE_CHAT = "probe"
CATEGORIES = ("texting", "non_native", "other_language", "multi_party")
NON_SELF = {"assistant", "other", "reported"}
# "User …", "User's …", "the user …" at the start of the memory
STARTS_AS_USER = re.compile(r"^\W*(?:User\b|User['\u2019]s\b|[Tt]he user\b)")
# "User" / "the user" anywhere in the memory
MENTIONS_USER = re.compile(r"\b(?:User|[Tt]he user)\b")
# the memory itself attributes the claim to someone else ("mum thinks User
# should …", "User's dad always said they were …"); a reporting verb whose
# subject is the user ("User said …") does not count as attribution
ATTRIBUTED = re.compile(
    r"(?<!\bUser )(?<!\bthey )\b(?:said|says|say|thinks|think|thought|reckons|reckon|"
    r"believes|believe|told|tells|claims|claimed|convinced|according to)\b",
    re.IGNORECASE,
)


# the memory's subject is one of the user's people ("User's sister is getting
# married", "Oli (User's son) got his first match", or the user's own words
# quoted: 'On 2026-11-20 User said: "My lil bro wants to go pro"'): what
# follows is theirs
RELATIVE_SUBJECT = re.compile(
    r"^\W*(?:User['\u2019]s|[A-Z\u00c0-\u00de]\w+ \(User['\u2019]s|On \S+ User said: \"(?:[Mm]y|[Oo]ur))\s+"
    r"(?:(?:little|lil|big|older|younger|eldest|youngest|best)\s+)?"
    r"(?:sister|sis|brother|bro|son|lad|daughter|kids?|children|child|boy|girl|baby|mum|mam|mom|mother|dad|father|"
    r"parents|wife|missus|husband|hubby|partner|boyfriend|girlfriend|fianc\w+|grandma|grandmother|gran|nan|grandpa|"
    r"grandfather|aunt|auntie|uncle|cousin|niece|nephew|friend|mate|flatmate|housemate|roommate|neighbou?r|boss|"
    r"manager|colleague|coworker|teammate|coach)\b"
)


def presents_as_user(content):
    """True when the memory states something as the user's own fact.

    Any mention of "User"/"the user" counts ("reminder User is off Thursday"
    presents Aisha's day off as the user's), unless the memory carries its own
    attribution to somebody else ("mum thinks User should move back") or its
    subject is one of the user's people ("User's sister is getting married")."""
    return (bool(MENTIONS_USER.search(content)) and not ATTRIBUTED.search(content)
            and not RELATIVE_SUBJECT.match(content))
LABEL_RE = re.compile(r"^([A-Z][A-Za-z]{1,20}): ")


# --------------------------------------------------------------------------
# running mnemo
# --------------------------------------------------------------------------

class Runner:
    def __init__(self, mnemo, timeout, use_nice, config):
        self.mnemo = mnemo
        self.timeout = timeout
        self.prefix = ["nice", "-n", "10"] if use_nice and shutil.which("nice") else []
        self.config = config
        env = {k: v for k, v in os.environ.items() if not k.startswith("MNEMO_")}
        env["MNEMO_LOG"] = "error"
        self.env = env
        self.calls = 0
        self.seconds = 0.0

    def run(self, args, cwd):
        cmd = self.prefix + [self.mnemo] + args
        if self.config:
            cmd += ["--config", self.config]
        t0 = time.monotonic()
        self.calls += 1
        try:
            p = subprocess.run(cmd, cwd=cwd, env=self.env, capture_output=True,
                               text=True, timeout=self.timeout)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out, err = 124, _text(e.stdout), _text(e.stderr) + f"\n[timeout after {self.timeout}s]"
        except OSError as e:
            rc, out, err = 127, "", str(e)
        self.seconds += time.monotonic() - t0
        return rc, out, err


def _text(b):
    if b is None:
        return ""
    return b.decode("utf-8", "replace") if isinstance(b, bytes) else b


def _tail(s, n=800):
    s = (s or "").strip()
    return s if len(s) <= n else "…" + s[-n:]


def _parse_json(out):
    out = out.strip()
    try:
        return json.loads(out)
    except json.JSONDecodeError:
        # tolerate a stray line before the JSON document
        for start in (out.find("{"), out.find("[")):
            if start > 0:
                try:
                    return json.loads(out[start:])
                except json.JSONDecodeError:
                    pass
        raise


# --------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------

def norm(s):
    s = (s or "").replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"\s+", " ", s).strip().casefold()


def iso(t):
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def load_conversations(conv_dir, only):
    convs = []
    for path in sorted(conv_dir.glob("*.json")):
        with open(path, encoding="utf-8") as fh:
            c = json.load(fh)
        if only and not (re.search(only, c.get("id", path.stem)) or re.search(only, c.get("category", ""))):
            continue
        convs.append(c)
    return convs


def turn_table(conv):
    """Map message id (s1t3) -> turn info."""
    table = {}
    for si, s in enumerate(conv["sessions"], 1):
        for ti, t in enumerate(s["turns"], 1):
            table[f"s{si}t{ti}"] = {
                "role": t["role"],
                "about": t.get("about", "self" if t["role"] == "user" else "assistant"),
                "lang": t.get("lang", conv.get("language", "en")),
                "content": t["content"],
            }
    return table


def speaker_names(conv):
    names = set()
    for s in conv["sessions"]:
        for t in s["turns"]:
            m = LABEL_RE.match(t["content"])
            if m:
                names.add(m.group(1))
    return names


def memory_sources(mem):
    prov = mem.get("provenance") or {}
    src = prov.get("sources")
    if src is None:
        src = mem.get("sources")
    return list(src) if isinstance(src, list) else None


def resolve_source(sid, table):
    if sid in table:
        return sid
    # tolerate qualified ids such as "s1:s1t3" or "chat/s1t3"
    m = re.search(r"(s\d+t\d+)$", str(sid))
    if m and m.group(1) in table:
        return m.group(1)
    return None


# --------------------------------------------------------------------------
# one conversation
# --------------------------------------------------------------------------

def run_conversation(conv, runner, budget, keep_data):
    res = {
        "id": conv["id"],
        "category": conv["category"],
        "language": conv.get("language", "en"),
        "errors": [],
        "ingest": [],
        "memories": [],
        "wrong_person": [],
        "wrong_person_strict": [],
        "non_english_wrong": [],
        "unreadable": [],
        "unmapped_sources": [],
        "probes": [],
    }
    table = turn_table(conv)
    names = speaker_names(conv)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix=f"fv-{conv['id']}-"))
    data = tmp / "data"
    if keep_data:
        res["data_dir"] = str(data)
    try:
        # ---- ingest: one chat per session ----
        for si, s in enumerate(conv["sessions"], 1):
            t0 = dt.datetime.strptime(s["at"], "%Y-%m-%dT%H:%M:%SZ")
            f = tmp / f"s{si}.jsonl"
            with open(f, "w", encoding="utf-8") as fh:
                for ti, t in enumerate(s["turns"], 1):
                    fh.write(json.dumps({
                        "role": t["role"], "content": t["content"], "id": f"s{si}t{ti}",
                        "at": iso(t0 + dt.timedelta(minutes=ti - 1)),
                    }, ensure_ascii=False) + "\n")
            rc, out, err = runner.run(["ingest", str(f), "--user", USER, "--chat", f"s{si}",
                                       "--data-dir", str(data), "--json"], cwd=tmp)
            if rc != 0:
                res["errors"].append({"step": f"ingest s{si}", "rc": rc, "stderr": _tail(err)})
                continue
            info = {"chat": f"s{si}"}
            try:
                rep = _parse_json(out)
                ops = rep.get("ops") or []
                info["appended"] = rep.get("appended")
                info["duplicates"] = rep.get("duplicates")
                info["ops"] = len(ops)
                verdicts = [((o.get("verdict") or {}).get("verdict")) for o in ops]
                info["written"] = sum(1 for v in verdicts if v == "written")
                info["rejected"] = sum(1 for v in verdicts if v == "rejected")
            except (json.JSONDecodeError, AttributeError) as e:
                info["parse_error"] = str(e)
            res["ingest"].append(info)

        # ---- list every memory of the user ----
        rc, out, err = runner.run(["list", "--user", USER, "--data-dir", str(data), "--json"], cwd=tmp)
        mems = []
        if rc != 0:
            res["errors"].append({"step": "list", "rc": rc, "stderr": _tail(err)})
        else:
            try:
                doc = _parse_json(out)
                mems = doc if isinstance(doc, list) else (doc.get("memories") or doc.get("items") or [])
            except json.JSONDecodeError as e:
                res["errors"].append({"step": "list", "rc": rc, "stderr": f"bad JSON: {e}: {_tail(out, 300)}"})

        for m in mems:
            if isinstance(m, dict) and "memory" in m and "content" not in m:
                m = m["memory"]
            sources = memory_sources(m)
            if sources is None and m.get("id"):
                rc, out, err = runner.run(["show", m["id"], "--user", USER, "--data-dir", str(data), "--json"], cwd=tmp)
                if rc == 0:
                    try:
                        shown = _parse_json(out)
                        shown = shown.get("memory", shown) if isinstance(shown, dict) else shown
                        sources = memory_sources(shown) or []
                    except json.JSONDecodeError:
                        sources = []
                else:
                    res["errors"].append({"step": f"show {m['id']}", "rc": rc, "stderr": _tail(err)})
                    sources = []
            prov = m.get("provenance") or {}
            resolved = [resolve_source(s, table) for s in sources]
            mapped = [r for r in resolved if r]
            rec = {
                "id": m.get("id"),
                "content": m.get("content", ""),
                "kind": m.get("kind"),
                "surface": m.get("surface"),
                "status": m.get("status"),
                "rule": prov.get("rule"),
                "chat": prov.get("chat"),
                "sources": sources,
                "source_about": [table[r]["about"] for r in mapped],
                "source_lang": [table[r]["lang"] for r in mapped],
                "flags": [],
            }
            content = rec["content"]
            if len(mapped) != len(sources) or not sources:
                res["unmapped_sources"].append({"id": rec["id"], "content": content, "sources": sources})
            if mapped and len(mapped) == len(sources):
                non_self = all(a in NON_SELF for a in rec["source_about"])
                if non_self and presents_as_user(content):
                    rec["flags"].append("wrong_person")
                    res["wrong_person"].append(_example(rec, table, mapped))
                if non_self and STARTS_AS_USER.match(content):
                    # the literal reading: starts with "User"/"User's"/"the user",
                    # attribution or not; kept for comparison only
                    rec["flags"].append("wrong_person_strict")
                    res["wrong_person_strict"].append(rec["id"])
                if all(lang != "en" for lang in rec["source_lang"]):
                    rec["flags"].append("non_english_wrong")
                    res["non_english_wrong"].append(_example(rec, table, mapped))
            reasons = readability_problems(content, names)
            if reasons:
                rec["flags"].append("unreadable")
                rec["unreadable_reasons"] = reasons
                ex = _example(rec, table, mapped)
                ex["reasons"] = reasons
                res["unreadable"].append(ex)
            res["memories"].append(rec)

        # ---- probes ----
        for p in conv.get("probes", []):
            pr = {"question": p["question"], "expect": p["expect"], "hit": False,
                  "hit_sections": [], "block": None}
            args = ["context", p["question"], "--user", USER, "--chat", PROBE_CHAT,
                    "--data-dir", str(data), "--json"]
            if budget:
                args[6:6] = ["--budget", str(budget)]
            rc, out, err = runner.run(args, cwd=tmp)
            if rc != 0:
                res["errors"].append({"step": f"context {p['question']!r}", "rc": rc, "stderr": _tail(err)})
                pr["error"] = True
                res["probes"].append(pr)
                continue
            block_text, sections = "", []
            try:
                doc = _parse_json(out)
                block = doc.get("block", doc)
                block_text = block.get("text", "") if isinstance(block, dict) else str(block)
                sections = block.get("sections", []) if isinstance(block, dict) else []
            except (json.JSONDecodeError, AttributeError):
                block_text = out  # plain text fallback
            want = norm(p["expect"])
            pr["block"] = block_text
            pr["hit"] = want in norm(block_text)
            for sec in sections:
                if any(want in norm(it.get("text", "")) for it in sec.get("items", [])):
                    pr["hit_sections"].append(sec.get("name"))
            pr["hit_via_memory"] = any(s != "excerpt" for s in pr["hit_sections"])
            res["probes"].append(pr)
    except Exception as e:  # noqa: BLE001 - a broken conversation must not stop the run
        res["errors"].append({"step": "harness", "rc": None, "stderr": f"{type(e).__name__}: {e}"})
    finally:
        if not keep_data:
            shutil.rmtree(tmp, ignore_errors=True)
    return res


def _example(rec, table, mapped):
    return {
        "id": rec["id"],
        "content": rec["content"],
        "kind": rec["kind"],
        "rule": rec["rule"],
        "sources": rec["sources"],
        "source_about": rec["source_about"],
        "source_lang": rec["source_lang"],
        "source_text": [table[r]["content"] for r in mapped],
    }


# --------------------------------------------------------------------------
# summary
# --------------------------------------------------------------------------

def summarise(results):
    rows = {}
    for cat in list(CATEGORIES) + sorted({r["category"] for r in results} - set(CATEGORIES)):
        rs = [r for r in results if r["category"] == cat]
        if rs:
            rows[cat] = _row(rs)
    rows["total"] = _row(results)
    return rows


def _row(rs):
    reasons = {}
    for r in rs:
        for u in r["unreadable"]:
            for why in u["reasons"]:
                reasons[why] = reasons.get(why, 0) + 1
    probes = [p for r in rs for p in r["probes"]]
    return {
        "conversations": len(rs),
        "with_errors": sum(1 for r in rs if r["errors"]),
        "memories": sum(len(r["memories"]) for r in rs),
        "wrong_person": sum(len(r["wrong_person"]) for r in rs),
        "wrong_person_strict": sum(len(r["wrong_person_strict"]) for r in rs),
        "non_english_wrong": sum(len(r["non_english_wrong"]) for r in rs),
        "unreadable": sum(len(r["unreadable"]) for r in rs),
        "unreadable_by_reason": reasons,
        "probes": len(probes),
        "probe_hits": sum(1 for p in probes if p["hit"]),
        "probe_hits_via_memory": sum(1 for p in probes if p.get("hit_via_memory")),
        "unmapped_sources": sum(len(r["unmapped_sources"]) for r in rs),
    }


def print_table(rows, file=sys.stdout):
    head = ("category", "convs", "errs", "memories", "wrong_person", "non_en_wrong",
            "unreadable", "probe hits", "via memory")
    fmt = "{:<15} {:>5} {:>4} {:>8} {:>12} {:>12} {:>10} {:>10} {:>10}"
    print(fmt.format(*head), file=file)
    print("-" * 95, file=file)
    for cat, r in rows.items():
        if cat == "total":
            print("-" * 95, file=file)
        print(fmt.format(cat, r["conversations"], r["with_errors"], r["memories"], r["wrong_person"],
                         r["non_english_wrong"], r["unreadable"],
                         f"{r['probe_hits']}/{r['probes']}", f"{r['probe_hits_via_memory']}/{r['probes']}"),
              file=file)
    reasons = rows["total"]["unreadable_by_reason"]
    if reasons:
        print("unreadable by reason: " + ", ".join(f"{k}={v}" for k, v in sorted(reasons.items())), file=file)


# --------------------------------------------------------------------------
# main
# --------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mnemo", required=True, help="path to the mnemo binary")
    ap.add_argument("--out", required=True, help="where to write the JSON report")
    ap.add_argument("--only", help="regular expression on conversation id or category")
    ap.add_argument("--conversations", default=str(HERE / "conversations"),
                    help="directory of conversation JSON files")
    ap.add_argument("--budget", type=int, default=1000, help="token budget for `mnemo context` (0: none)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds allowed per mnemo call")
    ap.add_argument("--config", help="pass --config FILE to every mnemo call (default: none, built-in defaults)")
    ap.add_argument("--no-nice", action="store_true", help="do not run mnemo under nice -n 10")
    ap.add_argument("--keep-data", action="store_true", help="keep the temporary data directories")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)

    mnemo = shutil.which(args.mnemo) or args.mnemo
    mnemo = str(pathlib.Path(mnemo).resolve())
    if not os.access(mnemo, os.X_OK):
        print(f"error: {mnemo} is not an executable", file=sys.stderr)
        return 2
    convs = load_conversations(pathlib.Path(args.conversations), args.only)
    if not convs:
        print("error: no conversation matched", file=sys.stderr)
        return 2

    runner = Runner(mnemo, args.timeout, not args.no_nice, args.config)
    rc, version, _ = runner.run(["--version"], cwd=str(HERE))
    started = dt.datetime.now(dt.timezone.utc)
    results = []
    for i, conv in enumerate(convs, 1):
        t0 = time.monotonic()
        r = run_conversation(conv, runner, args.budget, args.keep_data)
        r["seconds"] = round(time.monotonic() - t0, 2)
        results.append(r)
        if not args.quiet:
            hits = sum(1 for p in r["probes"] if p["hit"])
            print(f"[{i:>2}/{len(convs)}] {r['id']:<36} mem={len(r['memories']):>3} "
                  f"wp={len(r['wrong_person'])} ne={len(r['non_english_wrong'])} "
                  f"ur={len(r['unreadable'])} probes={hits}/{len(r['probes'])}"
                  f"{'  ERR' if r['errors'] else ''}  {r['seconds']}s", flush=True)

    rows = summarise(results)
    examples = {k: [dict(conversation=r["id"], **e) for r in results for e in r[k]]
                for k in ("wrong_person", "non_english_wrong", "unreadable")}
    examples["probe_misses"] = [
        {"conversation": r["id"], "question": p["question"], "expect": p["expect"]}
        for r in results for p in r["probes"] if not p["hit"]
    ]
    report = {
        "meta": {
            "mnemo": mnemo,
            "mnemo_version": version.strip() if rc == 0 else None,
            "started": iso(started),
            "finished": iso(dt.datetime.now(dt.timezone.utc)),
            "argv": sys.argv,
            "only": args.only,
            "budget": args.budget,
            "user": USER,
            "probe_chat": PROBE_CHAT,
            "mnemo_calls": runner.calls,
            "mnemo_seconds": round(runner.seconds, 1),
        },
        "summary": rows,
        "examples": examples,
        "errors": [dict(conversation=r["id"], **e) for r in results for e in r["errors"]],
        "conversations": results,
    }
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(report, fh, ensure_ascii=False, indent=1)
        fh.write("\n")
    print()
    print_table(rows)
    print(f"\nreport: {out}  ({runner.calls} mnemo calls, {runner.seconds:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
