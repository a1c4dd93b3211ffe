"""The environment of every program remedy starts on this machine: the one it inherited,
less what names another user's configuration or code.

Why a module of its own: the local transport (every step and probe of `run --local`) and the
log reader's grep/wc start programs here, and neither may import the other
(docs/ARCHITECTURE.md). Root's environment (`su` without `-`, `sudo -E`, `env_keep`, a CI
runner's, root's own profile) may name places other users write; what it names there is left
out of a child's environment, never acted on.
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Callable, Mapping


def own_home_env(home: bytes | None) -> dict[bytes, bytes]:
    """HOME for a command remedy runs locally: the inherited one, unless another user owns it,
    reaches it through a link they planted, or can add names to it or a directory above it
    (remedy.fileread.untrusted_tree's rule): `sudo` keeps the invoking user's HOME on
    many systems, and root's `pip install` then read that user's `~/.config/pip/pip.conf`
    (their index, their wheels), `rm -rf "$HOME"/.cache/...` worked in their tree, login
    files were theirs. Then the passwd home of the user remedy runs as, which is what sshd
    gives a login (the SSH transport's commands already have it)."""
    if not home:
        return {}
    import pwd

    from remedy.fileread import foreign_link_chain

    me = os.geteuid()
    try:
        foreign = os.stat(home).st_uid not in (0, me) or bool(foreign_link_chain(os.fsdecode(home)))
        # root's, but anyone may add a name to it (`HOME=/tmp`, a shared 0777/0775 dir) or
        # rename it (a directory above it): uid 65534's `.config/pip/pip.conf` there was
        # root's pip's (tests/security/test_shared_home.py)
        foreign = foreign or _foreign_place(home)
    except OSError:
        foreign = _creatable_by_others(os.fsdecode(home), me)
    if not foreign:
        return {}
    try:
        return {b"HOME": os.fsencode(pwd.getpwuid(me).pw_dir)}
    except KeyError:
        return {b"HOME": b"/"}


def _creatable_by_others(path: str, me: int) -> bool:
    """A HOME that does not exist, whose nearest existing directory another user may add a
    name to (theirs, group/world-writable, sticky /tmp too: a new name is anyone's): that
    user could create it, with `.config/pip/pip.conf` in it, between this check and the
    command's start (tests/security/test_missing_home.py). Relative or unreachable: True."""
    from remedy.fileread import foreign_link_chain

    if not path.startswith("/"):
        return True
    cur = os.path.normpath(path)
    while True:
        cur = os.path.dirname(cur)
        try:
            st = os.stat(cur)
        except FileNotFoundError:
            continue
        except OSError:
            return True
        if not stat.S_ISDIR(st.st_mode):
            return False  # under a file: nobody can create it
        return st.st_uid not in (0, me) or bool(st.st_mode & 0o022) or bool(foreign_link_chain(cur))


# inherited variables naming where a command remedy runs reads configuration or code from
# (pip's config files, Python's import path, home and user site, apt's configuration, the
# directories gcc takes `as`/`ld`/`collect2` from before PATH (judged by all they hold;
# GCC_EXEC_PREFIX always left out: gcc searches above it, see own_config_env), perl's (dpkg/debconf) include
# path): one another user owns chose root's package index and wheels
# (`XDG_CONFIG_HOME/pip/pip.conf`), or ran its `as` as root (`COMPILER_PATH`, the
# link-layout stub's `cc`), as a HOME `sudo` kept did
# PYTHONPYCACHEPREFIX: where Python takes the bytecode of what it imports (a pyc whose header
# matches the source's mtime and size, which anyone can read: root's `python -m pip` ran uid
# 65534's `json`, tests/security/test_inherited_config_env.py)
# TMPDIR (TEMP, TMP: Python's tempfile): where gcc keeps its intermediate files (created
# O_EXCL, then opened again by name by cc1 and as) and pip unpacks: the directory's owner
# renamed a link over a new name and root's cc1 wrote its output into the link's target
# (tests/security/test_inherited_tmpdir.py); left out, they default to /tmp, where only an
# entry's owner may rename it
# REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE, SSL_CERT_FILE, SSL_CERT_DIR: the CAs root's pip (apt's
# https, curl) trusts for the index: one another user writes vouched for whoever answered for
# the index host, and root installed its wheel (tests/security/test_inherited_ca_env.py);
# PIP_CERT naming the same file was already left out
# XDG_CACHE_HOME: where pip keeps its HTTP and wheel cache (`XDG_CACHE_HOME/pip`): see
# _pip_cache_env
# DPKG_ADMINDIR: dpkg's database (dpkg >= 1.20 takes it where no --admindir is given, and
# apt-get passes none): its `status` and `info/PKG.prerm` made uid 65534's script root's
# "old pre-removal script" in an apt-install step (tests/security/test_dpkg_admindir.py)
# DEBCONF_SYSTEMRC, DPKG_ROOT: where debconf (debconf 1.5.82 Debconf/Config.pm) takes its
# debconf.conf (DPKG_ROOT is put before /etc/debconf.conf), which apt-get's Pre-Install-Pkgs
# hook `dpkg-preconfigure --apt` and every postinst's confmodule load as root; its `Driver:`
# value is perl code to Debconf/Db.pm (`eval qq{use Debconf::DbDriver::$type}`): uid 65534's
# file ran its code as root (tests/security/test_debconf_env.py)
# BASH_ENV: the file every non-interactive bash sources first; a step's `sh -c` does not, but
# the bash programs it starts do (dkms, a `#!/bin/bash` maintainer script, glibc's `ldd`):
# uid 65534's file ran as root under a step's `ldd` (tests/security/test_inherited_bash_env.py)
_CONFIG_VARS = (b"XDG_CONFIG_HOME", b"PIP_CONFIG_FILE", b"PYTHONUSERBASE", b"PYTHONHOME",
                b"APT_CONFIG", b"GCC_EXEC_PREFIX", b"PYTHONPYCACHEPREFIX",
                b"REQUESTS_CA_BUNDLE", b"CURL_CA_BUNDLE", b"SSL_CERT_FILE",
                b"TMPDIR", b"TEMP", b"TMP", b"XDG_CACHE_HOME", b"DPKG_ADMINDIR",
                b"DEBCONF_SYSTEMRC", b"DPKG_ROOT", b"BASH_ENV",
                b"CUDNN_HOME", b"CUDNN_PATH", b"CUDA_INC_PATH")  # fmt: skip
# CUDNN_HOME (CUDNN_PATH), CUDA_INC_PATH: torch's cpp_extension (2.14.1) adds
# `$CUDNN_HOME/include`, `$CUDNN_HOME/lib64` and `$CUDA_INC_PATH` to every CUDA extension a
# step's source build compiles through its CUDAExtension/BuildExtension (redteam-22; the
# probes' side: remedy.trust.CODE_DIR_VARS)
# debconf's databases from the environment, `Driver{opt:value file ...}`
# (Debconf/Config.pm _env_to_driver): a `File{PATH}` is opened by root's debconf, created
# through a link where it does not exist (`sysopen O_CREAT`: uid 65534's dangling link made
# root create a file where it pointed) and written back through `PATH-new`; its answers are
# the package's configuration. Left out where any place it names (a bare word, `filename:`,
# `directory:`) is another user's, or where it is no such form
_DEBCONF_DBS = (b"DEBCONF_DB_REPLACE", b"DEBCONF_DB_OVERRIDE", b"DEBCONF_DB_FALLBACK")
_DEBCONF_DB = re.compile(rb"(\w+)(?:\{(.*)\})?", re.DOTALL)
_WORD = re.compile(rb"\w+")
_CONFIG_LISTS = (b"XDG_CONFIG_DIRS", b"PYTHONPATH", b"COMPILER_PATH", b"PERL5LIB", b"PERLLIB",
                 b"LIBRARY_PATH", b"CPATH", b"C_INCLUDE_PATH", b"CPLUS_INCLUDE_PATH",
                 b"GCONV_PATH", b"SSL_CERT_DIR", b"CMAKE_PREFIX_PATH")  # fmt: skip
# what ld.so loads into every program a step starts (tests/security/test_inherited_loader_env.py):
# LD_LIBRARY_PATH naming a directory another user writes (a service venv's nvidia/*/lib, a CI
# job's) let it put a library remedy's own python never loads (libsframe.so.0, which root's
# `as` and `ld` load under the link-layout stub's `cc`) there, and its constructor ran as
# root. ld.so splits these on `:` and `;` (LD_LIBRARY_PATH) or blanks (LD_PRELOAD): a list
# holding any such entry is left out whole. A bare LD_PRELOAD name is found in the library
# dirs (LD_LIBRARY_PATH's checked here)
_LOADER_LISTS = (b"LD_LIBRARY_PATH", b"LD_PRELOAD", b"LD_AUDIT")
# PERL5OPT: switches perl takes as if on every command line (dpkg's and debconf's perl in a
# step's apt install): `-I/dir` and `-Mlib=/dir` put a directory first on @INC, `-Mevil` then
# loads evil.pm from it as root (tests/security/test_inherited_perl_env.py); `-d` runs the code
# in PERL5DB. Left out where a directory it names is another user's, or with `-d`
_PERL_OPT = b"PERL5OPT"
_LOADER_SPLIT = re.compile(rb"[:; \t\n]")
# the compiler a build takes from the environment (distutils/setuptools `customize_compiler`:
# CC, CXX, CPP, LDSHARED, LDCXXSHARED, AR; CMake: CC, CXX, CUDACXX, CUDAHOSTCXX; nvcc:
# NVCC_CCBIN; CMake's CMAKE_TOOLCHAIN_FILE is CMake code): a pip-install step's package
# built from its sdist (no wheel for this platform or Python) ran `$CC` as root, and uid
# 65534's `gcc` wrote the canary (tests/security/test_inherited_compiler_env.py). Each word
# may be a program or an option: left out where a word holding `/` names a place another
# user can change (a relative one counts as theirs); a bare name is found on PATH
# CMake (>= 3.17/3.21) also takes from the environment a launcher that runs every compile
# (CMAKE_<LANG>_COMPILER_LAUNCHER: ccache's place) or link, and its toolchain file (CMake
# code): a pip source build through CMake (scikit-build-core, a setup.py calling cmake) ran
# uid 65534's launcher and its toolchain file's `execute_process` as root. CMAKE_PREFIX_PATH
# (a list, below) is where `find_package` loads a package's `*Config.cmake`, CMake code too
_COMPILER_VARS = (b"CC", b"CXX", b"CPP", b"LDSHARED", b"LDCXXSHARED", b"AR", b"CUDACXX",
                  b"CUDAHOSTCXX", b"NVCC_CCBIN", b"CMAKE_TOOLCHAIN_FILE",
                  b"CMAKE_C_COMPILER_LAUNCHER", b"CMAKE_CXX_COMPILER_LAUNCHER",
                  b"CMAKE_CUDA_COMPILER_LAUNCHER", b"CMAKE_C_LINKER_LAUNCHER",
                  b"CMAKE_CXX_LINKER_LAUNCHER", b"CMAKE_CUDA_LINKER_LAUNCHER",
                  b"PYTORCH_NVCC")  # fmt: skip
# PYTORCH_NVCC: the nvcc command torch's cpp_extension writes into a CUDA extension's ninja
# file (a step's source build through BuildExtension), read as CC is (redteam-22)
# a host compiler named by its directory (`-ccbin DIR`, NVCC_CCBIN=DIR, `-ccbin $CC`): nvcc
# runs DIR/gcc and DIR/g++ (CUDA 13.0, traced; tests/security/test_ccbin_dir.py), so every
# place a compiler or flag variable names is judged with those two names below it too (a
# name missing there is judged by the place, as any missing path)
_HOST_CC_NAMES = (b"gcc", b"g++")
# the options those builds add from the environment (setuptools: CFLAGS, CPPFLAGS, LDFLAGS;
# CMake: CXXFLAGS, CUDAFLAGS; nvcc: NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS): `-B DIR` (gcc's
# `as`, `ld`, `collect2` from DIR), `-fplugin=`, `-wrapper`, `@FILE`... Left out where an
# option is one remedy.trust knows to run, load or write a file, or any path in it (after an
# option's letters, `=` or `,`) is another user's
_FLAG_ENV_VARS = (b"CFLAGS", b"CXXFLAGS", b"CPPFLAGS", b"LDFLAGS", b"CUDAFLAGS",
                  b"NVCC_PREPEND_FLAGS", b"NVCC_APPEND_FLAGS")  # fmt: skip
# options whose value is a place: the next piece (`-I DIR`, `--prefix=DIR`, `-Wl,-rpath,DIR`),
# or, for those of JOINED, what follows the name in the same piece (`-IDIR`, `-isystemDIR`).
# Judged whatever the value holds: a relative one (`-Ifoo`, `-Ltmp`, `-Itmp/x`) is resolved
# against the compile's working directory (a step's `/`: `-Ltmp` is /tmp), never judged as
# root's. `-Itmp/x` used to be read as option `-Itmp` and place `/x` (redteam-25). `--prefix`
# is gcc's `-B`
_PATH_OPTIONS = frozenset({
    "-I", "-L", "-B", "-R", "-isystem", "-idirafter", "-iquote", "--prefix", "-rpath",
    "-rpath-link", "--rpath", "--rpath-link", "--library-path", "--include-path",
    "--system-include",
})  # fmt: skip
_JOINED_PATH_OPTIONS = ("-isystem", "-idirafter", "-iquote", "-I", "-L", "-B", "-R")
# ld's own `-B` options (GNU ld manual, binutils ld/ld.texi, Command-line Options: -Bdynamic,
# -Bgroup, -Bno-symbolic, -Bshareable, -Bstatic, -Bsymbolic, -Bsymbolic-functions): keywords,
# not gcc's `-B DIR`, where gcc hands them to ld, i.e. as a piece after the first of a word
# `-Wl,...` of a variable gcc reads (Ubuntu's default LDFLAGS, dpkg's
# scripts/Dpkg/Vendor/Ubuntu.pm: `-Wl,-Bsymbolic-functions`). Anywhere else `-Bsymbolic` is
# gcc's `-B symbolic` (a relative prefix: gcc 12 ran ./symbolic/as), and nvcc splits an
# `-Xcompiler` value at commas, so only these variables keep them (redteam-26)
LD_B_KEYWORDS = frozenset({
    "-Bdynamic", "-Bgroup", "-Bno-symbolic", "-Bshareable", "-Bstatic", "-Bsymbolic",
    "-Bsymbolic-functions",
})  # fmt: skip
LD_KEYWORD_VARS = ("CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS")


def ld_keywords_out(value: bytes) -> bytes:
    """value for judging: each LD_B_KEYWORDS piece of a word `-Wl,...` replaced by `-Wl` (a
    piece naming no place), every other word and piece as it was, so that `-B -Wl,-Bstatic`
    still hands `-B` a place that is judged (and refused as relative)."""
    try:
        words = shlex.split(os.fsdecode(value))
    except ValueError:
        return value  # refused by _flag_places
    out = []
    for w in words:
        if w.startswith("-Wl,"):
            parts = w.split(",")
            w = ",".join(["-Wl", *("-Wl" if p in LD_B_KEYWORDS else p for p in parts[1:])])
        out.append(w)
    return os.fsencode(shlex.join(out))


_CONFIG_SEEN: dict[tuple[bytes, bytes], bytes | None] = {}


def _foreign_place(value: bytes) -> bool:
    """Whether another user could change what is at `value` (its nearest existing ancestor,
    for one not made yet): remedy.fileread.untrusted_tree's rule, the entries not walked."""
    from remedy.fileread import untrusted_tree

    path = os.fsdecode(value)
    if not path.startswith("/"):
        return True  # relative: whatever the working directory holds
    q = os.path.normpath(path)
    while not os.path.lexists(q) and q != "/":
        q = os.path.dirname(q)
    try:
        return untrusted_tree(q, walk=False) is not None
    except OSError:
        return True


def _foreign_gcc_dir(value: bytes, *, b_option: bool = False) -> bool:
    """Whether a place gcc takes its own programs from (`-B DIR`, a COMPILER_PATH entry)
    holds anything another user could change: gcc 12 runs DIR/cc1, DIR/as, DIR/collect2
    (and collect2 DIR/real-ld), also from DIR/MACHINE/VERSION/, and reads startfiles, `specs`
    and headers there, so every entry of the tree is judged (links followed), not just DIR: a
    root-owned COMPILER_PATH dir holding root's link to uid 65534's `cc1` ran it under a
    step's `cc` (redteam-23, tests/security/test_gcc_prefix_files.py). A `-B` value that does
    not end in `/` and is no directory is a prefix of names (`-B/d/x-`: /d/x-cc1): foreign."""
    path = os.fsdecode(value)
    if b_option and not path.endswith("/") and not os.path.isdir(path):
        return True
    if _foreign_place(value):
        return True
    try:
        return os.path.isdir(path) and _untrusted_gcc_tree(path) is not None
    except OSError:
        return True


def _untrusted_gcc_tree(path: str) -> str | None:
    """Why an entry of the tree at `path` (a trusted directory), or of the tree a link in it
    leads to, is one another user could change (remedy.fileread.untrusted_tree's rule for
    each; a link's own mode counts for nothing, a link leading nowhere is refused)."""
    from remedy.fileread import _unsafe, untrusted_tree

    me = os.geteuid()
    seen: set[str] = set()
    todo = [path]
    while todo:
        real = os.path.realpath(todo.pop())
        if real in seen:
            continue  # a loop, or a second way to the same place
        seen.add(real)
        if not os.path.exists(real):
            return f"{real} does not exist (a link leading nowhere)"
        if why := untrusted_tree(real, walk=False):
            return why
        if not os.path.isdir(real):
            continue
        for dp, dns, fns in os.walk(real, onerror=_raise):
            for n in dns + fns:
                q = os.path.join(dp, n)
                st = os.lstat(q)
                if stat.S_ISLNK(st.st_mode):
                    todo.append(q)
                elif why := _unsafe(q, st, me, ancestor=False):
                    return why
    return None


def _raise(exc: OSError) -> None:
    raise exc


def flag_pieces(words: list[str]) -> list[str]:
    """A flag value's words split at `=` and `,` (`-Xcompiler=-B/x,-O2`): the pieces a compiler
    driver passes on are judged as words too."""
    return [x for w in words for x in re.split(r"(?<=[^-])[=,]", w) if x]


def _gcc_dirs_of_flags(value: bytes) -> list[bytes]:
    """The `-B` values of a compiler-flags value (`-B DIR`, `-BDIR`, inside
    `-Xcompiler=-BDIR,-O2`), as written."""
    try:
        words = shlex.split(os.fsdecode(value))
    except ValueError:
        return []  # refused by _flag_places
    pieces = flag_pieces(words)
    out = []
    for k, a in enumerate(pieces):
        if a in ("-B", "--prefix") and k + 1 < len(pieces):  # `--prefix` is gcc's `-B`
            out.append(os.fsencode(pieces[k + 1]))
        elif a.startswith("-B") and len(a) > 2:
            out.append(os.fsencode(a[2:]))
    return out


def _with_host_cc(places: list[bytes]) -> list[bytes]:
    """places, each followed by its gcc and g++ (what nvcc runs from a `-ccbin DIR`)."""
    return [q for p in places for q in (p, *(os.path.join(p, n) for n in _HOST_CC_NAMES))]


def _foreign_lib(var: bytes, entry: bytes) -> bool:
    """Whether ld.so could load another user's code through this entry of `var`: a path (or
    a relative or `$ORIGIN` one, judged as foreign) another user can change. A bare
    LD_PRELOAD/LD_AUDIT name is looked up in the library dirs, not here."""
    if not entry:
        # ld.so takes an empty LD_LIBRARY_PATH entry (`/usr/lib:`) as the working directory
        # (LD_DEBUG=libs: `glibc-hwcaps/...:tls:...`), which is no place judged (redteam-25)
        return var == b"LD_LIBRARY_PATH"
    if var != b"LD_LIBRARY_PATH" and b"/" not in entry:
        return False
    return _foreign_place(entry)


def _pip_paths(environ: Mapping[bytes, bytes]) -> list[bytes]:
    """PIP_* variables: pip's options from the environment, any of which may name a local
    place (PIP_FIND_LINKS=DIR of wheels, PIP_CONSTRAINT, PIP_CACHE_DIR, PIP_LOG...)."""
    return [k for k, v in environ.items() if k.startswith(b"PIP_") and k not in _CONFIG_VARS]


def _pip_places(value: bytes) -> list[bytes]:
    """The places a PIP_* value can name, as pip reads them in a step (run from `/`): each
    word; a `file:` URL's path (percent-decoded, `localhost` host); `~`/`~user` expanded
    (pip expands find-links); a relative word from `/`. Only `/` and `file:` words used to
    be looked at: `PIP_FIND_LINKS=tmp/x/wheels` (pip takes an existing relative path from its
    working directory) or `~sglang/wheels` gave root's pip another user's wheels, and
    `file:///home/u%73er/w` was judged by `/home`. A remote URL (`https://…`) is no place."""
    from urllib.parse import unquote, urlsplit

    out = []
    for w in value.split():
        s = os.fsdecode(w)
        try:
            u = urlsplit(s)
        except ValueError:
            u = None
        if u is not None and (u.scheme == "file" or u.scheme.endswith("+file")):
            s = unquote(u.path) if u.netloc in ("", "localhost") else "/"
        elif u is not None and u.scheme and "://" in s:
            continue  # a remote index or link: whoever set root's environment chose it
        out.append(os.fsencode(os.path.join("/", os.path.expanduser(s))))
    return out


def _perl_opt_places(value: bytes) -> list[bytes] | None:
    """The directories a PERL5OPT value adds to perl's @INC (`-I DIR`, `-IDIR`,
    `-Mlib=A,B`, `-mlib=...`), or None where it turns on the debugger (`-d`, `-d:Mod`: the
    code in PERL5DB runs) or is not made of switches (perl refuses that; so does remedy)."""
    words = value.split()
    out: list[bytes] = []
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith(b"-"):
            return None
        if w.startswith(b"-d"):
            return None
        if w.startswith(b"-I"):
            if w == b"-I":
                i += 1
                if i >= len(words):
                    return None
                w = b"-I" + words[i]
            out.append(w[2:])
        elif w.startswith((b"-Mlib=", b"-mlib=", b"-M-lib=", b"-m-lib=")):
            out += w.split(b"=", 1)[1].split(b",")
        elif w in (b"-M", b"-m"):
            return None  # the module name in the next word: not a form perl takes here
        i += 1
    return out


def _flag_places(value: bytes) -> list[bytes] | None:
    """The places a compiler-flags value names, as the compile may read them: the value of
    each option of _PATH_OPTIONS (the next piece, or what follows a joined one's name) and
    every other piece (each word split at `=` and `,`) holding a `/`, relative ones as
    written (judged as another user's: the compile's working directory decides what they
    are); or None where it cannot be split as a shell would or holds an option that runs,
    loads or writes a file (remedy.trust's list: -wrapper, -specs, -fplugin, @FILE, -o...)."""

    try:
        words = shlex.split(os.fsdecode(value))
    except ValueError:
        return None
    pieces: list[str] = []
    for w in words:
        split = [x for x in re.split(r"[=,]", w) if x]
        for p in dict.fromkeys([w, *split]):
            if p in RUN_LOAD_WRITE_OPTIONS or p.startswith(RUN_LOAD_WRITE_PREFIXES):
                return None
        pieces += split
    out = []
    place_next = False
    for p in pieces:
        if place_next:
            place_next = False
            out.append(os.fsencode(p))
        elif p in _PATH_OPTIONS:
            place_next = True
        elif j := next((o for o in _JOINED_PATH_OPTIONS if p.startswith(o)), None):
            out.append(os.fsencode(p[len(j) :]))
        elif "/" in p:
            out.append(os.fsencode(p))  # `-otmp/x`: where its place begins, unknown: relative
    return out


def _debconf_db_places(value: bytes) -> list[bytes] | None:
    """The places a DEBCONF_DB_* value names (each option that is a bare word, or a
    `filename:`/`directory:` one), or None where it is not `Driver{options}`."""
    m = _DEBCONF_DB.fullmatch(value)
    if m is None:
        return None
    out = []
    for w in (m.group(2) or b"").split():
        k, sep, v = w.partition(b":")
        if not sep or not _WORD.fullmatch(k):
            out.append(w)  # `/a/b:c` is no `key:value` to debconf: a filename
        elif k.lower() in (b"filename", b"directory") or b"/" in v:
            out.append(v)
    return out


def own_config_env(environ: Mapping[bytes, bytes]) -> dict[bytes, bytes | None]:
    """Replacements for inherited variables that name another user's configuration or code
    (None: leave it out): a list keeps its other entries. See _CONFIG_VARS."""
    out: dict[bytes, bytes | None] = {}
    plat = environ.get(b"PYTHONPLATLIBDIR")
    if plat and (b"/" in plat or plat in (b".", b"..")):
        out[b"PYTHONPLATLIBDIR"] = None  # `../../DIR`: Python's standard library from DIR
    for k in (*_CONFIG_VARS, *_CONFIG_LISTS, *_LOADER_LISTS, _PERL_OPT, *_DEBCONF_DBS,
              *_COMPILER_VARS, *_FLAG_ENV_VARS, *_pip_paths(environ)):  # fmt: skip
        v = environ.get(k)
        if not v:
            continue
        key = (k, v)
        if key not in _CONFIG_SEEN:
            if k in _LOADER_LISTS:
                new = None if any(_foreign_lib(k, x) for x in _LOADER_SPLIT.split(v)) else v
            elif k == _PERL_OPT:
                places = _perl_opt_places(v)
                new = None if places is None or any(_foreign_place(p) for p in places) else v
            elif k in _COMPILER_VARS:
                try:
                    words = [os.fsencode(w) for w in shlex.split(os.fsdecode(v))]
                except ValueError:
                    words = [b"?/"]  # not a command line: judged as a relative path
                places = [w for w in words if b"/" in w]
                new = (
                    None
                    if any(map(_foreign_place, _with_host_cc(places)))
                    # `CC="gcc -B DIR"`: DIR judged by all it holds, as in CFLAGS (redteam-24)
                    or any(_foreign_gcc_dir(b, b_option=True) for b in _gcc_dirs_of_flags(v))
                    else v
                )
            elif k in _FLAG_ENV_VARS:
                # gcc's own variables: ld's -B keywords inside `-Wl,` name no place
                j = ld_keywords_out(v) if os.fsdecode(k) in LD_KEYWORD_VARS else v
                places = _flag_places(j)
                new = (
                    None
                    if places is None
                    or any(map(_foreign_place, _with_host_cc(places)))
                    or any(_foreign_gcc_dir(b, b_option=True) for b in _gcc_dirs_of_flags(j))
                    else v
                )
            elif k in _DEBCONF_DBS:
                places = _debconf_db_places(v)
                new = None if places is None or any(_foreign_place(p) for p in places) else v
            elif k.startswith(b"PIP_") and k not in _CONFIG_VARS:
                new = None if any(_foreign_place(p) for p in _pip_places(v)) else v
            elif k == b"GCC_EXEC_PREFIX":
                new = None  # gcc searches P/../../MACHINE/bin/ too: outside what it names
            elif k in _CONFIG_LISTS:
                parts = v.split(b":")
                foreign = _foreign_gcc_dir if k == b"COMPILER_PATH" else _foreign_place
                kept = [x for x in parts if x and not foreign(x)]
                new = v if kept == parts else (b":".join(kept) or None)
            else:
                new = None if _foreign_place(v) else v
            _CONFIG_SEEN[key] = new
        if _CONFIG_SEEN[key] != v:
            out[k] = _CONFIG_SEEN[key]
    return out


def _pip_cache_env(env: Mapping[bytes, bytes]) -> dict[bytes, bytes]:
    """PIP_NO_CACHE_DIR=1 where the cache root's pip would use by default
    (`${XDG_CACHE_HOME:-$HOME/.cache}/pip`, of the environment already scrubbed) is a place
    another user can change: pip (23.0.1 `check_path_owner`) asks only that its top directory
    be root's, so a root-owned 0777 `pip/` (a shared cache made under umask 000, or
    `chmod -R 777`) took uid 65534's `http/` entries, and root's pip used its index page
    (revalidated: the index answered 304 to the entry's future Last-Modified) and its wheel
    (fresh for a year): a `.pth` in root's venv (tests/security/test_shared_pip_cache.py).
    One that does not exist yet under a sticky or shared directory is anyone's to create
    after pip's check. A PIP_CACHE_DIR or PIP_NO_CACHE_DIR that was kept is root's choice."""
    if b"PIP_CACHE_DIR" in env or b"PIP_NO_CACHE_DIR" in env:
        return {}
    base = env.get(b"XDG_CACHE_HOME", b"").strip()  # platformdirs: blank means unset
    if not base:
        home = env.get(b"HOME")
        if not home:
            return {b"PIP_NO_CACHE_DIR": b"1"}  # pip's `~` is then the passwd home: not judged
        base = os.path.join(home, b".cache")
    return {b"PIP_NO_CACHE_DIR": b"1"} if _foreign_place(os.path.join(base, b"pip")) else {}


def scrubbed_environ(
    environ: Mapping[bytes, bytes],
    home_env: Callable[[bytes | None], dict[bytes, bytes]] | None = None,
) -> dict[bytes, bytes]:
    """environ less what names another user's configuration or code: HOME (own_home_env, or
    the caller's `home_env` function) and the variables own_config_env leaves out."""
    home = (home_env or own_home_env)(environ.get(b"HOME"))
    out = {**environ, **home}
    for k, v in own_config_env(environ).items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = v
    out.update(_pip_cache_env(out))
    return out


# options that make a compiler or linker run, load or write a file it names (remedy.trust
# refuses them in NVCC_*_FLAGS; a step's CFLAGS-like variables are judged by them here)
RUN_LOAD_WRITE_OPTIONS = frozenset({
    "-wrapper", "-specs", "--specs", "-o", "--output", "--output-file", "-odir",
    "--output-directory", "-include", "-imacros", "--sysroot", "-isysroot", "-iprefix",
    "-T", "--script", "--plugin", "-plugin", "--dependency-file", "--dependency-output",
    "--run", "-run", "--run-args", "-run-args", "--options-file", "-optf", "--keep", "-keep",
    "--keep-dir", "-keep-dir", "-dumpdir", "-dumpbase", "-aux-info", "--ld-path", "-fuse-ld",
    "--coverage", "-ftest-coverage", "-dryrun", "--dryrun",
})  # fmt: skip
# (-include, -imacros, -isysroot, -iprefix joined to their value too: `-includefoo.h`)
RUN_LOAD_WRITE_PREFIXES = ("@", "-M", "-include", "-imacros", "-isysroot", "-iprefix", "-fplugin", "-fdump", "-fprofile", "-fauto-profile", "-fopt-info",
               "-fcallgraph-info", "-save-temps", "--save-temps", "-specs=", "--specs=",
               "-wrapper", "-iwithprefix", "--sysroot=", "-o/", "-T/", "-Map", "--Map")  # fmt: skip
