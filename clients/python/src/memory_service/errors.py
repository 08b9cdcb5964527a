"""The client's errors: every error answer of the service, and a service that could not be reached."""

from __future__ import annotations

from typing import Any

import httpx


class MemoryServiceError(Exception):
    """An error answer of the service: its HTTP `status`, its `error` code and `message`, and the extra fields."""

    def __init__(self, status: int | None, error: str, message: str, body: dict[str, Any] | None = None, retry_after: float | None = None):
        super().__init__(f"{error}: {message}")
        self.status = status
        self.error = error
        self.message = message
        self.body: dict[str, Any] = body or {}
        self.retry_after = retry_after

    @property
    def quota(self) -> dict[str, Any] | None:
        """On a 402: `used`, `limit` and `plan` of the quota the call would pass."""
        return self.body.get("quota")

    @property
    def upgrade_url(self) -> str | None:
        return self.body.get("upgrade_url")

    @property
    def reason(self) -> str | None:
        """On a 401: which case it is (`no_credential`, `malformed_header`, `unknown_token`, `revoked_or_expired`)."""
        return self.body.get("reason")


class BadRequestError(MemoryServiceError):
    """400: the request was malformed; `message` names what is wrong."""


class AuthenticationError(MemoryServiceError):
    """401: no token, or a token that is wrong, revoked or expired; `reason` says which."""


class QuotaExceededError(MemoryServiceError):
    """402: the org's plan does not allow this; see `quota` and `upgrade_url`."""


class PermissionDeniedError(MemoryServiceError):
    """403: the token's role may not do this."""


class NotFoundError(MemoryServiceError):
    """404: no such thing in the token's org (another org's ids are 404 too)."""


class ConflictError(MemoryServiceError):
    """409: an Idempotency-Key reused with another body, or a name taken."""


class PayloadTooLargeError(MemoryServiceError):
    """413: the body or a field is over its documented size."""


class RateLimitedError(MemoryServiceError):
    """429: refused before doing anything; `retry_after` says when to go again."""


class ServerError(MemoryServiceError):
    """5xx: the service failed or was busy; the call may or may not have taken effect."""


class MemoryServiceConnectionError(MemoryServiceError):
    """The service could not be reached or did not answer in time (`status` is None)."""

    def __init__(self, cause: httpx.TransportError):
        super().__init__(None, "network_error", f"{type(cause).__name__}: {cause}")
        self.__cause__ = cause


class WebhookVerificationError(Exception):
    """A webhook delivery whose signature is wrong, missing or too old."""


_BY_STATUS: dict[int, type[MemoryServiceError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: QuotaExceededError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: PayloadTooLargeError,
    429: RateLimitedError,
}


def error_from_response(response: httpx.Response, retry_after: float | None) -> MemoryServiceError:
    """The typed error of an error answer, with the service's own code and message."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        body = {"message": response.text[:500] or response.reason_phrase}
    error_type = _BY_STATUS.get(response.status_code, ServerError if response.status_code >= 500 else MemoryServiceError)
    error = str(body.get("error", f"http_{response.status_code}"))
    return error_type(response.status_code, error, str(body.get("message", "the request failed")), body, retry_after)
