"""Passkey signatures over approvals: the challenge a person's authenticator signs (derived
from the approval's id and the request's fingerprint) and its verification against the
stored credential, with the maintained `webauthn` package (no cryptography of our own)."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from taskqueue.errors import BadInput
from taskqueue.extras import require_extra
from taskqueue.store.models import JSON

MAX_PART_BYTES = 16 * 1024


class SignatureInvalid(BadInput):
    """The passkey assertion does not verify for this request: nothing was recorded."""


def request_fingerprint(request: JSON) -> str:
    """SHA-256 of the request as canonical JSON: what the person is shown and approves."""
    text = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def approval_challenge(approval_id: int, request: JSON) -> bytes:
    """The challenge an approve of approval `approval_id` signs: one per request, so an
    assertion for another request (another fingerprint) never verifies for this one."""
    text = f"signoff-approve\x1f{approval_id}\x1f{request_fingerprint(request)}"
    return hashlib.sha256(text.encode()).digest()


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: Any, what: str) -> bytes:
    if not isinstance(text, str) or len(text) > MAX_PART_BYTES * 2:
        raise SignatureInvalid(f"the assertion's {what} is missing or too long")
    try:
        return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except ValueError:
        raise SignatureInvalid(f"the assertion's {what} is not base64url") from None


@dataclass(frozen=True)
class Assertion:
    """A WebAuthn assertion as stored with an approve, and the origin it was made at."""

    credential_id: bytes
    authenticator_data: bytes
    client_data: bytes
    signature: bytes
    origin: str

    @classmethod
    def from_browser(cls, credential: Any, origin: str) -> Assertion:
        """From the JSON a browser's `navigator.credentials.get()` gives (base64url parts)."""
        if not isinstance(credential, dict) or not isinstance(credential.get("response"), dict):
            raise SignatureInvalid("the assertion is not a WebAuthn credential")
        r = credential["response"]
        return cls(unb64url(credential.get("rawId"), "rawId"),
                   unb64url(r.get("authenticatorData"), "authenticatorData"),
                   unb64url(r.get("clientDataJSON"), "clientDataJSON"),
                   unb64url(r.get("signature"), "signature"), origin)

    def browser_json(self) -> dict[str, Any]:
        rid = b64url(self.credential_id)
        return {"id": rid, "rawId": rid, "type": "public-key",
                "response": {"authenticatorData": b64url(self.authenticator_data),
                             "clientDataJSON": b64url(self.client_data),
                             "signature": b64url(self.signature)}}


def verify_assertion(assertion: Assertion, public_key: bytes, rp_id: str,
                     approval_id: int, request: JSON, sign_count: int = 0) -> int:
    """The assertion's new signature counter when it verifies, against `public_key`, over
    exactly this approval's challenge; SignatureInvalid otherwise. `sign_count` is the
    credential's stored counter (a fresh approve must pass it, or the authenticator may be
    a clone; the gate's later check of a stored assertion passes 0)."""
    require_extra("web", "checking a passkey-signed approve", "webauthn")
    from webauthn import verify_authentication_response  # only where a signature is checked
    from webauthn.helpers.exceptions import WebAuthnException

    try:
        verified = verify_authentication_response(
            credential=assertion.browser_json(),
            expected_challenge=approval_challenge(approval_id, request),
            expected_rp_id=rp_id, expected_origin=assertion.origin,
            credential_public_key=public_key, credential_current_sign_count=sign_count)
    except (WebAuthnException, ValueError, KeyError, TypeError) as exc:
        raise SignatureInvalid(f"the passkey assertion does not verify for approval "
                               f"{approval_id}: {str(exc)[:200]}") from None
    return int(verified.new_sign_count)
