"""mem0's own Python client (PyPI mem0ai), unchanged, against this service's /compat/mem0: each step's result is
printed as one JSON object for test/integration/mem0-compat.test.ts to check. MEM0_API_KEY, MEM0_HOST and
MEM0_TELEMETRY=false come from the test."""
import asyncio
import json
import os

from mem0 import AsyncMemoryClient, MemoryClient
from mem0.exceptions import MemoryError as Mem0Error

host = os.environ["MEM0_HOST"]
out = {}


def step(name, fn):
    try:
        out[name] = {"ok": fn()}
    except Mem0Error as e:
        out[name] = {"error": type(e).__name__, "message": str(e)}
    except ValueError as e:
        out[name] = {"error": "ValueError", "message": str(e)}


client = MemoryClient(host=host)
out["org_id"] = client.org_id
messages = [
    {"role": "user", "content": "I'm Alex. I am vegetarian and allergic to peanuts."},
    {"role": "assistant", "content": "Noted: vegetarian, and no peanuts."},
]
step("add", lambda: client.add(messages, user_id="alex", agent_id="chef", run_id="dinner-1", metadata={"source_app": "kitchen"}, infer=False))
step("add_text", lambda: client.add("I prefer Italian food", user_id="cy", infer=False, timestamp=1767225600))
step("add_inferred", lambda: client.add([{"role": "user", "content": "I moved to Berlin last week."}], user_id="bea", run_id="chat-7"))
step("get_all", lambda: client.get_all(filters={"AND": [{"user_id": "alex"}, {"run_id": "dinner-1"}]}, page=1, page_size=10))
step("get_all_or", lambda: client.get_all(filters={"OR": [{"agent_id": "chef"}, {"created_at": {"gte": "2000-01-01"}}], "user_id": "alex"}))
step("search", lambda: client.search("peanuts allergy", filters={"user_id": "alex"}, top_k=2))
step("search_meta", lambda: client.search("vegetarian peanuts", filters={"user_id": "alex", "metadata": {"source_app": "kitchen"}}))
first = out["add"]["ok"]["results"][0]["id"]
second = out["add"]["ok"]["results"][1]["id"]
step("get", lambda: client.get(first))
step("update", lambda: client.update(first, text="I'm Alex. I am vegan and allergic to peanuts.", metadata={"checked": True}))
step("history", lambda: client.history(first))
step("batch_update", lambda: client.batch_update([{"memory_id": second, "text": "Noted: vegan, and no peanuts."}]))
step("get_after_batch", lambda: client.get(second))
step("batch_delete", lambda: client.batch_delete([{"memory_id": second}, {"memory_id": "00000000-0000-1000-8000-000000000000"}]))
step("delete", lambda: client.delete(first))
step("get_deleted", lambda: client.get(first))
step("graph", lambda: client.add("x", user_id="alex", enable_graph=True, infer=False))
step("bad_filter", lambda: client.get_all(filters={"colour": "red"}))
step("add_last", lambda: client.add("Alex owns a red bicycle", user_id="alex", infer=False))
step("delete_all", lambda: client.delete_all(user_id="alex"))


async def run_async():
    aclient = AsyncMemoryClient(host=host)
    added = await aclient.add("Sam keeps a sourdough starter called Bubbles", user_id="sam", infer=False)
    found = await aclient.search("sourdough", filters={"user_id": "sam"})
    return {"added": added, "found": found}


out["async"] = asyncio.run(run_async())
print(json.dumps(out))
