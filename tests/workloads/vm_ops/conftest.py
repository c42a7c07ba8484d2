"""Fixtures for the vm_ops workload: vcsim (built once per session) and libvirt's test driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from .stand_ins import NODE_XML, CountingLibvirt, VcSim, build_vcsim, running_vcsim


@pytest.fixture(scope="session")
def vcsim_binary() -> Path:
    return build_vcsim()


@pytest.fixture
def vcsim(vcsim_binary: Path, tmp_path: Path) -> Iterator[VcSim]:
    """A fresh vCenter simulator of this test's own (it starts in a few milliseconds)."""
    with running_vcsim(vcsim_binary, tmp_path) as sim:
        yield sim


@pytest.fixture
def libvirt_host(tmp_path: Path) -> CountingLibvirt:
    """A libvirt test hypervisor seeded with lab-web (running) and lab-tpl (shut off)."""
    node = tmp_path / "node.xml"
    node.write_text(NODE_XML, "utf-8")
    return CountingLibvirt(f"test://{node}")
