"""Password hashes: scrypt (hashlib), stored as `scrypt$N$r$p$salt$hash` in base64."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from functools import cache

from taskqueue import BadInput

# scrypt's cost: 2**14 rounds, block size 8 (about 16 MiB and 50 ms a hash).
N, R, P = 2**14, 8, 1
MIN_CHARS = 8
MAX_CHARS = 1024


def check_password(password: str) -> str:
    """A new password: 8 to 1024 characters, not only spaces."""
    if not MIN_CHARS <= len(password) <= MAX_CHARS or not password.strip():
        raise BadInput(f"a password is {MIN_CHARS} to {MAX_CHARS} characters")
    return password


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def hash_password(password: str) -> str:
    """A salted scrypt hash of `password`."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=N, r=R, p=P, dklen=32,
                         maxmem=64 * 1024 * 1024)
    return f"scrypt${N}${R}${P}${_b64(salt)}${_b64(key)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches the stored hash (in constant time)."""
    try:
        scheme, n, r, p, salt, key = stored.split("$")
        if scheme != "scrypt" or len(password) > MAX_CHARS:
            return False
        got = hashlib.scrypt(password.encode("utf-8"), salt=base64.b64decode(salt),
                             n=int(n), r=int(r), p=int(p), dklen=32,
                             maxmem=64 * 1024 * 1024)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(key))


@cache
def dummy_hash() -> str:
    """Checked against when the account does not exist, so a wrong name costs as long as
    a wrong password and timing does not tell which names exist (made on first use)."""
    return hash_password(secrets.token_urlsafe(16))
