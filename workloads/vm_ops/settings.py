"""The workload's settings: `[workloads.vm_ops]` of the service's config file, secrets from env.

The file is the one the service reads (`SIGNOFF_CONFIG`, or the `path` given). The vCenter
password comes only from the environment (`SIGNOFF_VCENTER_PASSWORD`). A bad setting is a
`SettingsError` naming the key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from taskqueue import ConfigError, ConfigSection, secret_register_env, workload_section

__all__ = ["PASSWORD_ENV", "SECTION", "SettingsError", "VmSettings", "load_settings"]

SECTION = "workloads.vm_ops"
CONFIG_ENV = "SIGNOFF_CONFIG"
PASSWORD_ENV = "SIGNOFF_VCENTER_PASSWORD"
_KEYS = {"driver", "vcenter_url", "user", "datacenter", "verify_tls", "ca_file",
         "resource_pool", "libvirt_uri",
         "allow_names", "allow_patterns", "allow_folders", "allow_delete", "max_cpus",
         "max_memory_mb", "task_timeout_seconds", "poll_seconds", "delete_approvals"}
# Masked in every log line, error and message of the process (registered at import, when
# the service loads the handler, and again with the environment a load is given).
secret_register_env(PASSWORD_ENV)
_PATTERN = re.compile(r"^[A-Za-z0-9_.*?\[\]-]{1,80}$")


class SettingsError(ConfigError):
    """A vm_ops setting is missing or invalid."""


# The section's field checks (the core's, shared by every workload).
_CHECK = ConfigSection(SECTION, error=SettingsError, secrets={"password": f"set {PASSWORD_ENV}"})
_fail = _CHECK.fail


@dataclass(frozen=True)
class VmSettings:
    """How to reach the hypervisor, which VMs may be touched, and the bounds of a change."""

    driver: str  # "vsphere" or "libvirt"
    vcenter_url: str = ""
    user: str = ""
    password: str = ""
    datacenter: str = ""
    verify_tls: bool = True
    ca_file: str = ""  # a PEM file of CA certificates to trust (empty: the system's)
    resource_pool: str = ""  # clones go here: a path below the datacenter's host folder
    libvirt_uri: str = ""
    allow_names: tuple[str, ...] = ()
    allow_patterns: tuple[str, ...] = ()  # shell-style globs on the VM's name
    allow_folders: tuple[str, ...] = ()  # vSphere folder paths below the datacenter's vm folder
    allow_delete: bool = True
    max_cpus: int = 32
    max_memory_mb: int = 262144
    task_timeout: float = 600.0
    poll_seconds: float = 0.5
    # Four eyes: distinct people who must approve a delete (1 to 10; 2 for four eyes).
    delete_approvals: int = 1


def load_settings(path: str | os.PathLike[str] | None = None,
                  env: Mapping[str, str] | None = None) -> VmSettings:
    """Read the section from the config file (`$SIGNOFF_CONFIG` by default) and check it."""
    env = os.environ if env is None else env
    secret_register_env(PASSWORD_ENV, env=env)
    raw, file = workload_section("vm_ops", path, env)
    if file is None:
        raise SettingsError(f"{SECTION}: no config file (set {CONFIG_ENV} or pass --config)")
    if not raw:
        raise SettingsError(f"{file}: [{SECTION}] is missing")
    return build(raw, env)



def build(raw: Mapping[str, Any], env: Mapping[str, str]) -> VmSettings:
    """Settings from the section's table (already parsed) and the environment."""
    _CHECK.known(raw, _KEYS)
    driver = raw.get("driver")
    if driver not in ("vsphere", "libvirt"):
        raise _fail("driver", f"must be \"vsphere\" or \"libvirt\", not {driver!r}")
    settings = VmSettings(
        driver=driver, datacenter=_CHECK.text(raw, "datacenter", "", empty=True),
        verify_tls=_CHECK.flag(raw, "verify_tls", True),
        allow_delete=_CHECK.flag(raw, "allow_delete", True),
        allow_names=_names(raw, "allow_names"), allow_patterns=_names(raw, "allow_patterns"),
        allow_folders=_names(raw, "allow_folders"),
        max_cpus=int(_CHECK.positive(raw, "max_cpus", 32, whole=True)),
        max_memory_mb=int(_CHECK.positive(raw, "max_memory_mb", 262144, whole=True)),
        task_timeout=float(_CHECK.seconds(raw, "task_timeout_seconds", 600.0)),
        poll_seconds=float(_CHECK.seconds(raw, "poll_seconds", 0.5)),
        delete_approvals=_approvals(raw, "delete_approvals"),
    )
    if not (settings.allow_names or settings.allow_patterns or settings.allow_folders):
        raise _fail("allow_names", "give allow_names, allow_patterns or allow_folders: "
                                   "no VM may be touched without an allow list")
    if driver == "libvirt":
        return replace(settings, libvirt_uri=_CHECK.text(raw, "libvirt_uri", required=True))
    url = _CHECK.text(raw, "vcenter_url", required=True)
    if not url.startswith("https://"):
        raise _fail("vcenter_url", f"must start with https:// (vCenter is HTTPS only), not {url!r}")
    return replace(settings, vcenter_url=url, user=_CHECK.text(raw, "user", required=True),
                   password=env.get(PASSWORD_ENV, ""), ca_file=_ca_file(raw, settings),
                   resource_pool=_CHECK.text(raw, "resource_pool", "", empty=True).strip("/"))


def _ca_file(raw: Mapping[str, Any], settings: VmSettings) -> str:
    path = _CHECK.text(raw, "ca_file", "", empty=True)
    if path and not settings.verify_tls:
        raise _fail("ca_file", "is only read with verify_tls = true")
    if path and not (os.path.isabs(path) and os.path.isfile(path)):
        raise _fail("ca_file", f"must be the absolute path of a readable file, not {path!r}")
    return path


def _names(raw: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(key, "must be an array of strings")
    for item in value:
        if key != "allow_folders" and not _PATTERN.match(item):
            raise _fail(key, f"{item!r} is not a VM name or glob (letters, digits, . _ - * ? [])")
    return tuple(v.strip().strip("/") if key == "allow_folders" else v for v in value)


def _approvals(raw: Mapping[str, Any], key: str) -> int:
    """A count of distinct approvers (four eyes): a whole number from 1 to 10."""
    value = int(_CHECK.positive(raw, key, 1, whole=True))
    if value > 10:
        raise _fail(key, f"must be at most 10, not {value}")
    return value
