"""Stands in for `fastlane pilot upload`: `fake_upload.py COUNT_FILE IPA [fail]`.

Each upload appends one line to COUNT_FILE: the .ipa's sha256, whether the App Store Connect
key reached it through the environment, and its arguments (which must not hold the key).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path


def main() -> int:
    count, ipa = Path(sys.argv[1]), Path(sys.argv[2])
    if len(sys.argv) > 3 and sys.argv[3] == "fail":
        print("[!] Error uploading ipa file: invalid provisioning profile", flush=True)
        return 1
    line = {"sha256": hashlib.sha256(ipa.read_bytes()).hexdigest(),
            "key_id": os.environ.get("SIGNOFF_ASC_KEY_ID"),
            "key_path": os.environ.get("SIGNOFF_ASC_KEY_PATH"), "argv": sys.argv[1:]}
    with count.open("a") as f:
        f.write(json.dumps(line) + "\n")
    print("Successfully uploaded package to App Store Connect", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
