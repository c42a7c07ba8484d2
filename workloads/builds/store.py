"""The content-addressed artifact store: built files copied to `root/ab/<sha256>`, read-only.

A build's artifacts leave the workspace (which the next build of the task wipes) for here,
so a publish after a crash reads the very file that was built; the state keeps only the
path, name, size and checksum.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Artifact", "ArtifactStore", "sha256_file"]

CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Artifact:
    """One stored file: its original name, size in bytes, sha256 and stored path."""

    name: str
    size: int
    sha256: str
    path: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "size": self.size, "sha256": self.sha256, "path": self.path}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Artifact:
        return cls(str(data["name"]), int(data["size"]), str(data["sha256"]), str(data["path"]))


def sha256_file(path: Path) -> str:
    """The file's sha256, read in chunks (an .ipa can be gigabytes)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


class ArtifactStore:
    """Files under `root/ab/abcdef…`, named by the sha256 of their bytes."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def put(self, source: Path, name: str) -> Artifact:
        """Copy `source` in (hashing as it copies; atomic rename) and describe it."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.root, prefix=".tmp-")
        digest, size = hashlib.sha256(), 0
        try:
            with os.fdopen(fd, "wb") as out, source.open("rb") as src:
                while chunk := src.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
            sha = digest.hexdigest()
            target = self.root / sha[:2] / sha
            target.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(temp, 0o444)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        return Artifact(name, size, sha, str(target))
