"""A private OpenSSH server on loopback, for tests and benchmarks of the SSH transport.

Why in tests/ (not the package: remedy never runs it): the transport tests, the facts tests and bench/bench_facts.py all need
a real sshd with real host-key checking, and nothing in /etc/ssh may be touched. Each
server gets its own host key, client key, authorized_keys, known_hosts and ssh_config under
one directory. `SetEnv SHLVL=1` keeps bash from sourcing the account's ~/.bashrc for every
non-interactive command (bash only does that for ssh when SHLVL < 2), which on this machine
costs ~0.1 s a command (see the sandbox report's pitfall); login-shell tests are unaffected.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SSHD = "/usr/sbin/sshd"


def sshd_available() -> str | None:
    """None when a private sshd can run here, else the reason it cannot."""
    if not os.path.exists(SSHD):
        return f"{SSHD} is missing (apt-get install -y openssh-server)"
    if not shutil.which("ssh-keygen"):
        return "ssh-keygen is missing (apt-get install -y openssh-client)"
    if os.geteuid() != 0:
        return "a private sshd that logs in as root needs root here"
    return None


def free_port(addr: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((addr, 0))
        return int(s.getsockname()[1])


def keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        stdin=subprocess.DEVNULL,
    )


@dataclass
class LocalSshd:
    """One sshd on addr:port logging in as root with a generated key.

    extra: more sshd_config lines (e.g. "MaxSessions 10", "MaxStartups 100:30:200").
    """

    base: Path
    addr: str = "127.0.0.1"
    port: int = 0
    extra: list[str] = field(default_factory=list)
    alias: str = "remedy-test"
    proc: subprocess.Popen[bytes] | None = None

    @property
    def client_key(self) -> Path:
        return self.base / "id_ed25519"

    @property
    def host_key(self) -> Path:
        return self.base / "ssh_host_ed25519_key"

    @property
    def known_hosts(self) -> Path:
        return self.base / "known_hosts"

    @property
    def ssh_config(self) -> Path:
        return self.base / "ssh_config"

    def known_hosts_line(self) -> str:
        pub = (self.base / "ssh_host_ed25519_key.pub").read_text().split()
        name = f"[{self.addr}]:{self.port}" if self.port != 22 else self.addr
        return f"{name} {pub[0]} {pub[1]}\n"

    def prepare(self, *, trust: bool = True) -> None:
        self.base.mkdir(parents=True, exist_ok=True)
        if not self.host_key.exists():
            keygen(self.host_key)
        if not self.client_key.exists():
            keygen(self.client_key)
        shutil.copy(self.base / "id_ed25519.pub", self.base / "authorized_keys")
        if not self.port:
            self.port = free_port(self.addr)
        lines = [
            f"Port {self.port}",
            f"ListenAddress {self.addr}",
            f"HostKey {self.host_key}",
            f"AuthorizedKeysFile {self.base / 'authorized_keys'}",
            f"PidFile {self.base / 'sshd.pid'}",
            "UsePAM no",
            "StrictModes no",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "Subsystem sftp internal-sftp",
            "SetEnv SHLVL=1",
            "LogLevel ERROR",
            *self.extra,
        ]
        (self.base / "sshd_config").write_text("\n".join(lines) + "\n")
        self.known_hosts.write_text(self.known_hosts_line() if trust else "")
        self.ssh_config.write_text(
            f"Host {self.alias}\n"
            f"  HostName {self.addr}\n"
            f"  Port {self.port}\n"
            "  User root\n"
            f"  IdentityFile {self.client_key}\n"
            f"  UserKnownHostsFile {self.known_hosts}\n"
            "  IdentitiesOnly yes\n"
        )

    def start(self, timeout: float = 5.0) -> LocalSshd:
        if not self.host_key.exists():
            self.prepare()
        Path("/run/sshd").mkdir(parents=True, exist_ok=True)
        cfg = str(self.base / "sshd_config")
        subprocess.run([SSHD, "-t", "-f", cfg], check=True)
        log = open(self.base / "sshd.log", "ab")  # noqa: SIM115 - owned by the process
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-e", "-f", cfg], stdout=log, stderr=log, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.addr, self.port), timeout=0.2),
            ):
                return self
            if self.proc.poll() is not None:
                raise RuntimeError(f"sshd exited: {(self.base / 'sshd.log').read_text()[-500:]}")
            time.sleep(0.02)
        raise RuntimeError(f"sshd did not listen on {self.addr}:{self.port}")

    def session_pids(self) -> list[int]:
        """Per-connection sshd processes (children of the listener)."""
        if self.proc is None:
            return []
        out = subprocess.run(
            ["ps", "-o", "pid=", "--ppid", str(self.proc.pid)],
            capture_output=True,
            text=True,
        ).stdout
        return [int(x) for x in out.split()]

    def stop(self) -> None:
        if self.proc is None:
            return
        for pid in self.session_pids():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def __enter__(self) -> LocalSshd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def untrusted_sshd(tmp_path_factory: Any) -> Iterator[LocalSshd]:
    """The body of a module-scoped `sshd` fixture: a loopback sshd whose new host key no
    known_hosts holds (the known_hosts security tests), stopped after the module."""
    server = LocalSshd(tmp_path_factory.mktemp("sshd"))
    server.prepare(trust=False)
    server.start()
    yield server
    server.stop()


def facts_with_known_hosts(
    tmp_path: Path, sshd: LocalSshd, known: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`remedy ARGS facts --inventory INV` for one inventory host whose remedy_known_hosts is
    KNOWN, in a private HOME and cache (the security tests of known_hosts trust and writes)."""
    import sys

    repo = Path(__file__).resolve().parents[1]
    inv = tmp_path / "inv.ini"
    inv.write_text(
        f"[gpu]\nh ansible_host={sshd.addr} ansible_port={sshd.port} ansible_user=root "
        f"ansible_ssh_private_key_file={sshd.client_key} remedy_known_hosts={known}\n"
    )
    home = tmp_path / "home"
    home.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(repo / "src"), "HOME": str(home),
           "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_STATE_HOME": str(tmp_path / "state")}  # fmt: skip
    env.pop("SSH_AUTH_SOCK", None)
    return subprocess.run(
        [sys.executable, "-m", "remedy", *args, "--inventory", str(inv)],
        capture_output=True, text=True, env=env, timeout=60, cwd=tmp_path,
    )  # fmt: skip
