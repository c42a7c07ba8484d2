"""Small stand-in coding agents (Python scripts run as the agent command) and test scripts.

Each agent is run as `python AGENT INSTRUCTION_FILE` in the worktree (its cwd)."""

from __future__ import annotations

import sys
from pathlib import Path

# Appends the instruction to CHANGES.md: the diff shows exactly what it was told.
EDIT = """
import sys, pathlib
text = pathlib.Path(sys.argv[1]).read_text()
with open("CHANGES.md", "a") as f:
    f.write(text + "\\n")
print("edited CHANGES.md")
"""

FAIL = """
import sys
print("agent: the model is unavailable", flush=True)
sys.exit(3)
"""

NOTHING = """
print("I looked and changed nothing")
"""

# Prints 50 MB, then edits: the worker must keep only a tail in memory.
LOUD = """
import sys
line = ("x" * 1023 + "\\n").encode()
out = sys.stdout.buffer
for _ in range(50 * 1024):
    out.write(line)
out.write(b"LAST LINE\\n")
out.flush()
open("CHANGES.md", "a").write("loud\\n")
"""

# The first run (no marker file yet) starts a grandchild, records both pids, and hangs;
# later runs edit like EDIT. The grandchild would append to the worktree if it survived.
HANG_ONCE = """
import os, sys, pathlib, subprocess, time
marker = pathlib.Path(os.environ["HANG_MARKER"])
if not marker.exists():
    marker.write_text("hung")
    child = subprocess.Popen([sys.executable, "-c",
        "import time, pathlib\\n"
        "time.sleep(60)\\n"
        "pathlib.Path('ORPHAN_WAS_HERE').write_text('x')\\n"])
    pathlib.Path(os.environ["HANG_PIDS"]).write_text(f"{os.getpid()} {child.pid}")
    print("thinking...", flush=True)
    time.sleep(300)
text = pathlib.Path(sys.argv[1]).read_text()
with open("CHANGES.md", "a") as f:
    f.write(text + "\\n")
"""

TESTS_PASS = "import pathlib; pathlib.Path('.pytest_cache').mkdir(exist_ok=True); " \
    "pathlib.Path('junk.txt').write_text('x'); print('3 passed')"
TESTS_FAIL = "import sys; print('1 failed <FAIL>'); sys.exit(1)"


def write_agent(folder: Path, name: str, source: str) -> tuple[str, ...]:
    """The agent script in `folder` and its command template."""
    path = folder / f"{name}.py"
    path.write_text(source)
    return (sys.executable, str(path), "{instruction_file}")

# Tries to publish by itself before editing: a plain `git push` from the worktree must fail.
PUSHY = """
import subprocess, sys, pathlib
done = subprocess.run(["git", "push", "origin", "HEAD:refs/heads/sneaky"],
                      capture_output=True, text=True)
print("push exit", done.returncode, done.stderr.strip()[-200:])
pathlib.Path("CHANGES.md").write_text("pushy\\n")
"""
