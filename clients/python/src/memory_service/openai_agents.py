"""The OpenAI Agents SDK's `Session` over a thread of the memory service: `pip install "memory-service-client[openai-agents]"`.

Each item of the session is one memory of the thread `session_id` (metadata.parent_ref, in metadata.chunk_index
order, with run_id = session_id), so the conversation is also searchable, by words and meaning, beside the org's
other memories. A message's text is the memory's content (redacted like any content); the rest of the item is
kept in metadata.agents_item, so get_items gives back what add_items was given."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agents.memory import SessionSettings

from . import _calls, models
from ._steps import Steps, run_async
from .client import AsyncMemoryClient
from .errors import NotFoundError

KEY = "agents_item"
TEXT_AT = "agents_text_at"
TEXT_PARTS = ("input_text", "output_text")
BATCH = 500  # the service's batch create limit


class MemoryServiceSession:
    """A Session (agents.memory.Session) whose history lives in the memory service.

    `base_url` and `token` default to MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN; `namespace`, `user_id` and
    `agent_id` are set on every item saved, so the history lands in that project and those scopes."""

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        base_url: str | None = None,
        token: str | None = None,
        *,
        namespace: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        client: AsyncMemoryClient | None = None,
    ):
        self.session_id = session_id
        self._client = client or AsyncMemoryClient(base_url, token)
        self._fields = {"namespace": namespace, "user_id": user_id, "agent_id": agent_id, "run_id": session_id}

    async def get_items(self, limit: int | None = None) -> list[Any]:
        chunks = await run_async(self._client, self._chunks())
        if limit is not None:
            chunks = chunks[-limit:] if limit > 0 else []
        return [_item(chunk) for chunk in chunks]

    async def add_items(self, items: list[Any]) -> None:
        await run_async(self._client, self._add(items))

    async def pop_item(self) -> Any | None:
        return await run_async(self._client, self._pop())

    async def clear_session(self) -> None:
        await run_async(self._client, self._clear())

    def _chunks(self) -> Steps[list[Any]]:
        try:
            thread = yield _calls.get_thread(self.session_id)
        except NotFoundError:
            return []
        chunks = [chunk for chunk in thread.chunks if KEY in chunk.metadata]
        return sorted(chunks, key=lambda chunk: chunk.metadata.get("chunk_index", 0))

    def _add(self, items: list[Any]) -> Steps[None]:
        chunks = yield from self._chunks()
        start = chunks[-1].metadata.get("chunk_index", len(chunks) - 1) + 1 if chunks else 0
        memories = [self._memory(item, start + index) for index, item in enumerate(items)]
        for first in range(0, len(memories), BATCH):
            result: models.BatchCreateResult = yield _calls.add_memories(memories[first : first + BATCH], None)
            if result.failed:
                failure = result.failed[0]
                raise ValueError(f"session item {first + failure.index} was not saved: {failure.error}: {failure.message}")
        return None

    def _memory(self, item: Any, chunk_index: int) -> dict[str, Any]:
        text, rest, place = _split(dict(item))
        metadata = {"parent_ref": self.session_id, "chunk_index": chunk_index, KEY: rest, TEXT_AT: place}
        if isinstance(item.get("role"), str):
            metadata["role"] = item["role"]
        return {"content": text, "metadata": metadata, "source": "openai-agents", **self._fields}

    def _pop(self) -> Steps[Any | None]:
        chunks = yield from self._chunks()
        if not chunks:
            return None
        try:
            yield _calls.delete_memory(chunks[-1].id)
        except NotFoundError:
            return None  # popped by another caller meanwhile
        return _item(chunks[-1])

    def _clear(self) -> Steps[None]:
        for chunk in (yield from self._chunks()):
            try:
                yield _calls.delete_memory(chunk.id)
            except NotFoundError:
                pass  # gone already: what was asked
        return None


def _split(item: dict[str, Any]) -> tuple[str, dict[str, Any], str | None]:
    """The item's text (the memory's content), the rest of it (kept in metadata), and where _item puts the text
    back: "content" (a message's string content) or "part" (its one text part); None when the whole item is kept."""
    content = item.get("content")
    if isinstance(content, str) and content:
        return content, {**item, "content": ""}, "content"
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], Mapping) and content[0].get("type") in TEXT_PARTS:
        text = content[0].get("text")
        if isinstance(text, str) and text:
            return text, {**item, "content": [{**content[0], "text": ""}]}, "part"
    return json.dumps(item, ensure_ascii=False, sort_keys=True), item, None


def _item(chunk: Any) -> Any:
    item = dict(chunk.metadata[KEY])
    place = chunk.metadata.get(TEXT_AT)
    if place == "content":
        item["content"] = chunk.content
    elif place == "part":
        item["content"] = [{**item["content"][0], "text": chunk.content}]
    return item
