"""The sync and async clients: the same methods, each one call described in _calls.py."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import httpx

from . import _calls, models
from .errors import MemoryServiceConnectionError, error_from_response

T = TypeVar("T")
Id = str | uuid.UUID


class _Options:
    def __init__(self, base_url: str | None, token: str | None, max_retries: int, max_retry_wait: float, timeout: float):
        self.base_url, self.headers = _calls.settings(base_url, token)
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.timeout = timeout

    def request(self, call: _calls.Call[Any]) -> dict[str, Any]:
        """httpx's build_request arguments for `call`."""
        url = self.base_url + call.path
        headers = {**self.headers, **call.headers}
        return {"method": call.method, "url": url, "json": call.json, "params": call.params, "headers": headers, "timeout": self.timeout}


class MemoryClient:
    """A client of the memory service.

    `base_url` and `token` default to MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN (no token: local mode).
    A call answered 429 waits its Retry-After and goes again (up to `max_retries` times, if the wait is at most
    `max_retry_wait` seconds); a 5xx or a network failure is retried only when the call cannot take effect twice
    (reads, PUT, DELETE, and creates, which each carry an Idempotency-Key). Every error answer raises a
    MemoryServiceError subclass; a service that cannot be reached raises MemoryServiceConnectionError."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        timeout: float = 30.0,
        http_client: httpx.Client | None = None,
    ):
        self._options = _Options(base_url, token, max_retries, max_retry_wait, timeout)
        self._http = http_client or httpx.Client()
        self._owns_http = http_client is None

    def close(self) -> None:
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, call: _calls.Call[T]) -> T:
        options = self._options
        request = self._http.build_request(**options.request(call))
        for attempt in range(options.max_retries + 1):
            try:
                response = self._http.send(request)
            except httpx.TransportError as err:
                wait = _calls.retry_wait(call, attempt, options.max_retries, options.max_retry_wait, None)
                if wait is None:
                    raise MemoryServiceConnectionError(err) from err
                time.sleep(wait)
                continue
            if response.is_success:
                return call.read(response)
            wait = _calls.retry_wait(call, attempt, options.max_retries, options.max_retry_wait, response)
            if wait is None:
                raise error_from_response(response, _calls.retry_after_seconds(response))
            time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def request(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> Any:
        """Any route of the API (`client.request("GET", "/api/projects")`): its JSON answer, or a typed error.
        Read it into a model of `memory_service.models` for types: `models.ApiProjectsGetResponse.model_validate(...)`."""
        return self._run(_calls.raw(method, path, json, params, headers))

    def add_memory(self, content: str, *, idempotency_key: str | None = None, **fields: Any) -> models.Memory:
        """Saves a memory (fields as POST /api/memories takes them: namespace, tags, metadata, user_id, ...)."""
        return self._run(_calls.add_memory(content, idempotency_key, fields))

    def add_memories(self, memories: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None) -> models.BatchCreateResult:
        """Saves up to 500 memories in one call; items that fail are in `failed`, with their index."""
        return self._run(_calls.add_memories(memories, idempotency_key))

    def get_memory(self, memory_id: Id) -> models.Memory:
        return self._run(_calls.get_memory(memory_id))

    def update_memory(self, memory_id: Id, **patch: Any) -> models.Memory:
        return self._run(_calls.update_memory(memory_id, patch))

    def delete_memory(self, memory_id: Id) -> None:
        self._run(_calls.delete_memory(memory_id))

    def search(self, query: str, **options: Any) -> models.ApiMemoriesSearchPostResponse:
        """Searches (mode lexical, semantic or hybrid; k; min_relevance; every filter): the answer's `hits`."""
        return self._run(_calls.search(query, options))

    def search_bulk(self, queries: Sequence[str | Mapping[str, Any]], **shared: Any) -> models.ApiMemoriesSearchBulkPostResponse:
        return self._run(_calls.search_bulk(queries, shared))

    def similar(self, memory_id: Id, **options: Any) -> list[models.ScoredMemory]:
        """The memories nearest in meaning to one, best first (it is left out)."""
        return self._run(_calls.similar(memory_id, options)).hits

    def list_memories(self, *, page_size: int = 100, **filters: Any) -> Iterator[models.Memory]:
        """Every memory the filters pass, fetched `page_size` at a time as the iteration goes."""
        offset: int | None = 0
        while offset is not None:
            page = self._run(_calls.list_page(filters, offset, page_size))
            yield from page.memories
            offset = _calls.next_offset(page, len(page.memories))

    def list_events(self, *, page_size: int = 100, **filters: Any) -> Iterator[models.AuditEvent]:
        """The org's audit events, newest first, the filters of GET /api/events (action, actor, target, since, until)."""
        offset: int | None = 0
        while offset is not None:
            page = self._run(_calls.events_page(filters, offset, page_size))
            yield from page.events
            offset = _calls.next_offset(page, len(page.events))

    def save_conversation(
        self, messages: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None, **fields: Any
    ) -> models.CapturedConversation:
        """Saves a conversation's messages ({role, content}) as one thread; `infer=True` also extracts facts."""
        return self._run(_calls.save_conversation(messages, idempotency_key, fields))

    def get_thread(self, ref: str) -> models.ApiThreadsRefGetResponse:
        return self._run(_calls.get_thread(ref))


class AsyncMemoryClient:
    """The async twin of MemoryClient: the same methods, awaited, and `list_memories` an async iterator."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        max_retries: int = 3,
        max_retry_wait: float = 60.0,
        timeout: float = 30.0,
        http_client: httpx.AsyncClient | None = None,
    ):
        self._options = _Options(base_url, token, max_retries, max_retry_wait, timeout)
        self._http = http_client or httpx.AsyncClient()
        self._owns_http = http_client is None

    async def aclose(self) -> None:
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncMemoryClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _run(self, call: _calls.Call[T]) -> T:
        options = self._options
        request = self._http.build_request(**options.request(call))
        for attempt in range(options.max_retries + 1):
            try:
                response = await self._http.send(request)
            except httpx.TransportError as err:
                wait = _calls.retry_wait(call, attempt, options.max_retries, options.max_retry_wait, None)
                if wait is None:
                    raise MemoryServiceConnectionError(err) from err
                await asyncio.sleep(wait)
                continue
            if response.is_success:
                return call.read(response)
            wait = _calls.retry_wait(call, attempt, options.max_retries, options.max_retry_wait, response)
            if wait is None:
                raise error_from_response(response, _calls.retry_after_seconds(response))
            await asyncio.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    async def request(
        self, method: str, path: str, *, json: Any = None, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None
    ) -> Any:
        return await self._run(_calls.raw(method, path, json, params, headers))

    async def add_memory(self, content: str, *, idempotency_key: str | None = None, **fields: Any) -> models.Memory:
        return await self._run(_calls.add_memory(content, idempotency_key, fields))

    async def add_memories(self, memories: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None) -> models.BatchCreateResult:
        return await self._run(_calls.add_memories(memories, idempotency_key))

    async def get_memory(self, memory_id: Id) -> models.Memory:
        return await self._run(_calls.get_memory(memory_id))

    async def update_memory(self, memory_id: Id, **patch: Any) -> models.Memory:
        return await self._run(_calls.update_memory(memory_id, patch))

    async def delete_memory(self, memory_id: Id) -> None:
        await self._run(_calls.delete_memory(memory_id))

    async def search(self, query: str, **options: Any) -> models.ApiMemoriesSearchPostResponse:
        return await self._run(_calls.search(query, options))

    async def search_bulk(self, queries: Sequence[str | Mapping[str, Any]], **shared: Any) -> models.ApiMemoriesSearchBulkPostResponse:
        return await self._run(_calls.search_bulk(queries, shared))

    async def similar(self, memory_id: Id, **options: Any) -> list[models.ScoredMemory]:
        return (await self._run(_calls.similar(memory_id, options))).hits

    async def list_memories(self, *, page_size: int = 100, **filters: Any) -> AsyncIterator[models.Memory]:
        offset: int | None = 0
        while offset is not None:
            page = await self._run(_calls.list_page(filters, offset, page_size))
            for memory in page.memories:
                yield memory
            offset = _calls.next_offset(page, len(page.memories))

    async def list_events(self, *, page_size: int = 100, **filters: Any) -> AsyncIterator[models.AuditEvent]:
        offset: int | None = 0
        while offset is not None:
            page = await self._run(_calls.events_page(filters, offset, page_size))
            for event in page.events:
                yield event
            offset = _calls.next_offset(page, len(page.events))

    async def save_conversation(
        self, messages: Sequence[Mapping[str, Any]], *, idempotency_key: str | None = None, **fields: Any
    ) -> models.CapturedConversation:
        return await self._run(_calls.save_conversation(messages, idempotency_key, fields))

    async def get_thread(self, ref: str) -> models.ApiThreadsRefGetResponse:
        return await self._run(_calls.get_thread(ref))
