"""What the Python client's users do with it, run from its wheel installed in a fresh venv against the real stack
(test/integration/python-client.test.ts). The base URL and token come from MEMORY_SERVICE_URL and
MEMORY_SERVICE_TOKEN, as a user's would; the stack limits reads to a few per second, so that a burst of reads
meets a 429. Prints one JSON line of what it saw, for the test to check."""

import asyncio
import json
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, HTTPServer

import httpx

import memory_service
from memory_service import AsyncMemoryClient, MemoryClient, verify_webhook

MISSING_ID = "00000000-0000-7000-8000-000000000000"
marker = f"zephyrine{uuid.uuid4().hex[:10]}"
seen_statuses: list[int] = []
deliveries: list[tuple[bytes, dict[str, str]]] = []


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        deliveries.append((self.rfile.read(int(self.headers["content-length"])), dict(self.headers.items())))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def failure(call) -> dict:
    try:
        call()
    except memory_service.MemoryServiceError as err:
        fields = {"status": err.status, "error": err.error, "message": err.message, "retry_after": err.retry_after}
        return {"type": type(err).__name__, **fields}
    return {"type": None}


def sync_part(client: MemoryClient) -> dict:
    saved = client.add_memory(f"The {marker} deploy happens on Tuesdays", namespace=marker, tags=["runtime"], user_id="alex")
    key = str(uuid.uuid4())
    again = [client.add_memory(f"{marker} retried create", namespace=marker, idempotency_key=key).id for _ in range(2)]
    batch = client.add_memories(
        [
            {"content": f"{marker} alex likes green tea", "namespace": marker, "user_id": "alex", "tags": ["drinks"]},
            {"content": f"{marker} bob likes green tea", "namespace": marker, "user_id": "bob", "tags": ["drinks"]},
            {"content": "", "namespace": marker},
            {"content": f"{marker} alex plays chess", "namespace": marker, "user_id": "alex"},
        ]
    )
    scoped = client.search(f"{marker} green tea", namespace=marker, user_id="alex", tags=["drinks"], k=10)
    listed = [memory.id for memory in client.list_memories(namespace=marker, page_size=2)]
    audited = [event.action for event in client.list_events(action="memory.", page_size=2)]
    burst = [client.get_memory(saved.id).id == saved.id for _ in range(8)]
    impatient = MemoryClient(max_retries=0)
    return {
        "saved": {"type": type(saved).__name__, "content": saved.content, "tags": saved.tags, "user_id": saved.user_id},
        "idempotent": again[0] == again[1],
        "batch": {
            "created": batch.created,
            "indexes": [result.index for result in batch.results],
            "failed": [(item.index, item.status, item.error) for item in batch.failed],
        },
        "scoped": {"users": sorted({hit.user_id for hit in scoped.hits}), "count": len(scoped.hits), "hit": type(scoped.hits[0]).__name__},
        "listed": len(listed),
        "distinct": len(set(listed)),
        "audited": audited,
        "burst": all(burst),
        "rate_limited_refusal": failure(lambda: [impatient.get_memory(saved.id) for _ in range(20)]),
        "not_found": failure(lambda: client.get_memory(MISSING_ID)),
        "bad_request": failure(lambda: client.add_memory("")),
        "unreachable": failure(lambda: MemoryClient("http://127.0.0.1:9", max_retries=1).get_memory(saved.id)),
        "saved_id": str(saved.id),
    }


async def async_part() -> dict:
    async with AsyncMemoryClient() as client:
        saved = await client.add_memory(f"{marker} asynchronous note", namespace=marker)
        found = await client.search(f"{marker} asynchronous", namespace=marker)
        listed = [memory.id async for memory in client.list_memories(namespace=marker, page_size=3)]
        missing = None
        try:
            await client.get_memory(MISSING_ID)
        except memory_service.NotFoundError as err:
            missing = err.status
    return {"found": any(hit.id == saved.id for hit in found.hits), "listed": len(listed), "not_found": missing}


def webhook_part(client: MemoryClient) -> dict:
    server = HTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    hook = {"url": f"http://127.0.0.1:{server.server_port}/hook", "events": ["memory.saved"]}
    endpoint = client.request("POST", "/api/webhooks", json=hook)
    saved = client.add_memory(f"{marker} announced by a webhook", namespace=marker)
    for _ in range(300):
        if deliveries:
            break
        threading.Event().wait(0.1)
    server.shutdown()
    body, headers = deliveries[0]
    event = verify_webhook(endpoint["secret"], body, headers)
    forged = body.replace(str(saved.id).encode(), str(uuid.uuid4()).encode())
    try:
        verify_webhook(endpoint["secret"], forged, headers)
        forged_refused = False
    except memory_service.WebhookVerificationError:
        forged_refused = True
    return {"type": event["type"], "matches": event["data"]["id"] == str(saved.id), "forged_refused": forged_refused}


def main() -> None:
    with MemoryClient(http_client=httpx.Client(event_hooks={"response": [lambda r: seen_statuses.append(r.status_code)]})) as client:
        result = sync_part(client)
        result["statuses_seen"] = sorted(set(seen_statuses))
        result["async"] = asyncio.run(async_part())
        result["webhook"] = webhook_part(client)
    result["python"] = sys.version.split()[0]
    result["module"] = memory_service.__file__
    print(json.dumps(result))


main()
