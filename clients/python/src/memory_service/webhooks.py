"""Checking a webhook delivery from the service (Standard Webhooks: the webhook-id, webhook-timestamp and
webhook-signature headers over the raw body)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from standardwebhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as _SignatureError

from .errors import WebhookVerificationError


def verify_webhook(secret: str, raw_body: bytes | str, headers: Mapping[str, str]) -> dict[str, Any]:
    """The event (`type` and `data`) of a delivery whose signature is good and recent; raises
    WebhookVerificationError otherwise. `secret` is the endpoint's `whsec_...`; pass the body exactly as received."""
    try:
        event = Webhook(secret).verify(raw_body, {name.lower(): value for name, value in headers.items()})
    except _SignatureError as err:
        raise WebhookVerificationError(str(err)) from err
    if not isinstance(event, dict):
        raise WebhookVerificationError("the delivery's body is not a JSON object")
    return event
