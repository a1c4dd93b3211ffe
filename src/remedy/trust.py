"""Execute only what is trusted: the one check before remedy runs a binary found on a host.

remedy runs as root on hosts where service users own venvs (pip wheels carry nvcc, ptxas,
Triton's ptxas) and CI jobs write /tmp. Running such a binary as root, even `--version`,
hands root to whoever can write it or any directory above it. So a binary runs only when it
and every directory above its real path are owned by root or by the user remedy runs as and
are not writable by group or others; otherwise remedy reads what it can without running it
(version.json, METADATA) and says `not executed: PATH owned by USER (uid N)`.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping

from remedy.childenv import LD_B_KEYWORDS as _LD_KW
from remedy.childenv import LD_KEYWORD_VARS as _LD_KW_VARS
from remedy.childenv import RUN_LOAD_WRITE_OPTIONS as _RLW_EXACT
from remedy.childenv import RUN_LOAD_WRITE_PREFIXES as _RLW_PREFIX
from remedy.childenv import flag_pieces as _flag_pieces
from remedy.transport.base import Transport
from remedy.transport.quote import join

# (its variables are _t*: callers loop over s, r, d, f)
# trusted FILE: 0 when FILE's real path and every directory above it are owned by root or by
# this user and not writable by group or others (a root-owned sticky directory such as /tmp is
# safe: only an entry's owner may rename it); RP is then the real path to execute (a link
# swapped after the check cannot redirect it: every directory on RP is trusted). Else 1, WHY.
# Cost: one readlink and one stat for the whole chain (a stat per level was ~12 processes a
# binary). Directories found trusted are remembered in _tok for the rest of the script, so the
# next binary in the same tree stats only what is new: a trusted directory (and so all above
# it) can only be changed by root or this user. Paths holding `|` are never remembered (the
# list's separator); when stat cannot read some path the slow walk says exactly which.
# AS (a uid, or -, never read from the environment): the user the code will run as (a probe run under a unit's User=): files
# that user owns hand it nothing it does not have, so they count as trusted too.
SH_TRUST = r"""
ME=$(id -u 2>/dev/null) || ME=0
AS=-
_tok=
_tnl='
'
_tcheck() {
  _tu=${_ts%% *}; _ta=${_ts#* }; _tn=${_ta#* }; _ta=${_ta%% *}
  if [ "$_tu" != 0 ] && [ "$_tu" != "$ME" ] && [ "$_tu" != "$AS" ]; then WHY="$_tp owned by $_tn (uid $_tu)"; return 1; fi
  if [ $(( 0$_ta & 022 )) -ne 0 ]; then
    if ! { [ -d "$_tp" ] && [ "$_tu" = 0 ] && [ $(( 0$_ta & 01000 )) -ne 0 ]; }; then
      WHY="$_tp writable by group or others (mode $_ta)"; return 1
    fi
  fi
  return 0
}
trusted() {
  WHY=; RP=
  _tr=$(readlink -f -- "$1" 2>/dev/null)
  [ -n "$_tr" ] || { WHY="$1 cannot be resolved"; return 1; }
  RP=$_tr
  set --
  while :; do
    case $_tr in *'|'*) ;; *) case $_tok in *"|$_tr|"*) break;; esac;; esac
    set -- "$@" "$_tr"
    [ "$_tr" = / ] && break
    _tr=${_tr%/*}; [ -n "$_tr" ] || _tr=/
  done
  [ $# -gt 0 ] || return 0
  if _tl=$(stat -c '%u %a %U' -- "$@" 2>/dev/null); then
    _tv=
    for _tp in "$@"; do
      case $_tl in
        *"$_tnl"*) _ts=${_tl%%"$_tnl"*}; _tl=${_tl#*"$_tnl"};;
        *) _ts=$_tl; _tl=;;
      esac
      [ -n "$_ts" ] || { _tv=-; break; }
      _tcheck || return 1
      case $_tp in *'|'*) ;; *) _tv="$_tv|$_tp|";; esac
    done
    if [ "$_tv" != - ] && [ -z "$_tl" ]; then _tok=$_tok$_tv; return 0; fi
  fi
  for _tp in "$@"; do
    _ts=$(stat -c '%u %a %U' -- "$_tp" 2>/dev/null) || { WHY="$_tp cannot be checked (no stat)"; return 1; }
    _tcheck || return 1
  done
  return 0
}
"""


def _trust_script(as_uid: int | None) -> str:
    """SH_TRUST for code that runs as root (as_uid None) or as that uid (setpriv)."""
    return SH_TRUST if as_uid is None else SH_TRUST + f"AS={int(as_uid)}\n"


# links_trusted PATH: 0 when every link met resolving PATH is owned by root or this user and
# sits in a directory that `trusted` accepts; else 1, WHY. `trusted` alone follows a link
# wherever it points: a link another user owns (in a sticky /tmp, or in their own home that
# `sudo` kept as HOME) chooses which trusted directory a path means, and can be pointed
# elsewhere after the check. Every hop is judged, as the kernel resolves PATH one name at a
# time: a link in a directory part, and each link of a chain (root's /usr/local/bin/ninja ->
# /srv/shared/ninja -> /usr/bin/ninja, /srv/shared group-writable: the real path was root's,
# and the group re-pointed the middle link after the check; redteam-28). Components that do
# not exist yet end the walk (mkdir -p makes them real directories). A link judged is
# remembered in _tlk (its directory is trusted: only root or this user can change it).
SH_LINKS = r"""
_tlk=
links_trusted() {
  WHY=; _la=$1; _lr=; _ln=0
  case $_la in /*) ;; *) _la=$PWD/$_la;; esac
  while [ -n "$_la" ]; do
    case $_la in */*) _lc=${_la%%/*}; _la=${_la#*/};; *) _lc=$_la; _la=;; esac
    case $_lc in ''|.) continue;; ..) _lr=${_lr%/*}; continue;; esac
    _lp=$_lr/$_lc
    if [ -L "$_lp" ]; then
      _ln=$((_ln + 1))
      [ "$_ln" -le 40 ] || { WHY="$1 leads through more than 40 links"; return 1; }
      case $_tlk in *"|$_lp|"*) ;; *)
        _lu=$(stat -c %u -- "$_lp" 2>/dev/null) || { WHY="$_lp cannot be checked (no stat)"; return 1; }
        if [ "$_lu" != 0 ] && [ "$_lu" != "$ME" ] && [ "$_lu" != "$AS" ]; then
          WHY="$_lp is a link owned by uid $_lu: not followed"; return 1
        fi
        case $_tok in *"|${_lr:-/}|"*) ;; *)
          trusted "${_lr:-/}" || { WHY="$_lp is a link in a directory others can change ($WHY)"; return 1; };;
        esac
        case $_lp in *'|'*) ;; *) _tlk="$_tlk|$_lp|";; esac;;
      esac
      _lt=$(readlink -- "$_lp" && echo .) || { WHY="$_lp cannot be read"; return 1; }
      _lt=${_lt%??}
      case $_lt in *"$_tnl"*|'') WHY="$_lp leads to a name with a line break"; return 1;; /*) _lr=;; esac
      _la=$_lt${_la:+/$_la}
    elif [ -e "$_lp" ]; then
      _lr=$_lp
    else
      break
    fi
  done
  return 0
}
"""


def trust_argv(
    paths: Iterable[str], pythons: Iterable[str] = (), as_uid: int | None = None
) -> list[str] | None:
    """The check untrusted_reason runs, as one argv (exit 3 and `not executed: WHY` when a
    path may not run): for a playbook task too. None when there is nothing to check.
    as_uid: the code will run as that user (setpriv), so what it owns is trusted as well."""
    pythons = [py for py in pythons if py]
    args = [p for p in paths if p]
    for py in pythons:
        env = posixpath.dirname(posixpath.dirname(py))
        args += [py, posixpath.dirname(py), env]
    if not args:
        return None
    # an interpreter runs by its path as written (`ENV/bin/python -m pip`), not the checked
    # real path: a link on it another user owns could be re-pointed after the check
    script = (
        _trust_script(as_uid)
        + SH_LINKS
        + 'for p in "$@"; do trusted "$p" || { printf \'not executed: %s\\n\' "$WHY"; exit 3; }; done\n'
        + "for p in "
        + " ".join(join([py]) for py in pythons)
        + '; do links_trusted "$p" || { printf \'not executed: %s\\n\' "$WHY"; exit 3; }; done\n'
        + "for e in "
        + " ".join(join([posixpath.dirname(posixpath.dirname(py))]) for py in pythons)
        + '; do for s in "$e"/lib/python3*/site-packages; do [ -d "$s" ] || continue; '
        + 'trusted "$s" || { printf \'not executed: %s\\n\' "$WHY"; exit 3; }; done; done\n'
    )
    return ["sh", "-c", script, "sh", *args]


async def untrusted_reason(
    transport: Transport,
    paths: Iterable[str],
    *,
    pythons: Iterable[str] = (),
    as_uid: int | None = None,
) -> str | None:
    """None when every path may be executed (or read as code) here; else why not.

    pythons: interpreters whose environment runs too (its bin dir and site-packages are code
    the interpreter imports), checked with the interpreter itself. as_uid: the code will run
    as that user, not root, so what it owns is trusted as well."""
    argv = trust_argv(paths, pythons, as_uid)
    if argv is None:
        return None
    r = await transport.run(argv, timeout=30)
    if r.exit_status == 0:
        return None
    return (
        r.text().strip().splitlines()[-1]
        if r.text().strip()
        else "not executed: trust check failed"
    )


def login_value_paths(values: Mapping[str, str]) -> list[str]:
    """The host paths a login-scope value names (CUDA_HOME=/p, PATH=/a:/b): each absolute
    entry of a `:` list. Root's own later sessions read them (/etc/environment, profile.d).
    /dev/null (a bound "no toolkit" value, mode 0666) names no code and is left out."""
    return list(
        dict.fromkeys(
            e
            for v in values.values()
            for e in v.split(":")
            if e.startswith("/") and e != "/dev/null"
        )
    )


async def untrusted_login_value(transport: Transport, paths: Iterable[str]) -> str | None:
    """None when every path may be named in the login environment every user (root too)
    reads; else why not. A path, or its nearest existing directory when it does not exist
    yet, must pass `trusted`, and no link on it as written may be another user's: a
    CUDA_HOME in a venv uid 1000 owns made root's next build run that user's nvcc."""
    args = [p for p in dict.fromkeys(paths) if p.startswith("/")]
    if not args:
        return None
    script = (
        SH_TRUST
        + SH_LINKS
        + 'for p in "$@"; do q=$p; while [ ! -e "$q" ] && [ ! -L "$q" ] && [ "$q" != / ]; do '
        + 'q=${q%/*}; [ -n "$q" ] || q=/; done\n'
        + 'trusted "$q" && links_trusted "$p" || '
        + "{ printf 'not trusted: %s\\n' \"$WHY\"; exit 3; }; done\n"
    )
    r = await transport.run(["sh", "-c", script, "sh", *args], timeout=30)
    if r.exit_status == 0:
        return None
    text = r.text().strip()
    return text.splitlines()[-1] if text else "not trusted: trust check failed"


async def untrusted_on_path(
    transport: Transport,
    names: Iterable[str],
    search_path: str | None,
    *,
    as_uid: int | None = None,
    every_entry: bool = False,
) -> str | None:
    """None when each bare command name (`c++`, $CXX, the gcc nvcc calls) that the host would
    find on search_path, if any, may be executed; else why not. A name found nowhere runs
    nothing (the step then fails as it would anyway); one found is checked like any binary.
    search_path None: the PATH a command the transport starts gets (a step's).
    every_entry: every entry of every directory on that PATH is judged too (SH_PATH_ENTRIES:
    what a build runs by name is more than any list of names)."""
    args = [n for n in dict.fromkeys(names) if n and "/" not in n]
    if not args and not every_entry:
        return None
    bad = [n for n in args if n.startswith("-") or "\n" in n]
    if bad:
        return f"not executed: {bad[0]!r} is no command name"
    script = (
        _trust_script(as_uid)
        + SH_LINKS
        + ("SP=$PATH; " if search_path is None else "SP=$1; ")
        + 'shift; for n in "$@"; do x=$(PATH=$SP; command -v "$n" 2>/dev/null) || continue\n'
        + "case $x in /*) ;; *) continue;; esac\n"
        + 'trusted "$x" && links_trusted "$x" || '
        + '{ printf \'not executed: %s on PATH is %s\\n\' "$n" "$WHY"; exit 3; }\n'
        + "done\n"
    )
    if every_entry:
        script += (
            SH_PATH_ENTRIES
            + "_lo=$IFS; IFS=:; set -f; set -- $SP; set +f; IFS=$_lo\n"
            + 'path_entries_trusted "$@" || { printf \'not executed: %s\\n\' "$WHY"; exit 3; }\n'
        )
    sp = "-" if search_path is None else search_path
    r = await transport.run(["sh", "-c", script, "sh", sp, *args], timeout=30)
    if r.exit_status == 0:
        return None
    text = r.text().strip()
    return text.splitlines()[-1] if text else "not executed: trust check failed"


# Variables that name where the programs a probe starts look for more code: a trusted gcc
# runs `as` and `ld` from PATH, ld.so loads LD_PRELOAD and searches LD_LIBRARY_PATH, Python
# imports PYTHONPATH before its standard library, nvcc reads -ccbin from NVCC_*_FLAGS, and
# a built kernel module that a probe then runs is compiled from the include paths. A unit's
# Environment=/EnvironmentFile= (the file often the service user's) sets them.
CODE_DIR_VARS = (
    "PATH",
    "LD_LIBRARY_PATH",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "COMPILER_PATH",
    "LIBRARY_PATH",
    "CPATH",
    "C_INCLUDE_PATH",
    "CPLUS_INCLUDE_PATH",
    "PYTHONPYCACHEPREFIX",  # Python reads (and writes) the bytecode it runs there
    # Python's user site (~/.local/lib/pythonX.Y/site-packages, its .pth files run at start-up)
    # and every tool's ~ configuration: a unit's HOME of another user made root's probe
    # python run that user's .pth
    "HOME",
    # where gcc and nvcc keep their intermediate files (created O_EXCL, then opened again by
    # name by cc1 and as) and Python's tempfile puts its own: the directory's owner renamed a
    # link over a new name and root's cc1 wrote its output into the link's target
    # (tests/security/test_inherited_tmpdir.py, for a probe and for a step)
    "TMPDIR",
    "TEMP",
    "TMP",
    # the consumers' own JIT code (redteam-21, read in torch 2.14.1, FlashInfer 0.6.11.post1):
    # FlashInfer's `flashinfer.jit` dlopens `$CUDA_LIB_PATH/libcudart.so.12` at import (as
    # root, in every FlashInfer probe); torch's cpp_extension adds `$CUDA_INC_PATH` and
    # `$CUDNN_HOME/include` (`/lib64`) to every CUDA extension it builds, then loads it
    "CUDA_LIB_PATH",
    "CUDA_INC_PATH",
    # the toolkit: every consumer runs $CUDA_HOME/bin/nvcc (tvm-ffi's and FlashInfer's
    # get_cuda_path, torch's _find_cuda_home, CUDA_PATH after it); uid 65534's nvcc ran
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDNN_HOME",
    "CUDNN_PATH",
    # Triton 3.8.0's launcher build (a probe that launches a Triton kernel, as root): it links
    # `-L$TRITON_LIBCUDA_PATH -lcuda` (a libcuda.so's SONAME becomes the launcher's DT_NEEDED)
    # and compiles with `-I` each of TRITON_CUDART_PATH, TRITON_CUDACRT_PATH, then loads it
    "TRITON_LIBCUDA_PATH",
    "TRITON_CUDART_PATH",
    "TRITON_CUDACRT_PATH",
)
# variables that make a tool the probe runs write a file where they say, as the probe's user:
# gcc/g++ (and nvcc's host compiler) write make dependencies to DEPENDENCIES_OUTPUT /
# SUNPRO_DEPENDENCIES, taking the target from the value's second word
# (`/etc/cron.d/x * * * * * root CMD #` is a cron line); ld.so writes LD_DEBUG_OUTPUT.PID
WRITE_FILE_VARS = ("DEPENDENCIES_OUTPUT", "SUNPRO_DEPENDENCIES", "LD_DEBUG_OUTPUT")
# NVCC_CCBIN: the host compiler (file or dir) nvcc runs when no -ccbin names one (CUDA 13's
# nvcc, for real: the workload's environment naming another user's `g++` ran it as root)
# TRITON_*_PATH: the ptxas (cuobjdump, nvdisasm) Triton runs instead of its own, read from
# the environment (remedy's own env-triton-ptxas action sets them): triton-compile runs it
# (ptxas; cuobjdump for a TRITON_KERNEL_DUMP's .sass: tests/security/test_triton_tool_env.py);
# TRITON_LIBHIP_PATH: the libamdhip64 Triton's AMD driver dlopens
CODE_FILE_VARS = ("LD_PRELOAD", "LD_AUDIT", "PYTHONSTARTUP", "BASH_ENV", "ENV", "NVCC_CCBIN",
                  "TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH",
                  "TRITON_NVDISASM_PATH", "TRITON_LIBHIP_PATH")  # fmt: skip
# flags nvcc reads from the environment, and the ones remedy's probes put on the command line
# as the consumer does (FlashInfer's, shlex-split): `-ccbin DIR` names the host compiler,
# `-B DIR` (also inside -Xcompiler=/--compiler-options=) where gcc finds `as`, `ld`, `collect2`
FLAG_VARS = (
    "NVCC_PREPEND_FLAGS",
    "NVCC_APPEND_FLAGS",
    "FLASHINFER_EXTRA_CUDAFLAGS",
    "FLASHINFER_EXTRA_LDFLAGS",
    "FLASHINFER_EXTRA_CFLAGS",  # FlashInfer's `$cxx` compile rule (build_cflags)
)
# command lines the consumers' JIT code reads from the environment and runs (redteam-21: a
# probe as root ran uid 65534's program named by each of CXX, CC): torch's cpp_extension
# (`get_cxx_compiler`: CXX, also run for its ABI check; `-ccbin $CC` for nvcc; PYTORCH_NVCC),
# tvm-ffi's `build_ninja` (`cxx = $CXX`, SGLang's jit_kernel), FlashInfer's `cpp_ext`
# (CXX, `-ccbin $CC`, FLASHINFER_NVCC, FLASHINFER_*_LAUNCHER). tvm-ffi and FlashInfer write
# the value into a ninja file unquoted, which ninja hands to `/bin/sh -c`: shell syntax in it
# is refused; each word holding `/` is checked as a program, each option as in FLAG_VARS, a
# bare name is found on PATH (whose dirs are checked). CUDAHOSTCXX is read by none of them
# (CMake's; nvcc reads NVCC_CCBIN): tests/security/test_probe_compiler_env.py pins the list.
COMMAND_VARS = ("CC", "CXX", "PYTORCH_NVCC", "FLASHINFER_NVCC", "FLASHINFER_CXX_LAUNCHER",
                "FLASHINFER_NVCC_LAUNCHER")  # fmt: skip
_COMMAND_CHARS = re.compile(r"[A-Za-z0-9_./+=,:@%-]+(?:[ \t]+[A-Za-z0-9_./+=,:@%-]+)*")
_DIR_FLAGS = ("-ccbin", "--compiler-bindir", "-B")
# what nvcc runs from a host-compiler DIRECTORY (`-ccbin DIR`, NVCC_CCBIN=DIR, `-ccbin $CC`):
# CUDA 13.0's nvcc, traced, ran DIR/gcc and DIR/g++ and looked up no other name in DIR. Only
# the directory was checked: a root-owned one holding uid 65534's g++ (or root's link to it)
# ran it as root (redteam-22, tests/security/test_ccbin_dir.py)
HOST_CC_NAMES = ("gcc", "g++")
# include and library dirs: what they hold is compiled or linked into what the probe runs
# (CPATH and LIBRARY_PATH are checked for the same reason)
_INC_FLAGS = ("-isystem", "-idirafter", "-iquote", "-I", "-L")
# options of gcc/g++, ld (through -Wl, and -Xlinker) and nvcc that run a program (-wrapper,
# a specs file's `*linker:`, nvcc --run), load code (-fplugin), read more options from a file
# (@FILE, --options-file) or write a file where they say (-o, -MF, -Wl,-Map=, --keep-dir...):
# a flag piece that is one (exactly, or starting with one of _RLW_PREFIX) is refused, never
# checked: root's `c++` ran uid 65534's -wrapper and specs linker, and wrote -Wl,-Map=FILE
# (the lists live in remedy.childenv, the lower layer, which judges a step's CFLAGS by them)


# the compilers the consumers' JIT code runs by a bare name found on PATH when the environment
# names none: nvcc's host gcc/g++, `c++` (FlashInfer's and torch's CXX default), `cc`/`gcc`
# (Triton's launcher), ninja (torch, tvm-ffi, FlashInfer), nvcc (`which nvcc` without a
# CUDA_HOME). A root-owned PATH dir holding root's link to uid 65534's gcc and c++ passed the
# PATH-dir check, and flashinfer-jit-build ran them as root (redteam-22)
JIT_PATH_NAMES = ("gcc", "g++", "cc", "c++", "ninja", "nvcc")
# what a checked gcc itself finds on PATH: gcc 12 (Debian) looks for `as` and `ld` in its own
# libexec dirs, then on PATH (`gcc -print-prog-name=as` is `as`); a root-owned PATH dir
# holding uid 65534's `as` and `ld` (or root's links to them) made root's link-probe run
# them (redteam-23, tests/security/test_gcc_prefix_files.py). Every probe that names a
# search path (one that compiles) judges them by name too
GCC_PATH_NAMES = ("as", "ld")
# what a step that compiles (remedy.operations' `runs_compiler`: the link-layout stub's `cc`,
# a pip-install's source build, an apt-install's dkms build) finds on the step's own PATH (the
# fixed system PATH): the compiler drivers it runs by name and gcc's `as` and `ld`. A
# root-owned /usr/local/bin holding uid 65534's `as` (or root's link to it) made the stub's
# `cc` run it as root (redteam-24, tests/security/test_login_gcc_dirs.py): the runner refuses
# such a plan before anything changes, as a probe refuses to run
STEP_PATH_NAMES = ("cc", "gcc", "c++", "g++", *GCC_PATH_NAMES)


# on_path_trusted NAME...: 0 when what the shell's PATH finds for each bare NAME (none found:
# nothing runs) passes `trusted`; else 1, WHY. For the exported playbook's first task
# (step_path_judgement): no comment here holds a quote mark, since Ansible splits a raw
# task's free-form text on them
SH_ON_PATH = r"""
on_path_trusted() {
  for _n in "$@"; do
    _x=$(command -v "$_n" 2>/dev/null) || continue
    case $_x in /*) ;; *) continue;; esac
    trusted "$_x" && links_trusted "$_x" || { WHY="$_n on PATH is $WHY"; return 1; }
  done
  return 0
}
"""


# path_entries_trusted DIR...: 0 when every entry of each absolute DIR on a PATH (a file,
# or what a link there leads to: not recursed) passes the owner and mode rule of `trusted`,
# and so does the directory every link's target sits in (its nearest existing one for a link
# leading nowhere: who could create the target); else 1, WHY (`NAME on PATH is ...`). A build
# runs far more by name than any list holds (setuptools' `x86_64-linux-gnu-gcc` on Debian's
# Python, ninja, cmake, make, dkms and what the kernel's Makefile runs, clang, ld.gold): a
# root-owned /usr/local/bin holding root's link to uid 65534's `ninja` (or any of those) made
# a pip-install step's build run it as root (redteam-27, tests/security/test_step_path_programs.py).
# find -L is not used: a link to a directory on PATH (/usr/bin/X11 -> .) is a loop to it.
SH_PATH_ENTRIES = (
    SH_LINKS
    + r"""
# links_hops_trusted DIR: every hop of every link in DIR (a real path `trusted` accepted),
# round by round (at most 40; one find a round): each link owned by root, this user or AS,
# each directory a later hop lies in passing trusted and links_trusted (once: _px lists the
# ones judged). A group-writable /srv/shared holding the middle link of a chain, a link of
# uid 65534 in a root sticky dir, a link of theirs in a directory part: refused
links_hops_trusted() {
  _pk=0; _pj=$1; _pf="-mindepth 1 -maxdepth 1"
  while [ $# -gt 0 ]; do
    _pk=$((_pk + 1))
    [ "$_pk" -le 40 ] || { WHY="a link on PATH (in $_pj) leads through more than 40 links"; return 1; }
    if [ "$_pk" -gt 1 ]; then
      for _pl in "$@"; do
        _pq=${_pl%/*}; [ -n "$_pq" ] || _pq=/
        case $_px in *"|$_pq|"*) continue;; esac
        _px="$_px$_pq|"
        trusted "$_pq" && links_trusted "$_pq" ||
          { WHY="a link on PATH (in $_pj) leads through $_pl: $WHY"; return 1; }
      done
    fi
    set -f
    _pt=$(find "$@" $_pf -type l \( \( \( ! -uid 0 ! -uid "$ME" ! -uid "$_pu" \) -o \
      -lname "*$_tnl*" \) -printf '!%p\n' -o -printf '%h/\n%l\n' \) 2>/dev/null)
    set +f; _pf="-maxdepth 0"
    IFS=$_tnl; set -f; set -- $_pt; set +f; IFS=$_lo
    _ph=
    while [ $# -ge 1 ]; do
      case $1 in '!'*)
        _tp=${1#!}; _lu=$(stat -c %u -- "$_tp" 2>/dev/null)
        WHY="a link on PATH (in $_pj) leads through $_tp, a link owned by uid $_lu"; return 1;;
      esac
      [ $# -ge 2 ] || break
      _pq=$1; _lt=$2; shift 2
      case $_lt in /*) ;; *) _lt=$_pq$_lt;; esac
      if [ -e "$_lt" ] || [ -L "$_lt" ]; then _ph=$_ph$_lt$_tnl
      else links_trusted "$_lt" || { WHY="a link on PATH (in $_pj) leads to $_lt: $WHY"; return 1; }
      fi
    done
    IFS=$_tnl; set -f; set -- $_ph; set +f; IFS=$_lo
  done
  return 0
}
path_entries_trusted() {
  _pu=$ME; [ "$AS" = - ] || _pu=$AS; _px='|'
  for _pd in "$@"; do
    case $_pd in /*) ;; *) continue;; esac
    [ -d "$_pd" ] || continue
    trusted "$_pd" || { WHY="the PATH directory $_pd is $WHY"; return 1; }
    _pr=$RP; _px="$_px$_pr|"
    _pb=$(find "$_pr" -mindepth 1 -maxdepth 1 \( -name "*$_tnl*" -o -lname "*$_tnl*" \) -print 2>&1) &&
      [ -z "$_pb" ] || { WHY="$_pr cannot be walked, or holds a name with a line break"; return 1; }
    _pl=$(find "$_pr" -mindepth 1 -maxdepth 1 -type l -exec readlink -m -- {} + 2>&1) ||
      { WHY="$_pr cannot be walked: ${_pl##*$_tnl}"; return 1; }
    _lo=$IFS; IFS=$_tnl; set -f; set -- $_pl; set +f; IFS=$_lo
    _pb=$( { find "$_pr" -mindepth 1 -maxdepth 1 ! -type l ! -type d \( \( ! -uid 0 ! -uid "$ME" \
      ! -uid "$_pu" \) -o -perm /022 \) -print
      [ $# -eq 0 ] || find "$@" -maxdepth 0 ! -type d \( \( ! -uid 0 ! -uid "$ME" ! -uid "$_pu" \) \
      -o -perm /022 \) -print; } 2>/dev/null)
    if [ -n "$_pb" ]; then
      _tp=${_pb%%"$_tnl"*}; _pn=${_tp##*/}
      case $_tp in "$_pr"/*) ;; *)
        for _pl in "$_pr"/* "$_pr"/.[!.]*; do
          [ -L "$_pl" ] && [ "$(readlink -m -- "$_pl")" = "$_tp" ] && { _pn=${_pl##*/}; break; }
        done;;
      esac
      _ts=$(stat -c '%u %a %U' -- "$_tp" 2>/dev/null) && ! _tcheck && { WHY="$_pn on PATH is $WHY"; return 1; }
      WHY="$_pn on PATH is $_tp, writable by group or others"; return 1
    fi
    _pv='|'
    for _pl in "$@"; do
      _pq=${_pl%/*}; [ -n "$_pq" ] || _pq=/
      case $_pv in *"|$_pq|"*) continue;; esac
      _pv="$_pv$_pq|"
      while [ ! -e "$_pq" ] && [ "$_pq" != / ]; do _pq=${_pq%/*}; [ -n "$_pq" ] || _pq=/; done
      trusted "$_pq" || { WHY="a link on PATH (in $_pr) leads into $WHY"; return 1; }
    done
    links_hops_trusted "$_pr" || return 1
  done
  return 0
}
"""
)


def step_path_judgement(compiles: bool = True) -> str:
    """sh lines (after SH_TRUST) that exit 3 printing `not executed: NAME on PATH is WHY`
    when the shell's PATH finds one of STEP_PATH_NAMES that `trusted` refuses (compiles: a
    step compiles; redteam-26), then when an entry of a directory on that PATH is one
    (SH_PATH_ENTRIES; every plan: a link-layout step's `ln` comes from there, redteam-27):
    what the runner asks of a plan (untrusted_on_path), for the exported playbook's judging
    task, which runs before any step with the steps' PATH."""
    names = (
        "on_path_trusted "
        + join(list(STEP_PATH_NAMES))
        + " || { printf 'not executed: %s\\n' \"$WHY\"; exit 3; }\n"
    )
    return (
        SH_ON_PATH
        + SH_PATH_ENTRIES
        + (names if compiles else "")
        + "_lo=$IFS; IFS=:; set -f; set -- $PATH; set +f; IFS=$_lo\n"
        + 'path_entries_trusted "$@" || { printf \'not executed: %s\\n\' "$WHY"; exit 3; }\n'
    )


def env_command_names(env: Mapping[str, str]) -> list[str]:
    """The bare command names env makes a consumer find on PATH: the words of COMMAND_VARS
    (`CXX=g++-12`, `FLASHINFER_NVCC_LAUNCHER=ccache`) and a bare `-ccbin NAME`; each is then
    checked where PATH finds it (`untrusted_on_path`), as env_code_paths checks a path."""
    import shlex

    out: list[str] = []
    for var in COMMAND_VARS:
        out += [w for w in env.get(var, "").split() if "/" not in w and not w.startswith("-")]
    for var in (*FLAG_VARS, *COMMAND_VARS):
        try:
            words = shlex.split(env.get(var, ""))
        except ValueError:
            continue  # refused by env_code_paths
        pieces = _flag_pieces(words)
        out += [
            b
            for a, b in zip(pieces, pieces[1:], strict=False)
            if a in _DIR_FLAGS and a != "-B" and b and "/" not in b and not b.startswith("-")
        ]
    return list(dict.fromkeys(out))


def env_code_paths(env: Mapping[str, str]) -> tuple[list[tuple[str, str]], str | None]:
    """([(variable, absolute path)], None) for every location in env that code is loaded or
    run from; (…, why) when one cannot be checked (a relative entry, unparsable flags)."""
    import shlex

    out: list[tuple[str, str]] = []

    def add(var: str, path: str) -> str | None:
        if not path:
            return None  # an empty entry: the probe's own (private) working directory
        if not path.startswith("/"):
            return f"not executed: {var} holds a relative path {path!r}"
        out.append((var, posixpath.normpath(path)))
        return None

    def add_ccbin(var: str, path: str) -> str | None:
        # nvcc's host compiler: a directory's gcc and g++ run (HOST_CC_NAMES), each judged as
        # a binary (a name missing there: by the directory, as any missing path)
        return add(var, path) or next(
            (w for n in HOST_CC_NAMES if path and (w := add(var, posixpath.join(path, n)))), None
        )

    for var in CODE_DIR_VARS:
        for p in env.get(var, "").split(":"):
            if why := add(var, p):
                return out, why
    plat = env.get("PYTHONPLATLIBDIR", "")
    if plat and ("/" in plat or plat in (".", "..")):
        # joined to the interpreter's prefix to find the standard library: `../../DIR` (or an
        # absolute DIR) made root's python import another user's `encodings`
        return out, f"not executed: PYTHONPLATLIBDIR {plat!r} leads out of the interpreter's prefix"
    if env.get("GCC_EXEC_PREFIX"):
        # gcc 12 searches P/MACHINE/VERSION/, P/MACHINE/, P/ and P/../../MACHINE/bin/… for
        # cc1, as, collect2 (`gcc -print-search-dirs`): a place outside P, which no check of
        # P covers (redteam-23). Nothing needs it set: refused whatever it names
        return out, "not executed: GCC_EXEC_PREFIX is set (gcc runs programs from outside it)"
    for var in CODE_FILE_VARS:
        for p in env.get(var, "").replace(":", " ").split():
            if "/" in p and (why := (add_ccbin if var == "NVCC_CCBIN" else add)(var, p)):
                return out, why  # a bare name: the checked library dirs
    for var in COMMAND_VARS:
        value = env.get(var, "").strip()
        if not value:
            continue
        if not _COMMAND_CHARS.fullmatch(value):
            return out, f"not executed: {var} holds shell syntax ({value[:80]!r})"
        for w in value.split():
            if w.startswith("-"):
                continue  # an option: judged with the others below
            for p in w.split(":"):  # the program, or a launcher's argument; CC: -ccbin $CC
                if "/" in p and (why := (add_ccbin if var == "CC" else add)(var, p)):
                    return out, why
    for var in (*FLAG_VARS, *COMMAND_VARS):
        try:
            words = shlex.split(env.get(var, ""))
        except ValueError:
            return out, f"not executed: {var} cannot be parsed"
        if var in COMMAND_VARS:
            words = [w for w in words if w.startswith("-")]
        # -Xcompiler=-B/x,-O2 and --compiler-options -B/x: the pieces are words too
        pieces = _flag_pieces(words)
        for w in [*words, *pieces]:
            if w in _RLW_EXACT or w.startswith(_RLW_PREFIX):
                return out, f"not executed: {var} holds {w!r}, which runs, loads or writes a file"
        for k, a in enumerate(pieces):
            b = pieces[k + 1] if k + 1 < len(pieces) else ""
            # joined too: gcc takes `-isystemDIR` as `-isystem DIR` (redteam-25)
            inc = next((f for f in _INC_FLAGS if a.startswith(f)), None)
            if inc is not None:
                if why := add(var, b if a == inc else a[len(inc) :]):
                    return out, why
                continue
            if a == "--prefix":  # gcc's `-B`
                a = "-B"
            value = b if a in _DIR_FLAGS else a[2:] if a.startswith("-B") else None
            if a != "-B" and a in _DIR_FLAGS and "/" not in (value or ""):
                continue  # -ccbin g++: a name found on PATH, whose dirs are checked
            if value and (why := (add if a.startswith("-B") else add_ccbin)(var, value)):
                return out, why
    return out, None


def env_gcc_dirs(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """[(variable, value)] of every place env makes gcc take its own programs from (`-B DIR`
    in FLAG_VARS and the options of COMMAND_VARS, each COMPILER_PATH entry), as written. gcc
    12 runs DIR/cc1 (cc1plus), DIR/as, DIR/collect2 and collect2 DIR/real-ld (canaries: real
    gcc, link-probe), also from DIR/MACHINE/VERSION/ and DIR/MACHINE/, and reads startfiles,
    `specs` and headers there: untrusted_env judges every entry of the tree (redteam-23)."""
    import shlex

    out = [("COMPILER_PATH", p) for p in env.get("COMPILER_PATH", "").split(":") if p]
    # (an empty entry, the working directory: refused by env_code_paths)
    for var in (*FLAG_VARS, *COMMAND_VARS):
        try:
            words = shlex.split(env.get(var, ""))
        except ValueError:
            continue  # refused by env_code_paths
        pieces = _flag_pieces(words)
        for k, a in enumerate(pieces):
            if a in ("-B", "--prefix") and k + 1 < len(pieces):  # `--prefix`: gcc's `-B`
                out.append((var, pieces[k + 1]))
            elif a.startswith("-B") and len(a) > 2:
                out.append((var, a[2:]))
    return list(dict.fromkeys(out))


# gcc_tree V DIR: 0 when DIR (a place gcc takes its programs from) is missing (judged by
# who could create it, as any place) or passes `trusted` and so does every entry of its tree,
# links followed (their targets' real paths too); else 1, WHY. A `-B` value that does not end
# in `/` and is no directory is a prefix of names (`-B/d/x-` runs /d/x-cc1): refused. A loop
# or an entry find cannot read refuses too.
SH_GCC_TREE = r"""
gcc_tree() {
  case $1 in COMPILER_PATH) ;; *) case $2 in */) ;; *) [ -d "$2" ] || {
    WHY="-B $2, which is no directory (gcc runs ${2}cc1, ${2}as)"; return 1; };; esac;; esac
  [ -e "$2" ] || [ -L "$2" ] || return 0
  trusted "$2" || return 1
  [ -d "$RP" ] || return 0
  _gr=$RP
  if [ "$AS" = - ]; then
    _gb=$(find -L "$_gr" -mindepth 1 ! -type l \( \( ! -uid 0 ! -uid "$ME" \) -o -perm /022 \
      -o -name "*$_tnl*" \) -print 2>&1) || { WHY="$_gr cannot be walked: ${_gb##*$_tnl}"; return 1; }
  else
    _gb=$(find -L "$_gr" -mindepth 1 ! -type l \( \( ! -uid 0 ! -uid "$ME" ! -uid "$AS" \) \
      -o -perm /022 -o -name "*$_tnl*" \) -print 2>&1) || { WHY="$_gr cannot be walked: ${_gb##*$_tnl}"; return 1; }
  fi
  if [ -n "$_gb" ]; then
    _tp=${_gb%%"$_tnl"*}
    _ts=$(stat -L -c '%u %a %U' -- "$_tp" 2>/dev/null) && ! _tcheck && return 1
    WHY="$_tp writable by group or others"; return 1
  fi
  _gl=$(find -L "$_gr" -mindepth 1 -xtype l -print 2>&1) || { WHY="$_gr cannot be walked"; return 1; }
  while [ -n "$_gl" ]; do
    _gp=${_gl%%"$_tnl"*}
    case $_gl in *"$_tnl"*) _gl=${_gl#*"$_tnl"};; *) _gl=;; esac
    trusted "$_gp" || return 1
  done
  return 0
}
"""


async def untrusted_env(
    transport: Transport, env: Mapping[str, str], *, as_uid: int | None = None
) -> str | None:
    """None when every location env names for code (CODE_DIR_VARS, CODE_FILE_VARS, the dirs
    of NVCC_*_FLAGS) is trusted here, as a binary would be; else why not. A location that does
    not exist is judged by its nearest existing ancestor (who could create it). A variable
    that makes a tool write a file where it says (WRITE_FILE_VARS) is refused unless the
    probe runs as the unit's own user (as_uid), who could write that file anyway."""
    if as_uid is None:
        for var in WRITE_FILE_VARS:
            if env.get(var, "").strip():
                where = env[var].split()[0]
                return f"not executed: {var} would make it write {where} as root"
    pairs, why = env_code_paths(env)
    if why:
        return why
    trees = env_gcc_dirs(env)
    if not pairs and not trees:
        return None
    script = (
        _trust_script(as_uid)
        + SH_GCC_TREE
        + 'N=$1; shift; while [ "$N" -gt 0 ]; do N=$((N - 1)); v=$1; q=$2; shift 2\n'
        + 'gcc_tree "$v" "$q" || { printf \'not executed: %s holds %s\\n\' "$v" "$WHY"; exit 3; }\n'
        + "done\n"
        + "while [ $# -gt 1 ]; do v=$1; q=$2; shift 2\n"
        + 'while [ ! -e "$q" ] && [ ! -L "$q" ]; do q=${q%/*}; [ -n "$q" ] || q=/; done\n'
        # a device (`CUDA_HOME=/dev/null`, seed 002's workaround) holds no code and only
        # root makes one: judged by the directory that holds it, as a missing path is
        + '[ -c "$q" ] && [ ! -L "$q" ] && { q=${q%/*}; [ -n "$q" ] || q=/; }\n'
        + 'trusted "$q" || { printf \'not executed: %s holds %s\\n\' "$v" "$WHY"; exit 3; }\n'
        + "done\n"
    )
    args = [str(len(trees)), *(w for t in trees for w in t)]
    args += [w for pair in dict.fromkeys(pairs) for w in pair]
    r = await transport.run(["sh", "-c", script, "sh", *args], timeout=30)
    if r.exit_status == 0:
        return None
    text = r.text().strip()
    return text.splitlines()[-1] if text else "not executed: trust check failed"


UNTRUSTED_EXIT = 126  # a trusted_command that was not run (the shell's "cannot execute")


def trusted_command(name: str, args: Iterable[str] = ()) -> list[str]:
    """argv that runs the bare command ``name`` found on the host's PATH only when `trusted`
    passes it, by its checked real path; else prints `not executed: WHY` and exits
    UNTRUSTED_EXIT (127 when there is no such command)."""
    if not name or "/" in name or name.startswith("-") or "\n" in name:
        raise ValueError(f"{name!r} is no command name")
    script = (
        "# run the command on PATH only if trusted (not a check alone: it runs the command)\n"
        + SH_TRUST
        + 'x=$(PATH=${REMEDY_SESSION_PATH:+$REMEDY_SESSION_PATH:}$PATH; command -v "$1" 2>/dev/null)'
        + " || exit 127; case $x in /*) ;; *) exit 127;; esac\n"
        + f'trusted "$x" || {{ printf \'not executed: %s\\n\' "$WHY"; exit {UNTRUSTED_EXIT}; }}\n'
        + 'shift; exec "$RP" "$@"\n'
    )
    return ["sh", "-c", script, "sh", name, *args]


# remove_tree PATH: `rm -rf PATH` as root only when nobody else can change where PATH leads:
# every link on it as written passes links_trusted and the directory holding it passes
# `trusted` (GNU rm then never follows a link inside the tree). Else 1, WHY, nothing removed.
# A missing PATH (an unmatched glob) is 0. For a step that deletes paths named at run time
# ($HOME, a cache variable, a glob), which no check before the run can see.
SH_REMOVE = r"""
remove_tree() {
  case $1 in /*) ;; *) WHY="$1 is not an absolute path"; return 1;; esac
  [ -e "$1" ] || [ -L "$1" ] || return 0
  _rd=${1%/*}; [ -n "$_rd" ] || _rd=/
  links_trusted "$1" || return 1
  trusted "$_rd" || { WHY="$WHY: root does not delete in it"; return 1; }
  rm -rf -- "$1"
}
"""


def remove_trees_command(words: str) -> str:
    """A step's command removing each path ``words`` expands to (remedy's own shell words:
    `"$HOME"/.cache/x/*/y`, never host text) by remove_tree; the others are left and named
    (`not removed: PATH: WHY` on stderr), and it exits 3 when any was. The first line says
    what runs (`sh -s -- PATHS`); the check is the here-document it reads."""
    return (
        f"sh -s -- {words} <<'REMEDY_REMOVE'\n"
        + SH_TRUST
        + SH_LINKS
        + SH_REMOVE
        + '_bad=0\nfor _p in "$@"; do\n'
        + '  remove_tree "$_p" || { printf \'not removed: %s: %s\\n\' "$_p" "$WHY" >&2; _bad=3; }\n'
        + "done\n"
        + "exit $_bad\n"
        + "REMEDY_REMOVE"
    )


def write_check_argv(dirs: Iterable[str]) -> list[str] | None:
    """argv that exits 3 with `not written: DIR: WHY` unless every directory a step writes
    into (its nearest existing ancestor, for one the step creates) passes `trusted`: root
    creating a link or running `cc -o` in a tree another user can change writes wherever
    that user points a name (a dangling link at the output: GNU ld writes through it).
    Every link on the path *as written* must pass `links_trusted` too: `trusted` judges the
    real path, so a link another user owns (venv -> a root-owned tree) chose where root
    writes, and could be re-pointed between this check and the step.
    None when there is nothing to check; for `remedy run` and a playbook task alike."""
    args = list(dict.fromkeys(posixpath.normpath(d) for d in dirs if d.startswith("/")))
    if not args:
        return None
    script = (
        SH_TRUST
        + SH_LINKS
        + 'for d in "$@"; do q=$d\n'
        + 'while [ ! -e "$q" ] && [ ! -L "$q" ]; do q=${q%/*}; [ -n "$q" ] || q=/; done\n'
        + 'trusted "$q" || { printf \'not written: %s: %s\\n\' "$d" "$WHY"; exit 3; }\n'
        + 'links_trusted "$d" || { printf \'not written: %s: %s\\n\' "$d" "$WHY"; exit 3; }\n'
        + "done\n"
    )
    return ["sh", "-c", script, "sh", *args]


# own_place PATH: 0 when only root or this user can change what is at PATH (its nearest
# existing directory, for one not made yet): every link on it as written passes
# `links_trusted`, the real path passes `trusted`, and the place itself is writable by nobody
# else (a sticky dir above it is fine, a sticky one as the place is anyone's to add a name to).
# remedy.childenv._foreign_place's rule (remedy.fileread.untrusted_tree, entries not walked),
# on the host. A relative PATH is never root's: whatever the working directory holds.
SH_OWN_PLACE = r"""
own_place() {
  _op=$1
  case $_op in /*) ;; *) return 1;; esac
  _oq=$_op
  while [ ! -e "$_oq" ] && [ ! -L "$_oq" ]; do _oq=${_oq%/*}; [ -n "$_oq" ] || _oq=/; done
  links_trusted "$_op" || return 1
  trusted "$_oq" || return 1
  _om=$(stat -c %a -- "$RP" 2>/dev/null) || return 1
  [ $(( 0$_om & 022 )) -eq 0 ]
}
"""

# The login environment a step starts in over SSH (the host's /etc/environment through
# pam_env, sshd's SetEnv, root's own files), judged on the host: the names of the variables to
# leave out, one a line, and `+` when pip's cache is to be off. The variables are
# remedy.childenv's (the local transport's scrub, which never sees this environment): one
# naming a place another user can change (any entry of a list, any place a PIP_* value or a
# PERL5OPT `-I`/`-Mlib=` names; a `-d` PERL5OPT) is left out whole. /etc/environment's
# `PYTHONPATH` naming uid 65534's dir ran its `pip` package as root in a pip-install step
# (tests/security/test_remote_login_env.py). Then the cache pip would use (PIP_CACHE_DIR,
# else `${XDG_CACHE_HOME:-$HOME/.cache}/pip`, a blank XDG_CACHE_HOME counting as unset, as
# platformdirs has it) must be own_place: pip (23.0.1 `check_path_owner`) asks only that its
# top directory be root's, and a shared `pip/` root owns but anyone writes into gave root's
# pip another user's index page and wheel (tests/security/test_remote_pip_cache.py).
# A PIP_NO_CACHE_DIR the environment set is kept.
# HOME first, judged as remedy.childenv.own_home_env judges it locally: one that is not
# own_place (another user's dir or link, a root-owned one anyone may add to such as /tmp, a
# missing one another user could create, a relative one) is replaced by the passwd home of
# the login's user, printed as `~HOME` (the cache below is then judged under it): a login
# HOME naming uid 65534's home with `.config/pip/pip.conf` (`no-index`, `find-links` to its
# wheel carrying a `.pth`) had root's pip-install step install that wheel
# (tests/security/test_remote_login_home.py).
SH_LOGIN_SCRUB = r"""
_drop() { printf '%s\n' "$1"; unset "$1"; }
_nl='
'
if [ -n "${HOME-}" ] && ! own_place "$HOME"; then
  _ph=$(getent passwd "$ME" 2>/dev/null) || _ph=
  _ph=${_ph%%"$_nl"*}; _ph=${_ph%:*}; _ph=${_ph##*:}
  case $_ph in /*) ;; *) _ph=/;; esac
  printf '~%s\n' "$_ph"; HOME=$_ph
fi
# GCC_EXEC_PREFIX=P/: gcc also searches P/../../MACHINE/bin/, outside P; left out whatever it
# names, root's own and an empty one (gcc's own search paths made relative) too (redteam-24)
[ -z "${GCC_EXEC_PREFIX+x}" ] || _drop GCC_EXEC_PREFIX
for _v in XDG_CONFIG_HOME PIP_CONFIG_FILE PYTHONUSERBASE PYTHONHOME APT_CONFIG \
    PYTHONPYCACHEPREFIX REQUESTS_CA_BUNDLE CURL_CA_BUNDLE SSL_CERT_FILE TMPDIR TEMP TMP \
    XDG_CACHE_HOME DPKG_ADMINDIR DEBCONF_SYSTEMRC DPKG_ROOT BASH_ENV; do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  own_place "$_x" || _drop "$_v"
done
for _v in DEBCONF_DB_REPLACE DEBCONF_DB_OVERRIDE DEBCONF_DB_FALLBACK; do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  case $_x in *"$_nl"*) _drop "$_v"; continue;; esac
  case ${_x%%[{]*} in ''|*[!A-Za-z0-9_]*) _drop "$_v"; continue;; esac
  case $_x in *[{]*[}]) _o=${_x#*[{]}; _o=${_o%?};; *[{}]*) _drop "$_v"; continue;; *) _o=;; esac
  set -f; set -- $_o; set +f
  for _w in "$@"; do
    _k=${_w%%:*}
    case $_w in *:*) ;; *) _k=;; esac
    case $_k in
      ''|*[!A-Za-z0-9_]*) ;;  # no `key:` (a \w+ word to debconf): a filename
      [Ff][Ii][Ll][Ee][Nn][Aa][Mm][Ee]|[Dd][Ii][Rr][Ee][Cc][Tt][Oo][Rr][Yy]) _w=${_w#*:};;
      *) _w=${_w#*:}; case $_w in */*) ;; *) continue;; esac;;
    esac
    own_place "$_w" || { _drop "$_v"; break; }
  done
done
# an empty entry of a list (`/usr/lib:`, `a::b`) is the working directory to gcc (COMPILER_PATH
# `./as`, LIBRARY_PATH `./specs`), ld.so and Python: no place judged, so `all` refuses it
# (redteam-25); field splitting in sh drops a trailing one, so it is looked for here
# _hostcc PLACE: own_place PLACE and, where it is a directory, its gcc and g++: what nvcc
# 13.0 runs from a host-compiler directory (`-ccbin DIR`, NVCC_CCBIN=DIR, CC=DIR as FlashInfer
# and torch pass it; remedy.childenv._HOST_CC_NAMES). DIR alone was judged: a root-owned DIR
# holding links (of root) to the gcc and g++ of uid 65534 was kept, and the nvcc of a
# pip-install step ran them as root (redteam-27, tests/security/test_step_path_programs.py).
# No quote mark in these comments: Ansible splits a raw task on them
_hostcc() {
  own_place "$1" || return 1
  [ -d "$1" ] || return 0
  own_place "$1/gcc" && own_place "$1/g++"
}
_split() {
  case $3 in all) case $2 in [:\;]*|*[:\;]|*[:\;][:\;]*) return 1;; esac;; esac
  _sk=$3; _lo=$IFS; IFS=$1; set -f; set -- $2; set +f; IFS=$_lo
  for _e in "$@"; do
    [ -n "$_e" ] || continue
    case $_sk in bare|cc) case $_e in */*) ;; *) continue;; esac;; esac
    case $_sk in cc) _hostcc "$_e" || return 1;; *) own_place "$_e" || return 1;; esac
  done
  return 0
}
# _bdirs VALUE: 0 when every place a `-B` in VALUE's words names (`-B DIR`, `-BDIR`, inside
# `-Xcompiler=-BDIR,-O2`) is own_place and its tree passes gcc_tree (remedy.trust
# env_gcc_dirs' forms); a relative one, or a prefix of names (`-B/d/x-`), is not
_bdirs() {
  _bn=; _lo=$IFS; IFS=" 	$_nl=,"; set -f; set -- $1; set +f; IFS=$_lo
  for _bp in "$@"; do
    if [ -n "$_bn" ]; then _bn=; _bq=$_bp
    else case $_bp in -B|--prefix) _bn=1; continue;; -B?*) _bq=${_bp#-B};; *) continue;; esac
    fi
    case $_bq in /*) ;; *) return 1;; esac
    own_place "$_bq" && gcc_tree -B "$_bq" || return 1
  done
  return 0
}
for _v in XDG_CONFIG_DIRS PYTHONPATH COMPILER_PATH PERL5LIB PERLLIB LIBRARY_PATH CPATH \
    C_INCLUDE_PATH CPLUS_INCLUDE_PATH GCONV_PATH SSL_CERT_DIR CMAKE_PREFIX_PATH LD_LIBRARY_PATH \
    LD_PRELOAD LD_AUDIT; do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  case $_v in
    LD_LIBRARY_PATH) _split ":; 	$_nl" "$_x" all || _drop "$_v";;
    LD_*) _split ":; 	$_nl" "$_x" bare || _drop "$_v";;
    COMPILER_PATH)  # where gcc runs cc1, as, collect2, ld from: judged by all the tree holds
      _split : "$_x" all || { _drop "$_v"; continue; }
      _lo=$IFS; IFS=:; set -f; set -- $_x; set +f; IFS=$_lo
      for _e in "$@"; do [ -z "$_e" ] || gcc_tree COMPILER_PATH "$_e" || { _drop "$_v"; break; }; done;;
    *) _split : "$_x" all || _drop "$_v";;
  esac
done
case ${PYTHONPLATLIBDIR-} in */*|.|..) _drop PYTHONPLATLIBDIR;; esac
for _v in CC CXX CPP LDSHARED LDCXXSHARED AR CUDACXX CUDAHOSTCXX NVCC_CCBIN CMAKE_TOOLCHAIN_FILE \
    CMAKE_C_COMPILER_LAUNCHER CMAKE_CXX_COMPILER_LAUNCHER CMAKE_CUDA_COMPILER_LAUNCHER \
    CMAKE_C_LINKER_LAUNCHER CMAKE_CXX_LINKER_LAUNCHER CMAKE_CUDA_LINKER_LAUNCHER; do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  case $_x in *[\'\"\\]*) _drop "$_v"; continue;; esac  # quoted: not split here as a build would
  _split " 	$_nl" "$_x" cc && _bdirs "$_x" || _drop "$_v"
done
# _flags_ok VALUE: 0 when no word or piece (a word split at `=` and `,`) of VALUE is an
# option that runs, loads or writes a file, and every place it names is own_place: the value
# of a path option (the next piece, or what follows the name of a joined one: remedy.childenv
# _PATH_OPTIONS) whatever it holds, and every other piece holding `/` (`-ccbin DIR`: _hostcc). A relative one is not:
# the working directory of the compile decides what `-Itmp/x` (once judged as `/x`) or `-Ltmp` is
_flags_ok() {
  _fv=$1
  set -f; set -- $_fv; set +f
  for _w in "$@"; do case $_w in @RLW@) return 1;; esac; done
  _fn=; _lo=$IFS; IFS=" 	$_nl=,"; set -f; set -- $_fv; set +f; IFS=$_lo
  for _p in "$@"; do
    [ -n "$_p" ] || continue
    case $_p in @RLW@) return 1;; esac
    if [ -n "$_fn" ]; then _fn=; _hostcc "$_p" || return 1; continue; fi
    case $_p in
      -I|-L|-B|-R|-isystem|-idirafter|-iquote|--prefix|-rpath|-rpath-link|--rpath|--rpath-link|\
      --library-path|--include-path|--system-include) _fn=1; continue;;
      -isystem?*) _p=${_p#-isystem};;
      -idirafter?*) _p=${_p#-idirafter};;
      -iquote?*) _p=${_p#-iquote};;
      -[ILBR]?*) _p=${_p#-?};;
      */*) ;;
      *) continue;;
    esac
    _hostcc "$_p" || return 1
  done
  return 0
}
# _ldkw VALUE: _lk is VALUE (its words joined by blanks) with each piece after the first of
# a word `-Wl,...` that is one of the -B keywords of ld (remedy.childenv LD_B_KEYWORDS) made
# `-Wl`, a piece naming no place: gcc hands it to ld, so `-Wl,-Bsymbolic-functions` (Ubuntu
# default LDFLAGS) is no `-B symbolic`. Every other word stays, so `-B -Wl,-Bstatic` still
# gives `-B` a place to judge. For gcc variables only (redteam-26)
_ldkw() {
  _lk=; set -f; set -- $1; set +f
  for _w in "$@"; do
    case $_w in
      -Wl,*)
        _lr=${_w#-Wl,}; _w=-Wl
        while :; do
          _lp=${_lr%%,*}
          case $_lp in @LDKW@) _lp=-Wl;; esac
          _w=$_w,$_lp
          case $_lr in *,*) _lr=${_lr#*,};; *) break;; esac
        done;;
    esac
    _lk="$_lk $_w"
  done
}
for _v in CFLAGS CXXFLAGS CPPFLAGS LDFLAGS CUDAFLAGS NVCC_PREPEND_FLAGS NVCC_APPEND_FLAGS; do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  case $_x in *[\'\"\\]*) _drop "$_v"; continue;; esac
  case $_v in @LDKWV@) _ldkw "$_x"; _x=$_lk;; esac
  _flags_ok "$_x" && _bdirs "$_x" || _drop "$_v"
done
if [ -n "${PERL5OPT-}" ]; then
  _pd=; _pn=
  set -f; set -- $PERL5OPT; set +f
  for _w in "$@"; do
    if [ -n "$_pn" ]; then _pn=; own_place "$_w" || _pd=1; continue; fi
    case $_w in
      -d*|-M|-m|[!-]*) _pd=1;;
      -I) _pn=1;;
      -I*) own_place "${_w#-I}" || _pd=1;;
      -[Mm]lib=*|-[Mm]-lib=*) _split , "${_w#*=}" all || _pd=1;;
    esac
  done
  [ -z "$_pn$_pd" ] || _drop PERL5OPT
fi
for _v in $(env | sed -n 's/^\(PIP_[A-Za-z0-9_]*\)=.*/\1/p'); do
  eval "_x=\${$_v-}"; [ -n "$_x" ] || continue
  set -f; set -- $_x; set +f
  for _w in "$@"; do
    case $_w in
      file:*|*+file:*)
        _w=${_w#*file:}
        case $_w in *%*) _drop "$_v"; break;; esac  # pip percent-decodes it
        case $_w in //localhost/*) _w=${_w#//localhost};; ///*) _w=${_w#//};; //*) continue;; esac;;
      *://*) continue;;  # a remote index or link: whoever set the environment chose it
      '~'*) _drop "$_v"; break;;  # pip expands it (find-links): judged as another user's
      /*) ;;
      *) _w=/$_w;;  # relative: from `/`, the step's working directory
    esac
    own_place "$_w" || { _drop "$_v"; break; }
  done
done
if [ -z "${PIP_NO_CACHE_DIR+x}" ]; then
  if [ -n "${PIP_CACHE_DIR+x}" ]; then _pc=$PIP_CACHE_DIR
  else
    _pc=${XDG_CACHE_HOME-}
    case $_pc in *[![:space:]]*) ;; *) _pc=${HOME:+$HOME/.cache};; esac
    _pc=${_pc:+$_pc/pip}
  fi
  own_place "$_pc" || echo +
fi
"""


# the options of _RLW_EXACT and _RLW_PREFIX as one sh `case` pattern, for SH_LOGIN_SCRUB
_RLW_CASE = "|".join([*sorted(_RLW_EXACT), *(f"{p}*" for p in _RLW_PREFIX)])
SH_LOGIN_SCRUB = (
    SH_LOGIN_SCRUB.replace("@RLW@", _RLW_CASE)
    .replace("@LDKWV@", "|".join(_LD_KW_VARS))
    .replace("@LDKW@", "|".join(sorted(_LD_KW)))
)


def login_env_judgement() -> str:
    """A sh script that prints, one a line, the names of the login environment's variables
    SH_LOGIN_SCRUB leaves out, and `+` when pip's cache is to be off; it changes nothing
    outside its own shell. Shared by step_env_guard and the exported playbook's first task
    (remedy.export.ansible), which runs it with no Python on the host."""
    return SH_TRUST + SH_LINKS + SH_OWN_PLACE + SH_GCC_TREE + SH_LOGIN_SCRUB


# the variables SH_LOGIN_SCRUB can name whose empty value is no unset: an empty entry of gcc's
# COMPILER_PATH, LIBRARY_PATH, CPATH (C_, CPLUS_INCLUDE_PATH) is the working directory, an
# empty GCC_EXEC_PREFIX makes gcc's own search paths relative (`gcc -print-search-dirs`). A
# playbook's `environment:` can only set a variable, so these are left out by the shell tasks'
# own step_env_guard instead (only a shell task runs a compiler)
UNSET_ONLY_VARS = ("GCC_EXEC_PREFIX", "COMPILER_PATH", "LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH",
                   "CPLUS_INCLUDE_PATH")  # fmt: skip


# the variables SH_LOGIN_SCRUB can name whose empty value is no unset but whose default is
# known: the playbook's `environment:` sets that. dpkg takes an empty DPKG_ADMINDIR as the
# directory "" (its database `/status`, `/info/`: `DPKG_ADMINDIR= dpkg -s coreutils` finds
# nothing)
DEFAULT_VALUES = {"DPKG_ADMINDIR": "/var/lib/dpkg"}


def step_env_guard() -> str:
    """Shell lines for the top of a step's script: the login environment less what
    SH_LOGIN_SCRUB leaves out, PIP_NO_CACHE_DIR=1 exported where it says so, HOME the
    passwd home where it names one (`~HOME`: a line each, so a home holding a blank stays
    whole). The judgement runs in a subshell (its functions and variables stay there); only
    its lines come back. IFS is left unset after (the shell's default)."""
    return (
        "_rg=$(\n"
        + login_env_judgement()
        + ")\n"
        + "IFS='\n'; set -f\n"
        + "for _u in $_rg; do case $_u in +) PIP_NO_CACHE_DIR=1; export PIP_NO_CACHE_DIR;; "
        + "'~'/*) HOME=${_u#'~'}; export HOME;; "
        + '*[!A-Za-z0-9_]*) ;; *) unset "$_u";; esac; done\n'
        + "set +f; unset IFS _rg _u\n"
    )
