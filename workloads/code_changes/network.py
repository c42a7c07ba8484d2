"""The sandbox's own network: pasta's argv (a network namespace that reaches the outside
but not the host's loopback) and what its start-up failures mean.

pasta (Debian's `passt`) runs the sandbox in a new network namespace whose only way out is a
tap interface it serves from the host with ordinary sockets. Host ports are forwarded into
the namespace only when named (`sandbox_host_ports`), and the gateway is not mapped to the
host, so 127.0.0.1:5432 inside is the namespace's own, empty loopback.
"""

from __future__ import annotations

import os
import re

from workloads.code_changes.settings import CodeSettings

__all__ = ["explain", "pasta_argv"]

# pasta's chatter that says nothing about why it failed: the system logger is missing, and
# as root it cannot map uid 0 into a user namespace of its own (harmless, see pasta_argv).
_NOISE = re.compile(r"^(Failed to send \d+ bytes to syslog|Couldn't write to /proc/self/uid_map"
                    r"|Couldn't configure user mappings|Couldn't write to /proc/sys/net/ipv4/"
                    r"ping_group_range|Cannot set ping_group_range)")
_NO_ROUTE = ("No external routable interface", "External interface not usable")


def pasta_argv(settings: CodeSettings) -> list[str]:
    """pasta's options up to `--`; bwrap (with --share-net) follows and shares its namespace."""
    ports = ",".join(map(str, settings.sandbox_host_ports)) or "none"
    args = [settings.sandbox_pasta, "--foreground", "--quiet", "--config-net",
            # The gateway address stays the gateway, never the host; nothing is forwarded
            # from the host in, and from inside to the host only the named TCP ports (the
            # default, "auto", would forward every port bound on the host: PostgreSQL's too).
            "--no-map-gw", "--tcp-ports", "none", "--udp-ports", "none",
            "--tcp-ns", ports, "--udp-ns", "none"]
    if os.geteuid() == 0:
        # As root, pasta cannot map uid 0 into a user namespace (the kernel asks for
        # CAP_SETFCAP, which it drops), and bwrap, unmapped, could not nest its own: so a
        # network namespace only, with bwrap's user namespace inside it as before.
        args += ["--runas", "0", "--netns-only"]
    return [*args, "--"]


def explain(stderr: str) -> str | None:
    """pasta's reason for failing, in one line (None when it said nothing useful)."""
    lines = [x.strip() for x in stderr.splitlines() if x.strip() and not _NOISE.match(x.strip())]
    if any(x.startswith(_NO_ROUTE) for x in lines):
        return "the machine has no default route to the outside (pasta: " + lines[-1] + ")"
    return lines[-1][:200] if lines else None
