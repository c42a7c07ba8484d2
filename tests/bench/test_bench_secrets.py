"""A benchmark repeats its command in what it prints: the password of a DSN given to it is
masked there and in its progress lines, whichever spelling of --dsn was used."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence

import pytest

from bench import benchmark, cpu_split, soak, waits
from taskqueue import MASK

PASSWORD = "hunter2-bench-" + uuid.uuid4().hex[:8]
# Trust authentication on the test server: the password is sent and ignored.
SECRET_DSN = f"postgresql://postgres:{PASSWORD}@127.0.0.1:5432/postgres"

Main = Callable[[Sequence[str] | None], int]
_RUNS: dict[str, tuple[Main, list[str]]] = {
    "waits": (waits.main, ["--tasks", "40", "--interval", "0.05"]),
    "cpu_split": (cpu_split.main, ["--tasks", "8", "--repeat", "1"]),
    "benchmark": (benchmark.main, ["--tasks", "3", "--batch", "2", "--finished-rows", "100",
                                   "--latency-tasks", "3", "--claimers", "1",
                                   "--no-checkpoint", "--only", "enqueue"]),
    "soak": (soak.main, ["--quick", "--tasks", "40", "--batch", "20",
                         "--retention", "0", "--vacuum-every", "0.001", "--probe", "2"]),
}


@pytest.mark.parametrize("spelling", ["separate", "joined"])
@pytest.mark.parametrize("module", sorted(_RUNS))
def test_a_dsn_password_never_reaches_the_output(
        module: str, spelling: str, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    main, rest = _RUNS[module]
    dsn = ["--dsn", SECRET_DSN] if spelling == "separate" else [f"--dsn={SECRET_DSN}"]
    name = f"signoff_bench_s_{uuid.uuid4().hex[:10]}"

    assert main([*dsn, "--database", name, *rest]) == 0

    out, err = capsys.readouterr()
    assert PASSWORD not in out + err + caplog.text
    command = json.loads(out)["command"]
    assert f"postgres:{MASK}@127.0.0.1" in command and "--database" in command
