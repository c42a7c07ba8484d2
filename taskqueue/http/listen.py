"""The address of an HTTP listener: `host:port` parsed, and bound ahead of serving (standard
library only, so a command checks and binds it without the web server installed)."""

from __future__ import annotations

import errno
import socket
from typing import Any

from taskqueue.errors import ConfigError


def parse_listen(value: str) -> tuple[str, int]:
    """`host:port` (IPv6 as `[::1]:9464`) as (host, port); ValueError when malformed."""
    host, sep, port = value.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"must be HOST:PORT such as 127.0.0.1:9464, not {value!r}")
    return host, int(port)


def bind_listen(listen: str) -> list[socket.socket]:
    """Bind `host:port` now, listening but not yet served, so a busy or unusable address
    fails start-up before anything is written; ObservabilityServer serves these sockets.
    ConfigError (one line naming the address) when it cannot."""
    host, port = parse_listen(listen)
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(socket.getaddrinfo(
                host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)):
            if (sock := _bind(family, kind, proto, address)) is not None:
                sockets.append(sock)
        if not sockets:
            raise OSError(errno.EADDRNOTAVAIL, "no address to bind")
    except OSError as exc:
        for sock in sockets:
            sock.close()
        raise ConfigError(f"cannot serve /healthz and /metrics on {host}:{port} "
                          f"({exc.strerror or exc})") from None
    return sockets


def _bind(family: int, kind: int, proto: int, address: Any) -> socket.socket | None:
    """A listening socket on `address`; None when it is IPv6 and the host has IPv6 off
    (skipped, as asyncio's create_server does)."""
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:  # as asyncio does: ::1 and 127.0.0.1 apart
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind(address)
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRNOTAVAIL and family == socket.AF_INET6:
            return None
        raise
    return sock
