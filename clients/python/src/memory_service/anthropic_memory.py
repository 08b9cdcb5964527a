"""A backend for Anthropic's client-side memory tool (`memory_20250818`) over the memory service:
`pip install "memory-service-client[anthropic]"`.

Each file under /memories is one memory of the project `namespace` (default `claude-memories`): its path in
metadata.memory_file, its text the memory's content (so it is searchable, by words and meaning, and redacted like
any content). Directories are the paths' prefixes: a directory exists while a file is under it. An empty file is
saved with its path as content and metadata.memory_file_empty (a memory's content cannot be empty).
`user_id` / `agent_id` scope the files: each user (or agent) then has a /memories of its own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from anthropic.lib.tools import BetaAbstractMemoryTool, BetaAsyncAbstractMemoryTool, ToolError
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from . import _calls, models
from ._steps import Steps, run_async, run_sync
from .client import AsyncMemoryClient, MemoryClient

ROOT = "/memories"
PATH_KEY = "memory_file"
EMPTY_KEY = "memory_file_empty"
PAGE = 500
NUMBER_WIDTH = 6


class _Files:
    """The commands, each a generator of service calls (memory_service._steps), shared by both tools."""

    def __init__(self, namespace: str, user_id: str | None, agent_id: str | None):
        self.scope = {key: value for key, value in {"namespace": namespace, "user_id": user_id, "agent_id": agent_id}.items() if value}

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> Steps[str]:
        path = _checked(command.path)
        file = yield from self._file(path)
        if file is None:
            files = yield from self._under(path)
            if not files and path != ROOT:
                raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
            return _listing(path, files)
        lines = _text(file).split("\n")
        start = 1
        if command.view_range and len(command.view_range) == 2:
            first, last = command.view_range
            start = max(1, first)
            lines = lines[start - 1 : None if last == -1 else last]
        numbered = "\n".join(f"{str(start + i).rjust(NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines))
        return f"Here's the content of {path} with line numbers:\n{numbered}"

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> Steps[str]:
        path = _checked(command.path)
        if path == ROOT or (yield from self._file(path)) is not None or (yield from self._under(path)):
            raise ToolError(f"File {path} already exists")
        yield self._save(path, command.file_text)
        return f"File created successfully at: {path}"

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> Steps[str]:
        path = _checked(command.path)
        file = yield from self._existing_file(path)
        text = _text(file)
        count = text.count(command.old_str)
        if count == 0:
            raise ToolError(f"No replacement was performed, old_str `{command.old_str}` did not appear verbatim in {path}.")
        if count > 1:
            lines = [text[:at].count("\n") + 1 for at in _occurrences(text, command.old_str)]
            raise ToolError(
                f"No replacement was performed. Multiple occurrences of old_str `{command.old_str}` in lines: "
                f"{', '.join(map(str, lines))}. Please ensure it is unique"
            )
        changed = text[: text.find(command.old_str)].count("\n")
        new_text = text.replace(command.old_str, command.new_str)
        yield self._rewrite(file, new_text)
        lines = new_text.split("\n")
        around = range(max(0, changed - 2), min(len(lines), changed + 3))
        snippet = "\n".join(f"{str(n + 1).rjust(NUMBER_WIDTH)}\t{lines[n]}" for n in around)
        return f"The memory file has been edited. Here is the snippet showing the change (with line numbers):\n{snippet}"

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> Steps[str]:
        path = _checked(command.path)
        file = yield from self._existing_file(path)
        text = _text(file)
        lines = text.removesuffix("\n").split("\n") if text else []
        if not 0 <= command.insert_line <= len(lines):
            raise ToolError(f"Invalid `insert_line` parameter: {command.insert_line}. It should be within the range [0, {len(lines)}].")
        lines.insert(command.insert_line, command.insert_text.rstrip("\n"))
        yield self._rewrite(file, "\n".join(lines) + "\n")
        return f"The file {path} has been edited."

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> Steps[str]:
        path = _checked(command.path)
        if path == ROOT:
            raise ToolError("Cannot delete the /memories directory itself")
        file = yield from self._file(path)
        files = [file] if file else (yield from self._under(path))
        if not files:
            raise ToolError(f"The path {path} does not exist")
        for each in files:
            yield _calls.delete_memory(each.id)
        return f"Successfully deleted {path}"

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> Steps[str]:
        old, new = _checked(command.old_path), _checked(command.new_path)
        if old == ROOT:
            raise ToolError("Cannot rename the /memories directory itself")
        if new == ROOT or (yield from self._file(new)) is not None or (yield from self._under(new)):
            raise ToolError(f"The destination {new} already exists")
        file = yield from self._file(old)
        files = [file] if file else (yield from self._under(old))
        if not files:
            raise ToolError(f"The path {old} does not exist")
        for each in files:
            yield _calls.update_memory(each.id, {"metadata": {PATH_KEY: new + each.metadata[PATH_KEY][len(old) :]}})
        return f"Successfully renamed {old} to {new}"

    def clear_all_memory(self) -> Steps[str]:
        for each in (yield from self._under(ROOT)):
            yield _calls.delete_memory(each.id)
        return "All memory cleared"

    def _file(self, path: str) -> Steps[models.Memory | None]:
        page = yield _calls.list_page({**self.scope, "metadata_filter": {PATH_KEY: path}}, 0, 1)
        return page.memories[0] if page.memories else None

    def _existing_file(self, path: str) -> Steps[models.Memory]:
        file = yield from self._file(path)
        if file is None:
            is_directory = bool((yield from self._under(path)))
            if is_directory:
                raise ToolError(f"The path {path} is not a file.")
            raise ToolError(f"The path {path} does not exist. Please provide a valid path.")
        return file

    def _under(self, directory: str) -> Steps[list[models.Memory]]:
        """Every file under `directory`, at any depth, by path."""
        prefix = directory.rstrip("/") + "/"
        filters = {**self.scope, "filters": {"metadata": {PATH_KEY: "*"}}}
        files: list[models.Memory] = []
        offset: int | None = 0
        while offset is not None:
            page = yield _calls.list_page(filters, offset, PAGE)
            files += [memory for memory in page.memories if str(memory.metadata.get(PATH_KEY, "")).startswith(prefix)]
            offset = _calls.next_offset(page, len(page.memories))
        return sorted(files, key=lambda memory: memory.metadata[PATH_KEY])

    def _save(self, path: str, text: str) -> _calls.Call[models.Memory]:
        metadata = {PATH_KEY: path, **({EMPTY_KEY: True} if not text else {})}
        return _calls.add_memory(text or path, None, {**self.scope, "metadata": metadata, "source": "anthropic-memory-tool"})

    def _rewrite(self, file: models.Memory, text: str) -> _calls.Call[models.Memory]:
        metadata = {EMPTY_KEY: True if not text else None}
        return _calls.update_memory(file.id, {"content": text or file.metadata[PATH_KEY], "metadata": metadata})


def _checked(path: str) -> str:
    """The path, normalised, when it is under /memories and has no `..`; a ToolError otherwise."""
    if path != ROOT and not path.startswith(ROOT + "/"):
        raise ToolError(f"Path must start with /memories, got: {path}")
    parts = [part for part in path.split("/") if part]
    if any(part in (".", "..") for part in parts):
        raise ToolError(f"Path {path} would escape /memories directory")
    return "/" + "/".join(parts)


def _text(file: models.Memory) -> str:
    return "" if file.metadata.get(EMPTY_KEY) else file.content


def _occurrences(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _size(length: int) -> str:
    value = float(length)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if value == int(value) else f"{value:.1f}{unit}"
        value /= 1024
    raise AssertionError("unreachable: G is the last unit")


def _listing(directory: str, files: list[models.Memory]) -> str:
    """The files and directories up to 2 levels below `directory`, as the reference filesystem tool lists them."""
    sizes: dict[str, int] = {}
    for file in files:
        relative = file.metadata[PATH_KEY][len(directory.rstrip("/")) + 1 :].split("/")
        size = len(_text(file).encode())
        for depth in range(1, min(len(relative), 2) + 1):
            name = "/".join(relative[:depth]) + ("/" if depth < len(relative) else "")
            sizes[name] = sizes.get(name, 0) + size
    lines = [f"{_size(sum(len(_text(f).encode()) for f in files))}\t{directory}"]
    lines += [f"{_size(size)}\t{directory.rstrip('/')}/{name}" for name, size in sorted(sizes.items())]
    header = f"Here're the files and directories up to 2 levels deep in {directory}, excluding hidden items:"
    return header + "\n" + "\n".join(lines)


class MemoryServiceMemoryTool(BetaAbstractMemoryTool):
    """Anthropic's memory tool, its files kept in the memory service (sync: `client.beta.messages.tool_runner`).
    `base_url` and `token` default to MEMORY_SERVICE_URL and MEMORY_SERVICE_TOKEN."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        namespace: str = "claude-memories",
        user_id: str | None = None,
        agent_id: str | None = None,
        client: MemoryClient | None = None,
        cache_control: Mapping[str, Any] | None = None,
    ):
        super().__init__(cache_control=cache_control)  # type: ignore[arg-type]
        self._client = client or MemoryClient(base_url, token)
        self._files = _Files(namespace, user_id, agent_id)

    def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return run_sync(self._client, self._files.view(command))

    def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return run_sync(self._client, self._files.create(command))

    def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return run_sync(self._client, self._files.str_replace(command))

    def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return run_sync(self._client, self._files.insert(command))

    def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return run_sync(self._client, self._files.delete(command))

    def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return run_sync(self._client, self._files.rename(command))

    def clear_all_memory(self) -> str:
        return run_sync(self._client, self._files.clear_all_memory())


class AsyncMemoryServiceMemoryTool(BetaAsyncAbstractMemoryTool):
    """The async twin of MemoryServiceMemoryTool (for `AsyncAnthropic`)."""

    def __init__(
        self,
        base_url: str | None = None,
        token: str | None = None,
        *,
        namespace: str = "claude-memories",
        user_id: str | None = None,
        agent_id: str | None = None,
        client: AsyncMemoryClient | None = None,
        cache_control: Mapping[str, Any] | None = None,
    ):
        super().__init__(cache_control=cache_control)  # type: ignore[arg-type]
        self._client = client or AsyncMemoryClient(base_url, token)
        self._files = _Files(namespace, user_id, agent_id)

    async def view(self, command: BetaMemoryTool20250818ViewCommand) -> str:
        return await run_async(self._client, self._files.view(command))

    async def create(self, command: BetaMemoryTool20250818CreateCommand) -> str:
        return await run_async(self._client, self._files.create(command))

    async def str_replace(self, command: BetaMemoryTool20250818StrReplaceCommand) -> str:
        return await run_async(self._client, self._files.str_replace(command))

    async def insert(self, command: BetaMemoryTool20250818InsertCommand) -> str:
        return await run_async(self._client, self._files.insert(command))

    async def delete(self, command: BetaMemoryTool20250818DeleteCommand) -> str:
        return await run_async(self._client, self._files.delete(command))

    async def rename(self, command: BetaMemoryTool20250818RenameCommand) -> str:
        return await run_async(self._client, self._files.rename(command))

    async def clear_all_memory(self) -> str:
        return await run_async(self._client, self._files.clear_all_memory())
