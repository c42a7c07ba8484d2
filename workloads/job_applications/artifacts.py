"""Content-addressed files (PDFs, screenshots) kept between stages, referenced by sha256.

The bytes stay out of the task's jsonb state: a state row is rewritten at every stage and
read at every claim, and a CV plus a cover letter plus a screenshot is half a megabyte. The
state holds only the digest; writing the same bytes twice (a stage redone after a crash)
lands on the same file, so a redo never leaves a half-written file behind.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

__all__ = ["ArtifactMissing", "ArtifactStore"]


class ArtifactMissing(LookupError):
    """No file with this digest (another host, or the folder was cleaned)."""


class ArtifactStore:
    """Files under `root/ab/abcdef…` named by the sha256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, digest: str) -> Path:
        return self.root / digest[:2] / digest

    def put(self, data: bytes) -> str:
        """Store `data` (atomically: temp file, then rename) and return its sha256."""
        digest = hashlib.sha256(data).hexdigest()
        target = self.path(digest)
        if target.exists():
            return digest
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        """The bytes stored under `digest`; ArtifactMissing if absent or corrupted."""
        try:
            data = self.path(digest).read_bytes()
        except OSError:
            raise ArtifactMissing(f"artifact {digest[:12]} is not in {self.root}") from None
        if hashlib.sha256(data).hexdigest() != digest:
            raise ArtifactMissing(f"artifact {digest[:12]} in {self.root} is corrupted")
        return data
