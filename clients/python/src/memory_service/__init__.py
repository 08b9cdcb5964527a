"""The memory service's Python client: `MemoryClient` (sync) and `AsyncMemoryClient`, typed models of every
route in `memory_service.models` (generated from the service's OpenAPI document), typed errors, and webhook
verification."""

from . import models
from .client import AsyncMemoryClient, MemoryClient
from .errors import (
    AuthenticationError,
    BadRequestError,
    ConflictError,
    MemoryServiceConnectionError,
    MemoryServiceError,
    NotFoundError,
    PayloadTooLargeError,
    PermissionDeniedError,
    QuotaExceededError,
    RateLimitedError,
    ServerError,
    WebhookVerificationError,
)
from .webhooks import verify_webhook

# The everyday shapes under the names a reader looks for.
Memory = models.Memory
SearchHit = models.ScoredMemory
SearchResults = models.ApiMemoriesSearchPostResponse
BulkSearchResults = models.ApiMemoriesSearchBulkPostResponse
BatchCreateResult = models.BatchCreateResult
CapturedConversation = models.CapturedConversation
Thread = models.ApiThreadsRefGetResponse

__all__ = [
    "AsyncMemoryClient",
    "AuthenticationError",
    "BadRequestError",
    "BatchCreateResult",
    "BulkSearchResults",
    "CapturedConversation",
    "ConflictError",
    "Memory",
    "MemoryClient",
    "MemoryServiceConnectionError",
    "MemoryServiceError",
    "NotFoundError",
    "PayloadTooLargeError",
    "PermissionDeniedError",
    "QuotaExceededError",
    "RateLimitedError",
    "SearchHit",
    "SearchResults",
    "ServerError",
    "Thread",
    "WebhookVerificationError",
    "models",
    "verify_webhook",
]
