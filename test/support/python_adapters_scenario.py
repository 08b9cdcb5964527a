"""The Python client's adapters as the frameworks use them, from the wheel installed with its extras in a fresh
venv, against the real stack (test/integration/python-adapters.test.ts): LangGraph's store inside a compiled
graph and directly (sync and async), the OpenAI Agents SDK's Runner with our Session (its model served by the
test's LLM server at LLM_BASE_URL), and Anthropic's memory tool commands. Prints one JSON line of what it saw."""

import asyncio
import json
import os
import time
import uuid
from typing import TypedDict

from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from anthropic import Anthropic
from anthropic.lib.tools import ToolError
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore
from openai import AsyncOpenAI

from memory_service import MemoryClient
from memory_service.anthropic_memory import AsyncMemoryServiceMemoryTool, MemoryServiceMemoryTool
from memory_service.langgraph import MemoryServiceStore
from memory_service.openai_agents import MemoryServiceSession

run = uuid.uuid4().hex[:8]
client = MemoryClient()


def until_embedded(deadline_s: float = 60) -> None:
    """Waits until every memory of the org has its vector. A search right after a save scores the newest memories by
    meaning only within a short wait (fresh results), which a loaded machine can miss; the ranking checked here is
    the store's search by meaning, not that wait."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        status = client.request("GET", "/api/memories/embeddings")
        if status["embedded"] >= status["total"]:
            return
        time.sleep(0.1)
    raise TimeoutError("the org's memories were not embedded within the deadline")


def langgraph_part() -> dict:
    store = MemoryServiceStore(project_prefix=f"lg{run}.", index_fields=["text"])

    class State(TypedDict):
        user: str
        said: str
        recalled: list

    def remember(state: State, *, store: BaseStore) -> dict:
        store.put(("users", state["user"], "facts"), "diet", {"text": state["said"], "stars": 4})
        store.put(("users", state["user"], "facts"), "pet", {"text": "Alex has a cat named Miso", "stars": 2})
        store.put(("users", "bob", "facts"), "diet", {"text": "Bob eats everything", "stars": 5})
        until_embedded()
        hits = store.search(("users", state["user"]), query="which foods can alex not eat", limit=3)
        return {"recalled": [(hit.key, hit.value["text"], hit.score is not None) for hit in hits]}

    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(store=store)
    state = graph.invoke({"user": "alex", "said": "Alex is vegetarian and allergic to peanuts", "recalled": []})

    facts = ("users", "alex", "facts")
    got = store.get(facts, "diet")
    store.put(facts, "diet", {"text": "Alex is vegan now", "stars": 5})
    replaced = store.get(facts, "diet")
    memory_count = len(list(client.list_memories(namespace=f"lg{run}.users.alex.facts")))
    return {
        "recalled": state["recalled"],
        "get": {"value": got.value, "namespace": list(got.namespace), "key": got.key, "dated": got.created_at.year >= 2026},
        "replaced": replaced.value,
        "memories_after_replace": memory_count,
        "missing": store.get(facts, "nothing") is None,
        "by_filter": sorted("/".join(item.namespace) for item in store.search(("users",), filter={"stars": {"$gte": 4}})),
        "by_equality": [item.key for item in store.search(("users", "alex"), filter={"stars": 2})],
        "namespaces": [list(ns) for ns in store.list_namespaces(prefix=("users",))],
        "depth_one": [list(ns) for ns in store.list_namespaces(max_depth=1)],
        "by_suffix": [list(ns) for ns in store.list_namespaces(suffix=("bob", "*"))],
        "async": asyncio.run(langgraph_async(store, facts)),
    }


async def langgraph_async(store: MemoryServiceStore, facts: tuple) -> dict:
    await store.aput(facts, "city", {"text": "Alex lives in Lisbon"})
    found = await store.asearch(facts, query="where does alex live", limit=1)
    await store.adelete(facts, "city")
    return {"found": found[0].key if found else None, "deleted": await store.aget(facts, "city") is None}


async def agents_part() -> dict:
    set_tracing_disabled(True)
    model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=AsyncOpenAI(base_url=os.environ["LLM_BASE_URL"], api_key="test-key"))
    agent = Agent(name="Assistant", instructions="Answer briefly.", model=model)
    session = MemoryServiceSession(f"agents-{run}", user_id="alex")
    first = await Runner.run(agent, "My name is Alex and I like green tea.", session=session)
    second = await Runner.run(agent, "What do I like to drink?", session=session)
    items = await session.get_items()
    last_two = await session.get_items(limit=2)
    thread = client.get_thread(f"agents-{run}")
    found = client.search("green tea", mode="hybrid", run_id=f"agents-{run}", user_id="alex").hits
    popped = await session.pop_item()
    after_pop = len(await session.get_items())
    await session.clear_session()
    return {
        "answers": [first.final_output, second.final_output],
        "roles": [item.get("role") for item in items],
        "first_item": items[0],
        "last_two": [item.get("role") for item in last_two],
        "thread_users": sorted({chunk.metadata.get("role") for chunk in thread.chunks}),
        "searchable": [hit.content for hit in found],
        "popped_role": popped.get("role") if popped else None,
        "after_pop": after_pop,
        "after_clear": len(await session.get_items()),
    }


def anthropic_part() -> dict:
    tool = MemoryServiceMemoryTool(namespace=f"claude-{run}", user_id="alex")
    out: dict = {"definition": tool.to_dict()}

    def call(name: str, **fields) -> str:
        try:
            return tool.call({"command": name, **fields})
        except ToolError as err:
            return f"ToolError: {err.content if hasattr(err, 'content') else err}"

    out["empty_root"] = call("view", path="/memories")
    out["create"] = call("create", path="/memories/notes/diet.md", file_text="Alex is vegetarian.\nNo peanuts.\n")
    out["again"] = call("create", path="/memories/notes/diet.md", file_text="twice")
    out["replace"] = call("str_replace", path="/memories/notes/diet.md", old_str="vegetarian", new_str="vegan")
    out["insert"] = call("insert", path="/memories/notes/diet.md", insert_line=0, insert_text="# Diet")
    out["view_file"] = call("view", path="/memories/notes/diet.md")
    out["view_range"] = call("view", path="/memories/notes/diet.md", view_range=[2, 2])
    out["rename"] = call("rename", old_path="/memories/notes", new_path="/memories/people")
    out["view_root"] = call("view", path="/memories")
    out["escape"] = call("view", path="/memories/../etc/passwd")
    out["missing"] = call("str_replace", path="/memories/nothing.md", old_str="a", new_str="b")
    out["searchable"] = [hit.metadata.get("memory_file") for hit in client.search("vegan", namespace=f"claude-{run}").hits]
    async_tool = AsyncMemoryServiceMemoryTool(namespace=f"claude-{run}", user_id="alex")
    out["async_view"] = asyncio.run(async_tool.call({"command": "view", "path": "/memories/people/diet.md"}))
    out["other_user"] = MemoryServiceMemoryTool(namespace=f"claude-{run}", user_id="bob").call({"command": "view", "path": "/memories"})
    out["runner"] = tool_runner_part()
    out["delete"] = call("delete", path="/memories/people")
    out["after_delete"] = call("view", path="/memories/people/diet.md")
    return out


def tool_runner_part() -> str:
    """Anthropic's own tool runner drives the tool: the test's LLM server, speaking Anthropic's protocol, plays a
    model that writes a file and then reads the directory back before answering."""
    tool = MemoryServiceMemoryTool(namespace=f"claude-{run}", user_id="alex")
    anthropic = Anthropic(base_url=os.environ["ANTHROPIC_BASE_URL"], api_key="test-key")
    # thread=False: the whole conversation in every request (the test's server keeps no server-side threads).
    messages = [{"role": "user", "content": "Remember that I prefer window seats."}]
    runner = anthropic.beta.messages.tool_runner(model="claude-test", max_tokens=500, tools=[tool], messages=messages, thread=False)
    final = runner.until_done()
    return "".join(block.text for block in final.content if block.type == "text")


def main() -> None:
    result = {"langgraph": langgraph_part(), "agents": asyncio.run(agents_part()), "anthropic": anthropic_part()}
    print(json.dumps(result, default=str))


main()
