"""Adapters written once for both clients: an adapter's operation is a generator that yields the calls it needs
and receives each answer (or has the call's MemoryServiceError raised where it yielded, to catch or let go);
`run_sync` and `run_async` drive it with the sync or the async client."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, TypeVar

from ._calls import Call
from .client import AsyncMemoryClient, MemoryClient
from .errors import MemoryServiceError

T = TypeVar("T")
Steps = Generator[Call[Any], Any, T]


def run_sync(client: MemoryClient, steps: Steps[T]) -> T:
    try:
        call = next(steps)
        while True:
            try:
                answer = client._run(call)
            except MemoryServiceError as err:
                call = steps.throw(err)
                continue
            call = steps.send(answer)
    except StopIteration as done:
        return done.value


async def run_async(client: AsyncMemoryClient, steps: Steps[T]) -> T:
    try:
        call = next(steps)
        while True:
            try:
                answer = await client._run(call)
            except MemoryServiceError as err:
                call = steps.throw(err)
                continue
            call = steps.send(answer)
    except StopIteration as done:
        return done.value
