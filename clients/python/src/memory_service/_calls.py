"""What each call sends and how its answer is read, shared by the sync and the async client, and the retry
policy they both follow."""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from . import models

T = TypeVar("T")

DEFAULT_BASE_URL = "http://127.0.0.1:3000"
# The contract's read-only POSTs: repeating them after a 5xx or a lost connection cannot do anything twice.
READ_ONLY_POSTS = frozenset({"/api/memories/list", "/api/memories/search", "/api/memories/search/bulk"})
BACKOFF_SECONDS = 0.25


@dataclass
class Call(Generic[T]):
    """One request and the model its answer is read into (None: the raw JSON, or nothing)."""

    method: str
    path: str
    model: type[BaseModel] | None = None
    json: Any = None
    params: Mapping[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def read(self, response: httpx.Response) -> T:
        if response.status_code == 204 or not response.content:
            return None  # type: ignore[return-value]
        if self.model is None:
            return response.json()
        return self.model.model_validate_json(response.content)  # type: ignore[return-value]

    @property
    def retry_safe(self) -> bool:
        """Whether a 5xx or a lost connection may be retried: the call cannot take effect twice."""
        return (
            self.method in ("GET", "HEAD", "PUT", "DELETE")
            or "idempotency-key" in {name.lower() for name in self.headers}
            or (self.method == "POST" and self.path in READ_ONLY_POSTS)
        )


def settings(base_url: str | None, token: str | None) -> tuple[str, dict[str, str]]:
    """The base URL and headers, from the arguments, else MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN."""
    base = (base_url or os.environ.get("MEMORY_SERVICE_URL") or DEFAULT_BASE_URL).rstrip("/")
    token = token or os.environ.get("MEMORY_SERVICE_TOKEN")
    headers = {"user-agent": "memory-service-python"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    return base, headers


def retry_after_seconds(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def retry_wait(call: Call[Any], attempt: int, max_retries: int, max_wait: float, response: httpx.Response | None) -> float | None:
    """Seconds to wait before trying `call` again, or None to stop. `response` is None after a network failure.

    A 429 did nothing (the contract), so any call waits its Retry-After and goes again, unless that wait is over
    `max_wait`; a 5xx or a lost connection may have done the work, so only a retry-safe call repeats then."""
    if attempt >= max_retries:
        return None
    if response is not None and response.status_code == 429:
        wait = retry_after_seconds(response)
        wait = 1.0 if wait is None else wait
        return wait if wait <= max_wait else None
    if (response is None or response.status_code >= 500) and call.retry_safe:
        return BACKOFF_SECONDS * 2**attempt
    return None


def _body(fields: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON body from keyword arguments: None means "not given"; models are sent as the service names them."""
    return {
        key: value.model_dump(mode="json", exclude_none=True) if isinstance(value, BaseModel) else value
        for key, value in fields.items()
        if value is not None
    }


def _key(idempotency_key: str | None) -> dict[str, str]:
    return {"idempotency-key": idempotency_key or str(uuid.uuid4())}


def _id(value: str | uuid.UUID) -> str:
    return quote(str(value), safe="")


def add_memory(content: str, idempotency_key: str | None, fields: Mapping[str, Any]) -> Call[models.Memory]:
    body = _body({"content": content, **fields})
    return Call("POST", "/api/memories", models.Memory, body, headers=_key(idempotency_key))


def add_memories(memories: Sequence[Mapping[str, Any]], idempotency_key: str | None) -> Call[models.BatchCreateResult]:
    body = {"memories": [_body(memory) for memory in memories]}
    return Call("POST", "/api/memories/batch", models.BatchCreateResult, body, headers=_key(idempotency_key))


def get_memory(memory_id: str | uuid.UUID) -> Call[models.Memory]:
    return Call("GET", f"/api/memories/{_id(memory_id)}", models.Memory)


def update_memory(memory_id: str | uuid.UUID, patch: Mapping[str, Any]) -> Call[models.Memory]:
    return Call("PATCH", f"/api/memories/{_id(memory_id)}", models.Memory, _body(patch))


def delete_memory(memory_id: str | uuid.UUID) -> Call[None]:
    return Call("DELETE", f"/api/memories/{_id(memory_id)}")


def search(query: str, options: Mapping[str, Any]) -> Call[models.ApiMemoriesSearchPostResponse]:
    return Call("POST", "/api/memories/search", models.ApiMemoriesSearchPostResponse, _body({"query": query, **options}))


def search_bulk(queries: Sequence[str | Mapping[str, Any]], shared: Mapping[str, Any]) -> Call[models.ApiMemoriesSearchBulkPostResponse]:
    body = _body({"queries": [query if isinstance(query, str) else _body(query) for query in queries], **shared})
    return Call("POST", "/api/memories/search/bulk", models.ApiMemoriesSearchBulkPostResponse, body)


def similar(memory_id: str | uuid.UUID, options: Mapping[str, Any]) -> Call[models.ApiMemoriesIdSimilarGetResponse]:
    path = f"/api/memories/{_id(memory_id)}/similar"
    return Call("GET", path, models.ApiMemoriesIdSimilarGetResponse, params=_body(options))


def list_page(filters: Mapping[str, Any], offset: int, page_size: int) -> Call[models.ApiMemoriesListPostResponse]:
    body = _body({**filters, "offset": offset, "limit": page_size})
    return Call("POST", "/api/memories/list", models.ApiMemoriesListPostResponse, body)


def events_page(filters: Mapping[str, Any], offset: int, page_size: int) -> Call[models.ApiEventsGetResponse]:
    return Call("GET", "/api/events", models.ApiEventsGetResponse, params=_body({**filters, "offset": offset, "limit": page_size}))


def next_offset(page: models.ApiMemoriesListPostResponse | models.ApiEventsGetResponse, count: int) -> int | None:
    """Where the page after `page` (which held `count` items) starts, or None when it was the last."""
    return None if count == 0 or count < page.limit else page.offset + count


def save_conversation(
    messages: Sequence[Mapping[str, Any]], idempotency_key: str | None, fields: Mapping[str, Any]
) -> Call[models.CapturedConversation]:
    body = _body({"messages": [_body(message) for message in messages], **fields})
    return Call("POST", "/api/conversations", models.CapturedConversation, body, headers=_key(idempotency_key))


def get_thread(ref: str) -> Call[models.ApiThreadsRefGetResponse]:
    return Call("GET", f"/api/threads/{_id(ref)}", models.ApiThreadsRefGetResponse)


def raw(method: str, path: str, json: Any, params: Mapping[str, Any] | None, headers: Mapping[str, str] | None) -> Call[Any]:
    return Call(method.upper(), path, None, json, params, dict(headers or {}))
