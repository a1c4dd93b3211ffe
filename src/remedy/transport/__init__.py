"""The transport seam: run a command, put/get a file, stream output, on one host.

    open_transport("gpu-1", local=False, ssh_config=None, accept_new=False, connect_timeout=10)

returns an SSHTransport (asyncssh; OpenSSH config, agent, strict known_hosts) or a
LocalTransport; tests use ScriptedTransport. Every value that reaches a remote shell goes
through remedy.transport.quote.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from remedy.transport import quote

if TYPE_CHECKING:
    from remedy.transport.base import Command, CommandResult, Transport
    from remedy.transport.local import LocalTransport
    from remedy.transport.scripted import ScriptedCall, ScriptedTransport
    from remedy.transport.ssh import SSHTransport

# Names resolve on first use (PEP 562): `remedy.transport.quote` (every plan's commands) must
# not import asyncio (LocalTransport), and asyncssh + cryptography (~0.2 s) load only when SSH
# is used.
_WHERE = {
    "Command": "base",
    "CommandResult": "base",
    "Transport": "base",
    "LocalTransport": "local",
    "ScriptedCall": "scripted",
    "ScriptedTransport": "scripted",
    "SSHTransport": "ssh",
}


def __getattr__(name: str) -> Any:
    mod = _WHERE.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{mod}"), name)
    globals()[name] = value
    return value


__all__ = [
    "Command",
    "CommandResult",
    "LocalTransport",
    "SSHTransport",
    "ScriptedCall",
    "ScriptedTransport",
    "Transport",
    "open_transport",
    "quote",
]


def open_transport(
    target: str,
    *,
    local: bool = False,
    ssh_config: str | None = None,
    accept_new: bool = False,
    connect_timeout: float = 10.0,
) -> Transport:
    """A transport for `target` (`[user@]host[:port]` or an ssh_config alias).

    local=True runs on this machine without SSH (target is then only a label). Nothing
    connects until the first call.
    """
    if local:
        from remedy.transport.local import LocalTransport

        return LocalTransport(host=target or "localhost")
    from remedy.transport.ssh import SSHTransport

    return SSHTransport(
        target, ssh_config=ssh_config, accept_new=accept_new, connect_timeout=connect_timeout
    )
