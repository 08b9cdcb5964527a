"""LangGraph's long-term store (`BaseStore`) over the memory service: `pip install "memory-service-client[langgraph]"`.

How LangGraph's shapes map onto ours (docs in clients/python/README.md, "LangGraph"):
- a namespace tuple is a project: ("users", "alex") is the project `users.alex` (after `project_prefix`), and each
  memory also carries one tag per level (`lg:users`, `lg:users.alex`), so a search by namespace prefix is one tag filter;
- an item is one memory: its value in `metadata.langgraph.value`, its key in `metadata.langgraph.key`, and its
  content the text of the indexed fields (the whole value as JSON unless `index_fields` or `put(index=...)` say);
- search with a query ranks by the service's hybrid search (words and meaning) and gives `relevance` as the score;
  search without one lists the newest first. Equality filters run in the service (JSON containment); `$ne`,
  `$gt`, `$gte`, `$lt`, `$lte` are applied here, over the 50 best hits of a query or page after page of a list.
TTLs are not supported (`supports_ttl` is False)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    get_text_at_path,
)

from . import _calls, models
from ._steps import Steps, run_async, run_sync
from .client import AsyncMemoryClient, MemoryClient
from .errors import NotFoundError

TAG = "lg:"
KEY = "langgraph"
QUERY_DEPTH = 50  # the service's largest k: how deep a query's hits are read for filters applied here
PAGE = 200
OPERATORS = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: a is not None and a > b,
    "$gte": lambda a, b: a is not None and a >= b,
    "$lt": lambda a, b: a is not None and a < b,
    "$lte": lambda a, b: a is not None and a <= b,
}


class MemoryServiceStore(BaseStore):
    """A LangGraph store whose items are memories of the service (sync and async).

    `base_url` and `token` default to MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN. `project_prefix` keeps this
    store's projects apart from others of the org (e.g. "lg." or "app1."). `index_fields` are the value's fields
    whose text is searched (LangGraph's paths, e.g. ["text", "facts[*]"]); default: the whole value as JSON."""

    supports_ttl = False

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        project_prefix: str = "",
        index_fields: Sequence[str] | None = None,
        client: MemoryClient | None = None,
        async_client: AsyncMemoryClient | None = None,
    ):
        self._client = client or MemoryClient(base_url, token)
        self._async_client = async_client or AsyncMemoryClient(base_url, token)
        self._prefix = project_prefix
        self._index_fields = list(index_fields) if index_fields else None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return [run_sync(self._client, self._op(op)) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return [await run_async(self._async_client, self._op(op)) for op in ops]

    def _op(self, op: Op) -> Steps[Result]:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation: {op!r}")

    def _project(self, namespace: tuple[str, ...]) -> str:
        return self._prefix + ".".join(namespace)

    def _tags(self, namespace: tuple[str, ...]) -> list[str]:
        """The store's own tag, then one per namespace level: what a search by namespace prefix filters on."""
        return [f"{TAG}{self._prefix}"] + [f"{TAG}{self._prefix}{'.'.join(namespace[: depth + 1])}" for depth in range(len(namespace))]

    def _find(self, namespace: tuple[str, ...], key: str) -> Steps[models.Memory | None]:
        """The item's memory: the newest, should two puts of one key have raced."""
        call = _calls.list_page({"namespace": self._project(namespace), "metadata_filter": {KEY: {"key": key}}}, 0, 1)
        try:
            page = yield call
        except NotFoundError:
            return None
        return page.memories[0] if page.memories else None

    def _get(self, op: GetOp) -> Steps[Item | None]:
        memory = yield from self._find(op.namespace, op.key)
        return Item(**_fields(memory)) if memory else None

    def _put(self, op: PutOp) -> Steps[None]:
        memory = yield from self._find(op.namespace, op.key)
        if op.value is None:
            if memory:
                try:
                    yield _calls.delete_memory(memory.id)
                except NotFoundError:
                    pass  # deleted meanwhile: what was asked
            return None
        stored = {KEY: {"key": op.key, "namespace": list(op.namespace), "value": op.value}}
        content = self._content(op.value, op.index)
        if memory:
            yield _calls.update_memory(memory.id, {"content": content, "metadata": stored})
        else:
            fields = {"namespace": self._project(op.namespace), "tags": self._tags(op.namespace), "metadata": stored, "source": "langgraph"}
            yield _calls.add_memory(content, None, fields)
        return None

    def _content(self, value: dict[str, Any], index: Any) -> str:
        fields = index if isinstance(index, list) else self._index_fields
        if not fields:
            return json.dumps(value, ensure_ascii=False, sort_keys=True)
        text = "\n".join(part for field in fields for part in get_text_at_path(value, field) if part)
        return text or json.dumps(value, ensure_ascii=False, sort_keys=True)

    def _search(self, op: SearchOp) -> Steps[list[SearchItem]]:
        equal, compared = _split_filter(op.filter or {})
        scope: dict[str, Any] = {"tags": [self._tags(op.namespace_prefix)[-1]]}
        if equal:
            scope["metadata_filter"] = {KEY: {"value": equal}}
        wanted = op.offset + op.limit
        if op.query:
            # Filters applied here read the deepest list the service gives; without them, just what is asked for.
            k = QUERY_DEPTH if compared else min(QUERY_DEPTH, wanted)
            answer = yield _calls.search(op.query, {**scope, "mode": "hybrid", "k": k})
            found = [(hit, hit.relevance) for hit in answer.hits if _passes(hit, compared)]
            return [SearchItem(**_fields(hit), score=score) for hit, score in found[op.offset : wanted]]
        kept: list[models.Memory] = []
        offset: int | None = 0
        while offset is not None and len(kept) < wanted:
            page = yield _calls.list_page(scope, offset, PAGE if compared else min(PAGE, wanted))
            kept += [memory for memory in page.memories if _passes(memory, compared)]
            offset = _calls.next_offset(page, len(page.memories))
        return [SearchItem(**_fields(memory)) for memory in kept[op.offset : wanted]]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps[list[tuple[str, ...]]]:
        answer = yield _calls.raw("GET", "/api/projects", None, None, None)
        namespaces = {
            tuple(project["name"][len(self._prefix) :].split("."))
            for project in answer["projects"]
            if project["name"].startswith(self._prefix) and project.get("memory_count", 0) > 0
        }
        matching = sorted(ns for ns in namespaces if all(_matches(condition, ns) for condition in op.match_conditions or ()))
        if op.max_depth is not None:
            matching = sorted({ns[: op.max_depth] for ns in matching})
        return matching[op.offset : op.offset + op.limit]


def _fields(memory: models.Memory | models.ScoredMemory) -> dict[str, Any]:
    stored = memory.metadata[KEY]
    times = {"created_at": _time(memory.created_at), "updated_at": _time(memory.updated_at)}
    return {"namespace": tuple(stored["namespace"]), "key": stored["key"], "value": stored["value"], **times}


def _time(epoch_ms: int) -> datetime:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=timezone.utc)


def _split_filter(filter: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Equalities (sent to the service as JSON containment) apart from comparisons (applied here)."""
    equal: dict[str, Any] = {}
    compared: dict[str, dict[str, Any]] = {}
    for field, condition in filter.items():
        if isinstance(condition, dict) and any(op.startswith("$") for op in condition):
            unknown = set(condition) - set(OPERATORS)
            if unknown:
                raise ValueError(f"unsupported filter operator(s) {sorted(unknown)}: use {sorted(OPERATORS)}")
            compared[field] = condition
        else:
            equal[field] = condition
    return equal, compared


def _passes(memory: models.Memory | models.ScoredMemory, compared: Mapping[str, Mapping[str, Any]]) -> bool:
    value = memory.metadata[KEY]["value"]
    try:
        return all(OPERATORS[op](value.get(field), operand) for field, condition in compared.items() for op, operand in condition.items())
    except TypeError:
        return False  # a value of another type than the operand's does not match, as in LangGraph's own stores


def _matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    part = namespace[: len(path)] if condition.match_type == "prefix" else namespace[len(namespace) - len(path) :]
    return all(want in ("*", got) for want, got in zip(path, part))
