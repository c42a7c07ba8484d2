"""A feature whose extra is not installed says so in one line naming the extra, with a
non-zero exit, where it is used: `signoff worker` loading a workload's handler, and
`--metrics-listen` (the packages are made absent in a subprocess; tests/test_wheel.py does
the same in a venv with the core alone)."""

from __future__ import annotations

import os

import pytest

from taskqueue import MissingExtra, SignoffError, extra_missing, require_extra
from tests.extras_helpers import extra_line, signoff_without


def test_an_installed_module_is_found_and_a_missing_one_named() -> None:
    assert extra_missing("json", "psycopg") is None
    assert extra_missing("json", "no_such_module_signoff", "psycopg") == "no_such_module_signoff"
    require_extra("metrics", "this", "json")  # present: nothing raised


def test_the_error_is_one_line_naming_the_extra_to_install() -> None:
    with pytest.raises(MissingExtra) as caught:
        require_extra("web", "the web inbox", "json", "no_such_module_signoff")
    assert str(caught.value) == ("the web inbox needs the 'web' extra: "
                                 "pip install 'signoff[web]'")
    assert isinstance(caught.value, SignoffError) and caught.value.exit_code == 1


@pytest.mark.parametrize(("handler", "blocked", "what", "extra"), [
    ("workloads.vm_ops.handler:handle", ("pyVmomi",), "the vm_ops workload", "vm"),
    ("workloads.vm_ops.handler:handle", ("libvirt",), "the vm_ops workload", "vm"),
    ("workloads.job_applications.handler:handle", ("playwright",),
     "the job_applications workload", "jobs"),
    ("workloads.job_applications.producer:nightly_scrape", ("aiohttp",),
     "the job_applications workload", "jobs"),
    ("workloads.briefing.handler:handle", ("jinja2",), "the briefing workload", "briefing"),
    ("workloads.builds.roblox:handle", ("aiohttp",), "the roblox_build workload", "builds"),
    ("workloads.code_changes.handler:handle", ("aiohttp",), "the code_changes workload",
     "code"),
])
def test_a_worker_whose_handler_lacks_its_extra_stops_in_one_line(
        empty_dsn: str, handler: str, blocked: tuple[str, ...], what: str,
        extra: str) -> None:
    env = {**os.environ, "DATABASE_URL": empty_dsn}
    done = signoff_without(blocked, "worker", "--capability", "x", "--handler", handler,
                           env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [extra_line(what, extra)]


def test_the_same_handler_loads_when_its_extra_is_installed() -> None:
    # The other direction: nothing absent, so the worker loads the handler and stops only
    # at the database (one that does not exist), after every start-up check.
    env = {**os.environ, "DATABASE_URL": "postgresql://postgres@127.0.0.1:5432/signoff_absent"}
    for handler in ("workloads.vm_ops.handler:handle", "workloads.builds.roblox:handle"):
        done = signoff_without((), "worker", "--capability", "x", "--handler", handler,
                               env=env)
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            "signoff: cannot connect to the database at 127.0.0.1:5432: "
            'database "signoff_absent" does not exist']


def test_metrics_listen_without_the_metrics_extra_stops_in_one_line(empty_dsn: str) -> None:
    env = {**os.environ, "DATABASE_URL": empty_dsn}
    args = ("worker", "--capability", "x", "--handler", "json:dumps", "--metrics-listen",
            "127.0.0.1:0")
    done = signoff_without(("prometheus_client",), *args, env=env)
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines() == [extra_line(
        "--metrics-listen (/healthz and /metrics)", "metrics")]
