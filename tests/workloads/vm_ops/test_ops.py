"""Payload checks, the allow list, plans, fingerprints and the diff (no hypervisor needed)."""

from __future__ import annotations

import pytest

from workloads.vm_ops.driver import reached
from workloads.vm_ops.ops import OpError, allowed, parse_op, plan
from workloads.vm_ops.settings import VmSettings
from workloads.vm_ops.state import VmState, diff_text

S = VmSettings(driver="libvirt", libvirt_uri="test:///default", allow_names=("db-1",),
               allow_patterns=("web-*",), allow_folders=("lab/prod",), max_cpus=8)
VM = VmState(name="web-1", power="on", cpus=2, memory_mb=2048, snapshots=("s1",),
             current_snapshot="s1", folder="lab/prod/web")


@pytest.mark.parametrize(("payload", "error"), [
    ([], "must be a JSON object"),
    ({"vm": "web-1"}, "action must be one of"),
    ({"vm": "web-1", "action": "resize", "cpus": 2, "color": "red"}, "unknown payload keys"),
    ({"vm": "-web", "action": "power_on"}, "vm must be"),
    ({"vm": "web/1", "action": "power_on"}, "vm must be"),
    ({"vm": "web 1", "action": "power_on"}, "vm must be"),
    ({"vm": "web-1", "action": "clone"}, "template must be"),
    ({"vm": "web-1", "action": "clone", "template": "web-1"}, "must differ"),
    ({"vm": "web-1", "action": "snapshot", "snapshot": "a<b>"}, "snapshot must be"),
    ({"vm": "web-1", "action": "resize"}, "resize needs cpus, memory_mb or both"),
    ({"vm": "web-1", "action": "resize", "cpus": 9}, "from 1 to 8"),
    ({"vm": "web-1", "action": "resize", "cpus": True}, "cpus must be"),
    ({"vm": "web-1", "action": "resize", "memory_mb": 16}, "from 32 to"),
    ({"vm": "web-1", "action": "reboot", "reason": "x" * 501}, "at most 500"),
    ({"vm": "web-1", "action": "delete", "delete_confirmed": True}, "unknown payload keys"),
])
def test_bad_payloads_are_refused_with_one_line(payload: object, error: str) -> None:
    with pytest.raises(OpError, match=error) as err:
        parse_op(payload, S)
    assert "\n" not in str(err.value)


def test_the_allow_list_matches_names_globs_and_folders() -> None:
    assert allowed(S, "db-1", None) and allowed(S, "web-7", None)
    assert allowed(S, "app", "lab/prod") and allowed(S, "app", "/lab/prod/x/")
    assert not allowed(S, "db-10", None) and not allowed(S, "app", "lab/production")
    assert not allowed(S, "app", "") and not allowed(S, "app", "lab")


def test_each_plan_changes_exactly_what_its_operation_says() -> None:
    def after(**payload: object) -> VmState:
        return plan(parse_op({"vm": "web-1", **payload}, S), VM).after

    assert after(action="power_off").shown() == {**VM.shown(), "power": "off"}
    assert after(action="resize", memory_mb=4096).shown() == {**VM.shown(), "memory_mb": 4096}
    assert after(action="snapshot", snapshot="s2").snapshots == ("s1", "s2")
    assert after(action="revert", snapshot="s1").current_snapshot == "s1"
    assert not plan(parse_op({"vm": "web-1", "action": "power_on"}, S), VM).changes
    assert plan(parse_op({"vm": "web-1", "action": "reboot"}, S), VM).changes
    for payload, error in [({"action": "delete"}, "power it off first"),
                           ({"action": "snapshot", "snapshot": "s1"}, "already has"),
                           ({"action": "revert", "snapshot": "s9"}, "no snapshot named s9")]:
        with pytest.raises(OpError, match=error):
            plan(parse_op({"vm": "web-1", **payload}, S), VM)
    with pytest.raises(OpError, match="no VM named web-2"):
        plan(parse_op({"vm": "web-2", "action": "power_on"}, S), VmState("web-2", exists=False))


def test_the_fingerprint_covers_the_operation_the_before_and_the_after() -> None:
    op = parse_op({"vm": "web-1", "action": "resize", "cpus": 4}, S)
    base = plan(op, VM).fingerprint
    assert plan(op, VM.changed(boot="2026-01-01")).fingerprint == base  # boot is not shown
    assert plan(op, VM.changed(memory_mb=1024)).fingerprint != base
    assert plan(op.adjusted(S, cpus=6), VM).fingerprint != base
    delete = parse_op({"vm": "web-1", "action": "delete"}, S)
    off = VM.changed(power="off")
    confirmed = parse_op({"vm": "web-1", "action": "delete"}, S, confirmed=True)
    assert plan(delete, off).fingerprint != plan(confirmed, off).fingerprint


def test_the_diff_marks_changed_lines_and_keeps_the_rest() -> None:
    text = diff_text(VM, VM.changed(cpus=4), ("a note",))
    assert "- cpus:             2\n+ cpus:             4" in text
    assert "  power:            on" in text and text.endswith("~ a note")
    clone = diff_text(VmState("web-2", exists=False), VM)
    assert "- exists:           no\n+ exists:           yes" in clone
    assert "- power:            (absent)\n+ power:            on" in clone


def test_a_result_is_reached_only_when_the_vm_shows_it() -> None:
    op = parse_op({"vm": "web-1", "action": "reboot"}, S)
    booted = VM.changed(boot="t1")
    assert not reached(op, booted, booted, booted, issued=False)
    assert reached(op, booted, booted, VM.changed(boot="t2"), issued=False)
    assert reached(op, VM, VM, VM, issued=True)
    revert = parse_op({"vm": "web-1", "action": "revert", "snapshot": "s1"}, S)
    assert not reached(revert, VM, VM, VM, issued=False)  # it was current already
    resize = parse_op({"vm": "web-1", "action": "resize", "cpus": 4}, S)
    assert not reached(resize, VM, VM.changed(cpus=4), VM, issued=True)
