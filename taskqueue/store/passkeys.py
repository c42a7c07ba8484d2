"""TaskQueue's passkeys: a person's registered WebAuthn credentials, the links where a person
can sign an approval, and the signed approves the gate checks again before acting."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from taskqueue.errors import BadInput
from taskqueue.store.base import QueueBase
from taskqueue.store.checks import check_name, check_text, person_key
from taskqueue.store.models import JSON
from taskqueue.store.signing import Assertion, SignatureInvalid, verify_assertion

__all__ = ["Passkey", "PasskeysMixin", "signed_people"]

MAX_PASSKEYS = 20


@dataclass(frozen=True)
class Passkey:
    """A registered credential of a person (its public key stays in the database)."""

    credential_id: bytes
    person: str
    rp_id: str
    label: str | None
    created_at: datetime
    last_used_at: datetime | None
    sign_count: int = 0
    public_key: bytes = b""

    def to_json(self) -> JSON:
        return {"credential_id": self.credential_id.hex(), "person": self.person,
                "rp_id": self.rp_id, "label": self.label,
                "created_at": self.created_at.isoformat(),
                "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None}


def _passkey(row: dict[str, Any]) -> Passkey:
    return Passkey(bytes(row["credential_id"]), row["person"], row["rp_id"], row["label"],
                   row["created_at"], row["last_used_at"], row["sign_count"],
                   bytes(row["public_key"]))


def signed_people(rows: list[dict[str, Any]], approval_id: int, request: JSON) -> list[str]:
    """The people among an approval's counted approves (`approval_signatures` rows) whose
    stored assertion verifies, against their own stored credential, over this request."""
    found = []
    for r in rows:
        if r["public_key"] is None or r["signature"] is None:
            continue  # no assertion, or a credential that is not this person's
        assertion = Assertion(bytes(r["credential_id"]), bytes(r["authenticator_data"] or b""),
                              bytes(r["client_data"] or b""), bytes(r["signature"]),
                              r["origin"] or "")
        try:
            verify_assertion(assertion, bytes(r["public_key"]), r["rp_id"], approval_id, request)
        except SignatureInvalid:
            continue
        found.append(r["person"])
    return found


class PasskeysMixin(QueueBase):
    """TaskQueue's passkey methods (the web's account page registers and removes them)."""

    async def passkey_add(self, person: str, credential_id: bytes, public_key: bytes, *,
                          rp_id: str, sign_count: int = 0, label: str | None = None) -> Passkey:
        """Store a verified registration of `person`'s passkey."""
        check_name(person, "the person", required=True)
        check_name(rp_id, "the relying party", required=True)
        check_text(label, "the label", 100)
        if not 1 <= len(credential_id) <= 1023 or not 1 <= len(public_key) <= 4096:
            raise BadInput("a passkey's credential id or public key has an unusable size")
        async with self._tx() as conn:
            mine = await self._all(conn, "passkey_list", {"person_key": person_key(person)})
            if len(mine) >= MAX_PASSKEYS:
                raise BadInput(f"{person} already has {MAX_PASSKEYS} passkeys; remove one first")
            row = await self._one(conn, "passkey_add", {
                "credential_id": credential_id, "person": person,
                "person_key": person_key(person), "public_key": public_key,
                "sign_count": sign_count, "rp_id": rp_id, "label": label})
        if row is None:
            raise BadInput("this passkey is already registered")
        return _passkey(row)

    async def passkey_list(self, person: str) -> list[Passkey]:
        async with self.pool.connection() as conn:
            found = await self._all(conn, "passkey_list", {"person_key": person_key(person)})
        return [_passkey(r) for r in found]

    async def passkey_get(self, credential_id: bytes) -> Passkey | None:
        async with self.pool.connection() as conn:
            row = await self._one(conn, "passkey_get", {"credential_id": credential_id})
        return _passkey(row) if row else None

    async def passkey_remove(self, person: str, credential_id: bytes) -> bool:
        """Remove one of `person`'s passkeys; False when they have no such passkey."""
        async with self._tx() as conn:
            row = await self._one(conn, "passkey_remove", {
                "person_key": person_key(person), "credential_id": credential_id})
        return row is not None

    async def signing_link_set(self, name: str, url: str) -> None:
        """Where people can sign an approval (`{approval_id}`, `{task_id}` are filled in)."""
        check_name(name, "the link's name", required=True)
        check_text(url, "the link", 2000, required=True)
        if not url.startswith(("http://", "https://")):
            raise BadInput("a signing link is an http(s) address")
        async with self._tx() as conn:
            await self._all(conn, "signing_link_set", {"name": name, "url": url})

    async def signing_link(self, approval_id: int, task_id: int) -> str | None:
        """The address where a person can sign this approval (None: no channel registered)."""
        async with self.pool.connection() as conn:
            row = await self._one(conn, "signing_link_get", {})
        if row is None:
            return None
        return str(row["url"]).replace("{approval_id}", str(approval_id)).replace(
            "{task_id}", str(task_id))

    async def approval_signed_people(self, approval_id: int, request: JSON) -> list[str]:
        """The counted approvers of an approval whose passkey signature verifies now."""
        async with self.pool.connection() as conn:
            found = await self._all(conn, "approval_signatures", {"approval_id": approval_id})
        return signed_people(found, approval_id, request)
