"""mem0's own Python SDK (`mem0ai` from PyPI) against `mnemo serve`: every memory method of
`MemoryClient` and `AsyncMemoryClient` through the `/mem0` routes, tenant isolation between two
keys, the privacy switches of the native API seen through mem0's routes, and the self-hosted
mem0 server's routes over plain HTTP (httpx, which the SDK installs).

Run by crates/cli/tests/compat.rs with the virtualenv of scripts/compat-venv.sh:

    python mem0_client.py --base http://127.0.0.1:PORT --key-a KEY --key-b KEY
"""

import argparse
import asyncio
import os
import sys

os.environ["MEM0_TELEMETRY"] = "false"  # the SDK otherwise reports usage to mem0's servers

import httpx  # noqa: E402
from mem0 import AsyncMemoryClient, MemoryClient  # noqa: E402
from mem0.exceptions import MemoryNotFoundError, ValidationError  # noqa: E402

CHECKS = 0


def check(cond, what):
    global CHECKS
    if not cond:
        raise AssertionError(what)
    CHECKS += 1


def raises(exc, fn, what):
    try:
        fn()
    except exc as e:
        check(True, what)
        return e
    raise AssertionError(f"{what}: no {exc.__name__}")


def texts(listing):
    return [m["memory"] for m in listing["results"]]


def sync_client(base, key_a, key_b):
    a = MemoryClient(api_key=key_a, host=f"{base}/mem0")
    b = MemoryClient(api_key=key_b, host=f"{base}/mem0")

    # add: extraction (infer, the default) and text as given (infer=False).
    added = a.add([{"role": "user", "content": "I love hiking in the Alps."}], user_id="dana", metadata={"src": "t"})
    check(added["results"] and added["results"][0]["event"] == "ADD", f"add extracts: {added}")
    hiking = added["results"][0]["id"]
    given = a.add("Dana's sister lives in Porto.", user_id="dana", infer=False)
    check([r["memory"] for r in given["results"]] == ["Dana's sister lives in Porto."], f"infer=False: {given}")
    sister = given["results"][0]["id"]
    coach = a.add("Answer in French.", agent_id="coach", user_id="dana", infer=False)
    check(coach["results"][0]["event"] == "ADD", f"agent add: {coach}")
    # ids inside `filters`, as AddMemoryOptions documents them
    a.add("Erin plays the cello.", filters={"user_id": "erin"}, infer=False)

    # get_all: filters, pagination, the envelope
    dana = a.get_all(filters={"user_id": "dana"})
    check(dana["count"] == 3 and len(dana["results"]) == 3, f"get_all user: {dana}")
    tagged = a.get_all(filters={"AND": [{"user_id": "dana"}, {"metadata": {"src": "t"}}]})
    check([m["id"] for m in tagged["results"]] == [hiking] and tagged["results"][0]["metadata"] == {"src": "t"},
          f"metadata kept, returned and filtered on: {tagged}")
    check(set(texts(a.get_all(filters={"AND": [{"user_id": "dana"}, {"agent_id": "coach"}]}))) == {"Answer in French."},
          "get_all AND")
    either = a.get_all(filters={"OR": [{"user_id": "erin"}, {"agent_id": "coach"}]})
    check(set(texts(either)) == {"Erin plays the cello.", "Answer in French."}, f"get_all OR: {either}")
    check(a.get_all(filters={"AND": [{"user_id": "dana"}, {"created_at": {"gte": "2100-01-01"}}]})["count"] == 0,
          "created_at bound")
    page = a.get_all(filters={"user_id": "dana"}, page=1, page_size=2)
    check(len(page["results"]) == 2 and page["next"] and page["count"] == 3, f"page 1: {page}")
    page2 = a.get_all(filters={"user_id": "dana"}, page=2, page_size=2)
    check(len(page2["results"]) == 1 and page2["previous"] and not page2["next"], f"page 2: {page2}")
    e = raises(ValidationError, lambda: a.get_all(filters={"user_id": "dana", "keywords": {"contains": "x"}}),
               "unsupported filter refused")
    check("keywords" in str(e), f"the refusal names the filter: {e}")

    # search
    found = a.search("hiking", filters={"user_id": "dana"}, top_k=3)
    check(found["results"] and "hiking" in found["results"][0]["memory"], f"search: {found}")
    check(all(0.0 <= r["score"] <= 1.0 for r in found["results"]), "scores within 0..1")

    # get, update, history
    check(a.get(sister)["memory"] == "Dana's sister lives in Porto.", "get")
    updated = a.update(sister, text="Dana's sister lives in Lisbon.", metadata={"checked": True})
    check(updated["memory"] == "Dana's sister lives in Lisbon." and updated["metadata"] == {"checked": True},
          f"update returns the memory: {updated}")
    check(a.get(sister)["memory"] == "Dana's sister lives in Lisbon.", "the old id names the new version")
    events = [h["event"] for h in a.history(sister)]
    check(events == ["ADD", "UPDATE"], f"history: {events}")
    raises(MemoryNotFoundError, lambda: a.get("01m80000000000000000000000"), "unknown id is 404")

    # feedback, batch
    check(a.feedback(hiking, "POSITIVE", "right")["feedback"] == "POSITIVE", "feedback")
    extra = a.add("Dana drinks tea.", user_id="dana", infer=False)["results"][0]["id"]
    a.batch_update([{"memory_id": extra, "text": "Dana drinks green tea."}])
    check(a.get(extra)["memory"] == "Dana drinks green tea.", "batch_update")
    a.batch_delete([{"memory_id": extra}])
    raises(MemoryNotFoundError, lambda: a.get(extra), "batch_delete")

    # users / delete_users
    ents = {(e["type"], e["name"]) for e in a.users()["results"]}
    check({("user", "dana"), ("user", "erin"), ("agent", "coach")} <= ents, f"users: {ents}")
    a.delete_users(user_id="erin")
    check(a.get_all(filters={"user_id": "erin"})["count"] == 0, "delete_users erases the user")

    # tenant isolation: the other key sees none of it, and cannot touch it
    check(b.get_all(filters={"user_id": "dana"})["count"] == 0, "isolation: get_all")
    check(b.search("hiking", filters={"user_id": "dana"})["results"] == [], "isolation: search")
    raises(MemoryNotFoundError, lambda: b.get(hiking), "isolation: get")
    raises(MemoryNotFoundError, lambda: b.update(hiking, text="x"), "isolation: update")
    raises(MemoryNotFoundError, lambda: b.delete(hiking), "isolation: delete")
    b.delete_all(user_id="dana")
    b.delete_users(user_id="dana")
    check(b.users()["results"] == [], "isolation: users")
    check(a.get_all(filters={"user_id": "dana"})["count"] == 3, "the other tenant's deletes changed nothing")

    # delete, delete_all
    a.delete(hiking)
    raises(MemoryNotFoundError, lambda: a.get(hiking), "delete")
    check(a.history(hiking)[-1]["event"] == "DELETE", "a delete is in the history")
    a.delete_all(user_id="dana")
    check(a.get_all(filters={"user_id": "dana"})["count"] == 0, "delete_all")

    # platform-only features answer 501 with a reason
    try:
        a.get_summary(filters={"user_id": "dana"})
        raise AssertionError("get_summary should fail")
    except Exception as e:  # the SDK's generic MemoryError for 501
        check("platform" in str(e), f"501 explains: {e}")


def privacy_switches(base, key_a):
    """The native API's switches hold on the mem0 routes."""
    a = MemoryClient(api_key=key_a, host=f"{base}/mem0")
    native = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key_a}"})
    a.add("I collect stamps.", user_id="pat")
    check(a.search("stamps", filters={"user_id": "pat"})["results"], "recalled while active")
    native.post("/v1/users/pat/pause").raise_for_status()
    check(a.search("stamps", filters={"user_id": "pat"})["results"] == [], "paused: nothing recalled")
    check(a.add("I also collect coins.", user_id="pat")["results"] == [], "paused: nothing extracted")
    native.post("/v1/users/pat/resume").raise_for_status()
    native.post("/v1/users/pat/disable").raise_for_status()
    check(a.add("Stored?", user_id="pat")["results"] == [], "disabled: nothing stored")
    raises(ValidationError, lambda: a.add("Stored?", user_id="pat", infer=False), "disabled: a direct write is refused")
    native.post("/v1/users/pat/enable").raise_for_status()
    kept = a.get_all(filters={"user_id": "pat"})["results"][0]["id"]
    native.post("/v1/users/pat/erase").raise_for_status()
    raises(MemoryNotFoundError, lambda: a.get(kept), "erased through the native API: gone here too")


async def async_client(base, key_a):
    a = AsyncMemoryClient(api_key=key_a, host=f"{base}/mem0")
    added = await a.add("I work as a nurse.", user_id="lee")
    check(added["results"], f"async add: {added}")
    mid = added["results"][0]["id"]
    check((await a.get_all(filters={"user_id": "lee"}))["count"] == 1, "async get_all")
    check((await a.search("job", filters={"user_id": "lee"}))["results"][0]["id"] == mid, "async search")
    check("nurse" in (await a.get(mid))["memory"], "async get")
    check((await a.update(mid, text="Lee works as a surgeon."))["memory"] == "Lee works as a surgeon.", "async update")
    check([h["event"] for h in await a.history(mid)] == ["ADD", "UPDATE"], "async history")
    other = (await a.add("Lee owns a cat.", user_id="lee", infer=False))["results"][0]["id"]
    await a.batch_update([{"memory_id": other, "text": "Lee owns two cats."}])
    check((await a.get(other))["memory"] == "Lee owns two cats.", "async batch_update")
    await a.batch_delete([{"memory_id": other}])
    await a.feedback(mid, "NEGATIVE")
    check(("user", "lee") in {(e["type"], e["name"]) for e in (await a.users())["results"]}, "async users")
    await a.delete(mid)
    try:
        await a.get(mid)
        raise AssertionError("deleted memory still readable")
    except MemoryNotFoundError:
        check(True, "async delete")
    await a.add("Lee runs marathons.", user_id="lee", infer=False)
    await a.delete_all(user_id="lee")
    check((await a.get_all(filters={"user_id": "lee"}))["count"] == 0, "async delete_all")
    await a.add("Lee runs marathons.", user_id="lee", infer=False)
    await a.delete_users(user_id="lee")
    check((await a.get_all(filters={"user_id": "lee"}))["count"] == 0, "async delete_users")


def oss_routes(base, key_a, key_b):
    """The self-hosted server's routes, with X-API-Key and Bearer."""
    a = httpx.Client(base_url=base, headers={"X-API-Key": key_a})
    b = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key_b}"})
    r = a.post("/memories", json={"messages": [{"role": "user", "content": "I am vegetarian."}], "user_id": "max"})
    check(r.status_code == 200 and r.json()["results"][0]["event"] == "ADD", f"oss add: {r.text}")
    mid = r.json()["results"][0]["id"]
    check(a.post("/memories", json={"messages": [{"role": "user", "content": "x"}]}).status_code == 400, "ids required")
    listed = a.get("/memories", params={"user_id": "max"}).json()
    check(list(listed) == ["results"] and listed["results"][0]["id"] == mid, f"oss list: {listed}")
    check(a.get(f"/memories/{mid}").json()["user_id"] == "max", "oss get")
    check(a.get("/memories/01m80000000000000000000000").json() is None, "oss unknown id is null")
    check(b.get(f"/memories/{mid}").json() is None, "oss isolation: get")
    check(b.put(f"/memories/{mid}", json={"text": "x"}).status_code == 404, "oss isolation: update")
    u = a.put(f"/memories/{mid}", json={"text": "Max is vegan."})
    check(u.json() == {"message": "Memory updated successfully!"}, f"oss update: {u.text}")
    check([h["event"] for h in a.get(f"/memories/{mid}/history").json()] == ["ADD", "UPDATE"], "oss history")
    s = a.post("/search", json={"query": "is max vegan", "filters": {"user_id": "max"}}).json()
    check(s["results"] and s["results"][0]["memory"] == "Max is vegan.", f"oss search: {s}")
    check(a.post("/search", json={"query": "q"}).status_code == 400, "oss search needs an id")
    check(b.post("/search", json={"query": "vegan", "user_id": "max"}).json()["results"] == [], "oss isolation: search")
    b.post("/reset").raise_for_status()
    check(a.get("/memories", params={"user_id": "max"}).json()["results"], "another tenant's reset changed nothing")
    check(a.delete(f"/memories/{mid}").status_code == 200, "oss delete")
    check(a.delete(f"/memories/{mid}").status_code == 404, "oss delete twice")
    a.post("/memories", json={"messages": [{"role": "user", "content": "Max likes jazz."}], "user_id": "max",
                              "infer": False})
    check(a.delete("/memories").status_code == 400, "oss delete_all needs an id")
    a.delete("/memories", params={"user_id": "max"}).raise_for_status()
    check(a.get("/memories", params={"user_id": "max"}).json()["results"] == [], "oss delete_all")
    a.post("/memories", json={"messages": "Max likes jazz.", "user_id": "max", "infer": False}).raise_for_status()
    check(a.post("/reset").json() == {"message": "All memories reset"}, "oss reset")
    check(a.get("/memories").json() == [], "oss reset empties the tenant")
    check(httpx.get(f"{base}/memories", params={"user_id": "max"}).status_code == 401, "oss needs a key")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--base", required=True)
    p.add_argument("--key-a", required=True)
    p.add_argument("--key-b", required=True)
    args = p.parse_args()
    try:
        MemoryClient(api_key="mnemo_acme_wrong", host=f"{args.base}/mem0")
        raise AssertionError("a bad key must fail the constructor")
    except ValueError as e:
        check("key" in str(e).lower(), f"bad key: {e}")
    sync_client(args.base, args.key_a, args.key_b)
    privacy_switches(args.base, args.key_a)
    asyncio.run(async_client(args.base, args.key_a))
    oss_routes(args.base, args.key_a, args.key_b)
    print(f"{CHECKS} checks passed")


if __name__ == "__main__":
    sys.exit(main())
