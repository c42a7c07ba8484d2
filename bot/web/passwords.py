"""Password hashes: argon2id (argon2-cffi) for every new hash; an older scrypt hash
(`scrypt$N$r$p$salt$hash`) still verifies and is replaced at its next sign-in."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from taskqueue import BadInput

MIN_CHARS = 8
MAX_CHARS = 1024
# argon2-cffi's defaults (RFC 9106's low-memory profile: argon2id, 64 MiB, 3 passes).
_HASHER = PasswordHasher()


def check_password(password: str) -> str:
    """A new password: 8 to 1024 characters, not only spaces."""
    if not MIN_CHARS <= len(password) <= MAX_CHARS or not password.strip():
        raise BadInput(f"a password is {MIN_CHARS} to {MAX_CHARS} characters")
    return password


def hash_password(password: str) -> str:
    """A salted argon2id hash of `password` (`$argon2id$v=19$...`)."""
    return _HASHER.hash(password)


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches the stored hash, argon2id or scrypt (in constant time)."""
    if len(password) > MAX_CHARS:
        return False
    if stored.startswith("scrypt$"):
        return _verify_scrypt(password, stored)
    try:
        return _HASHER.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(stored: str) -> bool:
    """Whether a hash that just verified should be replaced: every scrypt hash, and an
    argon2 hash made with weaker parameters than today's."""
    if stored.startswith("scrypt$"):
        return True
    try:
        return _HASHER.check_needs_rehash(stored)
    except InvalidHashError:
        return True


def _verify_scrypt(password: str, stored: str) -> bool:
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt),
                             n=int(n), r=int(r), p=int(p), dklen=32,
                             maxmem=64 * 1024 * 1024)
    except (ValueError, TypeError):
        return False
    return scheme == "scrypt" and hmac.compare_digest(got, base64.b64decode(key))


@cache
def dummy_hash() -> str:
    """Checked against when the account does not exist, so a wrong name costs as long as
    a wrong password and timing does not tell which names exist (made on first use)."""
    return hash_password(secrets.token_urlsafe(16))
