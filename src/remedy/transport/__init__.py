"""The transport seam: run a command, put/get a file, stream output, on one host.

    open_transport("gpu-1", local=False, ssh_config=None, accept_new=False, connect_timeout=10)

returns an SSHTransport (asyncssh; OpenSSH config, agent, strict known_hosts) or a
LocalTransport; tests use ScriptedTransport. Every value that reaches a remote shell goes
through remedy.transport.quote.
"""

from __future__ import annotations

from remedy.transport import quote
from remedy.transport.base import Command, CommandResult, Transport
from remedy.transport.local import LocalTransport
from remedy.transport.scripted import ScriptedCall, ScriptedTransport


def __getattr__(name: str):
    # asyncssh (and cryptography) cost ~0.2 s to import: only load them when SSH is used.
    if name == "SSHTransport":
        from remedy.transport.ssh import SSHTransport

        return SSHTransport
    raise AttributeError(name)


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
        return LocalTransport(host=target or "localhost")
    from remedy.transport.ssh import SSHTransport

    return SSHTransport(
        target, ssh_config=ssh_config, accept_new=accept_new, connect_timeout=connect_timeout
    )
