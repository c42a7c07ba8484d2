"""Stands in for xcodebuild/fastlane gym and rojo: `fake_build.py MODE OUTPUT [COUNT_FILE]`.

It builds OUTPUT from the checked-out `place.txt` (so the artifact follows the commit) and
appends a line to COUNT_FILE per build started. Modes: fast, slow (2 s), fail (exit 3),
hang (a child and itself sleep forever; the child's pid goes to OUTPUT.child),
noisy (5 MB of output first).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    mode, output = sys.argv[1], Path(sys.argv[2])
    if len(sys.argv) > 3:
        with open(sys.argv[3], "a") as f:
            f.write(f"{os.getpid()}\n")
    print(f"building in {os.getcwd()} mode={mode}", flush=True)
    if mode == "fail":
        print("error: Build input file cannot be found: 'Main.swift'", flush=True)
        return 3
    if mode == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        Path(f"{output}.child").write_text(str(child.pid))
        time.sleep(600)
    if mode == "slow":
        for i in range(20):
            print(f"compiling {i}", flush=True)
            time.sleep(0.1)
    if mode == "noisy":
        line = "x" * 99 + "\n"
        for _ in range(50_000):
            sys.stdout.write(line)
    source = Path("place.txt").read_text()
    print(f"source: {source}", flush=True)
    output.write_text(f"<roblox>{source}</roblox>\n")
    print(f"wrote {output.name}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
