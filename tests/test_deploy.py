"""deploy/'s units (the service and its standby) pass `systemd-analyze verify`: no unknown
or misplaced key."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEPLOY = Path(__file__).resolve().parents[1] / "deploy"
UNIT = DEPLOY / "signoff.service"
# What systemd says about a key it ignores ("Unknown key 'X' in section [Service], ignoring"),
# a section it does not know, or a line it cannot parse.
COMPLAINT = re.compile(r"unknown|ignoring|invalid|failed to parse|missing", re.IGNORECASE)

pytestmark = pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (scripts/install-system-deps installs it)")


def verify(text: str, folder: Path) -> list[str]:
    """The lines `systemd-analyze verify` prints about the unit `text`, with its ExecStart
    pointed at an executable that exists here (the real one is /opt/signoff/...)."""
    unit = folder / "signoff.service"
    unit.write_text(re.sub(r"(?m)^ExecStart=\S+", f"ExecStart={sys.executable}", text), "utf-8")
    out = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                         text=True, timeout=60, check=False)
    return [line for line in (out.stdout + out.stderr).splitlines() if str(unit) in line]


@pytest.mark.parametrize("name", ["signoff.service", "signoff-standby.service"])
def test_the_unit_verifies_without_a_complaint(tmp_path: Path, name: str) -> None:
    text = (DEPLOY / name).read_text("utf-8")
    assert verify(text, tmp_path) == []
    unit_section = text.split("\n[Unit]\n", 1)[1].split("\n[Service]\n", 1)[0]
    assert "StartLimitIntervalSec=300" in unit_section and "StartLimitBurst=5" in unit_section


def test_verify_catches_a_start_limit_in_the_service_section(tmp_path: Path) -> None:
    text = UNIT.read_text("utf-8").replace("StartLimitIntervalSec=300\n", "")
    misplaced = text.replace("[Service]\n", "[Service]\nStartLimitIntervalSec=300\n")
    complaints = verify(misplaced, tmp_path)
    assert complaints and all(COMPLAINT.search(line) for line in complaints), complaints
    assert "StartLimitIntervalSec" in complaints[0]
