"""The system PATH remedy's own tools come from, and where a session's PATH is kept.

Why a module of its own: the transports (every command on a host), the log reader (grep, wc)
and drop-in verification (systemd-analyze) all find their helpers there, and none of them may
import the others (docs/ARCHITECTURE.md).
"""

SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""The PATH every command remedy starts on a host runs with (unless the caller's env names
one): remedy's own tools (`stat`, `readlink`, `sh`, `id`, `systemctl`...) are never found in
a directory of the session's PATH that another user owns (a venv's bin that /etc/environment
puts first would otherwise run that user's `stat` as root, inside the trust check itself)."""

SESSION_PATH_VAR = "REMEDY_SESSION_PATH"
"""Where the session's own PATH is kept, as data: discovery (`command -v nvcc`, the toolkits
on PATH) searches it, then checks what it finds with remedy.trust; the login environment
reports it as PATH. facts/agent_host.py spells the same name (it imports nothing of remedy)."""
