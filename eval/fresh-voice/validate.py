#!/usr/bin/env python3
"""Validate the fresh-voice conversation files (stdlib only).

Usage: python3 eval/fresh-voice/validate.py
Exits non-zero and prints every problem if any file breaks the schema rules
described in README.md.
"""
import collections
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
CONV_DIR = HERE / "conversations"
CATEGORIES = ("texting", "non_native", "other_language", "multi_party")
LANGS = {"en", "de", "es", "fr", "it", "pt", "nl", "tr", "pl", "sv", "cs"}
ABOUT = {"self", "assistant", "other", "reported", "mixed"}
LABEL_RE = re.compile(r"^[A-Z][A-Za-z]{1,20}: ")


def load_all():
    convs = []
    for path in sorted(CONV_DIR.glob("*.json")):
        with open(path, encoding="utf-8") as fh:
            convs.append((path, json.load(fh)))
    return convs


def check(path, c):
    errs = []
    e = errs.append
    if c.get("id") != path.stem:
        e(f"id {c.get('id')!r} != file stem {path.stem!r}")
    if c.get("category") not in CATEGORIES:
        e(f"bad category {c.get('category')!r}")
    if c.get("language") not in LANGS:
        e(f"bad language {c.get('language')!r}")
    sessions = c.get("sessions") or []
    if not 1 <= len(sessions) <= 3:
        e(f"{len(sessions)} sessions (want 1-3)")
    turns = [t for s in sessions for t in s.get("turns", [])]
    if not 8 <= len(turns) <= 20:
        e(f"{len(turns)} turns (want 8-20)")
    for s in sessions:
        if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", s.get("at", "")):
            e(f"bad session time {s.get('at')!r}")
    for t in turns:
        if t.get("role") not in ("user", "assistant"):
            e(f"bad role {t.get('role')!r}")
        if t.get("about") not in ABOUT:
            e(f"bad about {t.get('about')!r}")
        if (t.get("role") == "assistant") != (t.get("about") == "assistant"):
            e(f"role/about mismatch: {t['content'][:40]!r}")
        if "lang" in t and (t["lang"] not in LANGS or t["lang"] == c.get("language")):
            e(f"bad turn lang {t.get('lang')!r}")
        if c.get("category") == "multi_party" and t.get("role") == "user" \
                and LABEL_RE.match(t["content"]) and t["about"] != "other":
            e(f"labelled line not marked other: {t['content'][:40]!r}")
    probes = c.get("probes") or []
    if not 2 <= len(probes) <= 3:
        e(f"{len(probes)} probes (want 2-3)")
    for p in probes:
        exp = p.get("expect", "")
        if len(exp.split()) < 3:
            e(f"expect too short: {exp!r}")
        hits = [t for t in turns if exp in t["content"]]
        if len(hits) != 1:
            e(f"expect {exp!r} found in {len(hits)} turns (want exactly 1)")
        if not p.get("question"):
            e("empty question")
    return errs


def main():
    convs = load_all()
    problems = 0
    cats = collections.Counter()
    langs = collections.Counter()
    for path, c in convs:
        cats[c.get("category")] += 1
        if c.get("category") == "other_language":
            langs[c.get("language")] += 1
        for err in check(path, c):
            problems += 1
            print(f"{path.name}: {err}")
    for cat in CATEGORIES:
        if cats[cat] < 10:
            problems += 1
            print(f"category {cat}: only {cats[cat]} conversations (want >= 10)")
    for lang in ("de", "es", "fr"):
        if langs[lang] < 3:
            problems += 1
            print(f"other_language: only {langs[lang]} in {lang} (want >= 3)")
    print(f"{len(convs)} conversations, categories {dict(cats)}, "
          f"other_language {dict(langs)}, {problems} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
