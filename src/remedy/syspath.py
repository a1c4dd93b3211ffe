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

BASE_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"
"""The distribution's directories of SYSTEM_PATH: what the judge of the others runs with."""

SITE_DIRS = ("/usr/local/sbin", "/usr/local/bin")
"""SYSTEM_PATH's directories an administrator fills (links to tool trees of service users
among them): each is on the PATH of remedy's commands only when SH_OWN_PATH judges it."""

# The judge of SITE_DIRS, run with PATH=BASE_PATH (its `id`, `stat`, `readlink`, `find` are the
# distribution's): prints the PATH remedy's commands get, SYSTEM_PATH less each site directory
# that holds something another user can change. A directory is kept when it, every directory
# above it, every entry of it (not a directory) and every hop of each link there (the link,
# the directories on the way to its target, the target) is owned by root or by this user and
# not writable by group or others (a root-owned sticky directory is fine: only an entry's
# owner may rename it), as remedy.trust's `trusted` and `links_trusted` judge a program; a
# link leading nowhere is judged up to its nearest existing directory. root's
# /usr/local/bin/stat, a link to uid 65534's program, ran as root inside `remedy facts`, in
# the trust check itself (redteam-28, tests/security/test_own_tools_site_dirs.py). This
# module may import nothing that holds remedy.trust's scripts (docs/ARCHITECTURE.md): the
# rule is restated here, not shared.
SH_OWN_PATH = r"""
ME=$(id -u) || exit 1
_nl='
'
_ok='|'
_own() {
  _s=$(stat -c '%u %a' -- "$1" 2>/dev/null) || return 1
  _u=${_s%% *}; _m=${_s#* }
  [ "$_u" = 0 ] || [ "$_u" = "$ME" ] || return 1
  [ -L "$1" ] && return 0
  [ $(( 0$_m & 022 )) -eq 0 ] && return 0
  [ -d "$1" ] && ! [ -L "$1" ] && [ "$_u" = 0 ] && [ $(( 0$_m & 01000 )) -ne 0 ]
}
_walk() {
  _a=$1; _r=; _n=0
  case $_ok in *"|/|"*) ;; *) _own / || return 1; _ok="$_ok/|";; esac
  while [ -n "$_a" ]; do
    case $_a in */*) _c=${_a%%/*}; _a=${_a#*/};; *) _c=$_a; _a=;; esac
    case $_c in ''|.) continue;; ..) _r=${_r%/*}; continue;; esac
    _p=$_r/$_c
    if [ -L "$_p" ]; then
      _n=$((_n + 1)); [ "$_n" -le 40 ] || return 1
      _own "$_p" || return 1
      _t=$(readlink -- "$_p" && echo .) || return 1
      _t=${_t%??}
      case $_t in ''|*"$_nl"*) return 1;; /*) _r=;; esac
      _a=$_t${_a:+/$_a}
    elif [ -e "$_p" ]; then
      case $_ok in *"|$_p|"*) ;; *) _own "$_p" || return 1; _ok="$_ok$_p|";; esac
      _r=$_p
    else
      return 0
    fi
  done
  return 0
}
_site() {
  _walk "$1" || return 1
  [ -d "$1" ] || return 0
  _b=$(find "$1" -mindepth 1 -maxdepth 1 \( -name "*$_nl*" -o \( ! -type l ! -type d \
    \( \( ! -uid 0 ! -uid "$ME" \) -o -perm /022 \) \) \) -print 2>&1) && [ -z "$_b" ] || return 1
  for _e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    [ -L "$_e" ] || continue
    [ -d "$_e" ] && continue
    _walk "$_e" || return 1
  done
  return 0
}
_keep=
for _d in @SITE@; do _site "$_d" && _keep="$_keep$_d:"; done
printf '%s\n' "$_keep@BASE@"
"""
SH_OWN_PATH = SH_OWN_PATH.replace("@SITE@", " ".join(SITE_DIRS)).replace("@BASE@", BASE_PATH)


OWN_PATH_FORMS = frozenset(
    ":".join([*keep, BASE_PATH]) for keep in ((), SITE_DIRS[:1], SITE_DIRS[1:], SITE_DIRS)
)
"""Every PATH SH_OWN_PATH can print (SYSTEM_PATH among them): a facts batch keeps the PATH
the transport gave it only when it is one of these (remedy.facts.sections.prelude)."""


def own_path_from(judged: str) -> str:
    """The PATH the judge's output names: one of the forms it prints, else BASE_PATH."""
    line = judged.strip()
    return line if line in OWN_PATH_FORMS else BASE_PATH


_OWN_PATH: list[str] = []


def own_tools_path() -> str:
    """The PATH remedy's own commands run with on this machine (judged once a process):
    SYSTEM_PATH less the site directories SH_OWN_PATH leaves out; BASE_PATH when the judge
    cannot run."""
    if not _OWN_PATH:
        import subprocess

        try:
            r = subprocess.run(
                ["/bin/sh", "-c", SH_OWN_PATH],
                env={"PATH": BASE_PATH, "LC_ALL": "C"},
                capture_output=True,
                text=True,
                timeout=30,
                check=False,
            )
            _OWN_PATH.append(own_path_from(r.stdout) if r.returncode == 0 else BASE_PATH)
        except (OSError, subprocess.SubprocessError):
            _OWN_PATH.append(BASE_PATH)
    return _OWN_PATH[0]
