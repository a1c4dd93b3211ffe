"""remedy's fact agent: the login script and the main fact batch in ONE process on the host.

Why (issue 18): the shell scripts (remedy.facts.collect.main_script, envs.login_env_script)
start ~100 processes a host (stat, readlink, grep, head, cat, timeout ...) over three SSH
sessions; on a fleet the hosts' CPU is the bound. This file is sent by the controller, from
remedy's own package, over stdin to the host's /usr/bin/python3 (`-I -S -`, itself
trust-checked first: remedy.facts.agent). It does the stats, reads, directory walks, greps
and trust checks in-process and starts only the binaries whose output is the fact
(nvidia-smi, nvcc/ptxas --version, compilers, systemctl), each only after the same trust
check the shell does (remedy.trust.SH_TRUST), by its checked real path.

It prints, byte for byte, the sections the shell scripts would print (names, args, bodies)
as JSON lines `[name, arg, body]`, each the raw bytes in base64: the controller reads them as
data with the shell path's own parsers, so the facts are the same by construction. Every
helper below names the shell construct it stands for. Where they differ on purpose: a FIFO
or device named like a file grep would read is not read (the shell's grep would block on
it), and a METADATA file is tested for NUL bytes (grep's `binary file`) in the part read.

Runs on the host's python3 >= 3.8 (posix_spawn; older ones exit 92 and get the shell
scripts), stdlib builtins only; nothing here may depend on the controller. remedy itself
never imports it (tests do).
"""

# (only builtin modules at start-up: json, re, subprocess, fnmatch or signal would double
# the interpreter's start on every host; re is imported where systemd's units are read)
import binascii
import errno
import os
import pwd
import select
import stat
import sys
import time

ENV = os.environb
ME = os.geteuid()
NL = b"\n"
_out = sys.stdout.buffer
_cur = None  # the open section: [name, arg, bytearray body]
TKSEEN = b""
PYSEEN = b""
TRUSTED = set()  # directories found trusted (the shell's _tok)
REQ = {}
P0 = [b""]  # the session's PATH, before the prelude's additions
SEARCH = [b""]  # where command_v looks: P0, then the system PATH
LOGIN_ENV = []  # the session's environment as the agent started
READ_CAP = 64 << 20  # what remedy keeps of a host command's output (transport.base.OUTPUT_CAP)


# ---- the marker protocol ----------------------------------------------------------------


def _b64(data):
    return binascii.b2a_base64(bytes(data), newline=False)


def _flush():
    """One JSON line: ["NAME", "ARG", "BODY"], each the raw bytes in base64."""
    global _cur
    if _cur is not None:
        name, arg, body = _cur
        _out.write(b'["' + _b64(name) + b'","' + _b64(arg) + b'","' + _b64(body) + b'"]\n')
    _cur = None


def m(*args):
    """`m NAME ARGS...`: printf '\\n%s %s\\n' "$T" "$*" (a newline in an arg ends the marker
    line there; the rest starts the body, as the stream's splitter would see it)."""
    global _cur
    _flush()
    head = b" ".join(args)
    rest = b""
    if NL in head:
        head, rest = head.split(NL, 1)
        rest += NL
    name, _, arg = head.partition(b" ")
    _cur = [name, arg, bytearray(rest)]


def w(data):
    """Output into the open section (before the first marker it is dropped, as the parser does)."""
    if _cur is not None and data:
        _cur[2] += data


# ---- file tests and reads ---------------------------------------------------------------


def _mode(p, get=os.stat):
    """P's st_mode (os.stat or os.lstat), None where it cannot be stat'ed."""
    try:
        return get(p).st_mode
    except (OSError, ValueError):
        return None


def exists(p):  # [ -e ]
    return _mode(p) is not None


def isdir(p):  # [ -d ]
    return stat.S_ISDIR(_mode(p) or 0)


def isfile(p):  # [ -f ]
    return stat.S_ISREG(_mode(p) or 0)


def islink(p):  # [ -L ]
    return stat.S_ISLNK(_mode(p, os.lstat) or 0)


def canx(p):  # [ -x ]
    try:
        return os.access(p, os.X_OK)
    except (OSError, ValueError):
        return False


def readlink(p):  # "$(readlink -- P)"
    try:
        return os.readlink(p).rstrip(NL)
    except (OSError, ValueError):
        return b""


def cd_p(p):
    """`$(cd -P -- P && pwd -P)`: the physical directory, or None where cd fails."""
    q = p or b"."
    if not isdir(q) or not canx(q):
        return None
    return os.path.realpath(q).rstrip(NL)


def strip_dir(p):  # ${X%/*}
    return p.rsplit(b"/", 1)[0] if b"/" in p else p


def base(p):  # ${d##*/}
    return p.rsplit(b"/", 1)[-1]


def read(p, limit=None):
    """cat / head -c LIMIT of a regular file: the bytes (at most READ_CAP), or b"" where it
    cannot be read. Opened O_NONBLOCK and judged by the handle: a file its owner swapped for
    a FIFO (or a link to one, to /proc/kmsg) after the caller's `isfile` look made root's
    agent wait for ever, and a file growing (or a /proc file: size 0) was read to no end."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        cap = READ_CAP if limit is None else limit
        chunks, n = [], 0
        while n < cap:  # (read(n) allocates n bytes first: 64 MiB for each file)
            b = os.read(fd, min(cap - n, 1 << 20))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        return b"".join(chunks)
    except OSError:
        return b""
    finally:
        os.close(fd)


def head_lines(p, n):  # head -n N
    data = read(p)
    out = data.split(NL)
    return NL.join(out[:n]) + (NL if len(out) > n else b"")


def _text(p, limit=None):
    """What grep reads of a file (its first `limit` bytes): None for no file, a directory or
    an unreadable one, and for a binary file (a NUL byte: GNU grep 3.5+ says `binary file
    matches` on stderr and prints no line)."""
    if not isfile(p):  # (a FIFO or device is not read: the shell's grep would hang on it)
        return None
    data = read(p, limit)
    if b"\0" in data:
        return None
    return data


def grep(paths, prefixes, maxcount=0, with_name=False):
    """grep [-m N] [-H] '^(A|B)' FILES...: lines starting with one of prefixes."""
    out = []
    for p in paths:
        data = _text(p, 16384 if maxcount else None)
        if data is not None and maxcount and len(data) == 16384:
            # the first lines answered -m N only if they were all whole lines; else all of it
            hits = _line_starts(data, prefixes)[:maxcount]
            if len(hits) < maxcount or data.find(NL, hits[-1]) < 0:
                data = _text(p)
        if data is None:
            continue
        for n, start in enumerate(_line_starts(data, prefixes), 1):
            end = data.find(NL, start)
            line = data[start:] if end < 0 else data[start:end]
            out.append((p + b":" if with_name else b"") + line + NL)
            if maxcount and n >= maxcount:
                break
    return b"".join(out)


def _line_starts(data, prefixes):
    """Offsets of the lines of data starting with one of prefixes, in order (bytes.find, no
    split: METADATA files carry whole READMEs)."""
    hits = []
    for pre in prefixes:
        if data.startswith(pre):
            hits.append(0)
        needle = NL + pre
        i = data.find(needle)
        while i >= 0:
            hits.append(i + 1)
            i = data.find(needle, i + 1)
    return sorted(set(hits))


def _meta(c):
    return b"*" in c or b"?" in c or b"[" in c


_POOL = {}  # (dir, dots too, suffix) -> names: a site-packages is globbed ~7 times a batch


def _filter(d, names, pattern):
    """The names of directory d a glob component matches (dash: `*` skips a leading dot
    unless the pattern has one). One `*` (all of remedy's patterns but `*venv*`): names
    with the pattern's suffix are listed once per directory, then filtered by its prefix."""
    dots = pattern.startswith(b".")
    key = (d, dots, b"")
    if key not in _POOL:
        _POOL[key] = names if dots else [n for n in names if not n.startswith(b".")]
    pool = _POOL[key]
    if b"?" not in pattern and b"[" not in pattern and pattern.count(b"*") == 1:
        first, last = pattern.split(b"*")
        key = (d, dots, last)
        if key not in _POOL:
            _POOL[key] = [n for n in pool if n.endswith(last)]
        least = len(first) + len(last)
        return [n for n in _POOL[key] if n.startswith(first) and len(n) >= least]
    if b"?" not in pattern and b"[" not in pattern:
        return [n for n in pool if _stars(n, pattern.split(b"*"))]
    import fnmatch  # (none of remedy's patterns: re and functools cost ~8 ms to import)

    return [n for n in pool if fnmatch.fnmatchcase(n, pattern)]


def _stars(name, parts):
    """fnmatch for a pattern of literal parts joined by `*`."""
    first, last = parts[0], parts[-1]
    if len(name) < sum(len(x) for x in parts):
        return False
    if not name.startswith(first) or not name.endswith(last):
        return False
    i, end = len(first), len(name) - len(last)
    for mid in parts[1:-1]:
        j = name.find(mid, i, end)
        if j < 0:
            return False
        i = j + len(mid)
    return True


_LISTED = {}


def listdir(d):
    """os.listdir, once per directory for the whole batch (nothing here writes)."""
    if d not in _LISTED:
        try:
            _LISTED[d] = os.listdir(d)
        except (OSError, ValueError):
            _LISTED[d] = None
    return _LISTED[d]


def glob(lit, pattern):
    """The shell word "$LIT"PATTERN (LIT quoted, PATTERN's * ? [ raw): its matches sorted
    bytewise as dash sorts them, or the word itself when nothing matches or it has no
    pattern. A literal part after the last pattern must exist (lstat), as in dash."""
    comps = pattern.split(b"/")
    word = lit + pattern
    metas = [_meta(c) for c in comps]
    if not any(metas):
        return [word]
    last = max(i for i, x in enumerate(metas) if x)
    found = []

    def walk(cur, i, first):
        if i == len(comps):
            found.append(cur)
            return
        rest = comps[i:]
        if i > last:
            path = cur + (b"" if first else b"/") + b"/".join(rest)
            try:
                os.lstat(path)
            except (OSError, ValueError):
                return
            found.append(path)
            return
        c = comps[i]
        if not metas[i]:
            walk(cur + (b"" if first else b"/") + c, i + 1, False)
            return
        d = cur if cur else (b"." if first else b"/")
        names = listdir(d)
        if names is None:
            return
        for name in _filter(d, names, c):
            walk(cur + (b"" if first else b"/") + name, i + 1, False)

    walk(lit, 0, True)
    return sorted(found) if found else [word]


# ---- the trust check (remedy.trust.SH_TRUST, in-process) ----------------------------------


def _readlink_f(p):
    """readlink -f: None where it fails (empty, a missing directory on the way, a loop)."""
    if not p:
        return None
    try:
        r = os.path.realpath(p)
    except (OSError, ValueError):
        return None
    parent = r.rsplit(b"/", 1)[0] or b"/"
    if not isdir(parent):
        return None
    if islink(r):  # a loop: realpath gave up on it
        return None
    return r


def _user(uid):
    try:
        return pwd.getpwuid(uid).pw_name.encode("utf-8", "surrogateescape")
    except (KeyError, OverflowError):
        return b"UNKNOWN"


def trusted(p):
    """`trusted FILE` -> (ok, WHY, RP): FILE's real path and every directory above it owned
    by root or by us and not writable by group or others (a root-owned sticky dir is fine)."""
    r = _readlink_f(p)
    if r is None:
        return False, p + b" cannot be resolved", b""
    chain = []
    t = r
    while True:
        if t in TRUSTED:
            break
        chain.append(t)
        if t == b"/":
            break
        t = t.rsplit(b"/", 1)[0] or b"/"
    for t in chain:
        try:
            st = os.lstat(t)
        except (OSError, ValueError):
            return False, t + b" cannot be checked (no stat)", r
        uid = st.st_uid
        mode = st.st_mode
        if uid != 0 and uid != ME:
            return False, b"%s owned by %s (uid %d)" % (t, _user(uid), uid), r
        if mode & 0o022 and not (stat.S_ISDIR(mode) and uid == 0 and mode & 0o1000):
            a = ("%o" % (mode & 0o7777)).encode()
            return False, b"%s writable by group or others (mode %s)" % (t, a), r
    for t in chain:
        if b"|" not in t:
            TRUSTED.add(t)
    return True, b"", r


def command_v(name):
    """`command -v NAME` as dash answers it: the first PATH entry holding an executable
    regular file (an empty entry is the current directory, answered as the bare name)."""
    for d in (SEARCH[0] or ENV.get(b"PATH", b"")).split(b":"):
        p = (d + b"/" + name) if d else name
        if isfile(p) and canx(p):
            return p
    return None


# ---- running the binaries whose output is the fact ------------------------------------------


def spawn(argv, merge=True, quiet=False):
    """Start argv (a path, or a name looked up on PATH) with stdin /dev/null and stdout (and
    stderr with merge; else stderr to /dev/null) on a pipe: (pid, read fd). posix_spawn, as
    subprocess would need ~8 ms of imports on every host. OSError where it cannot start."""
    r, wfd = os.pipe()
    acts = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, wfd, 1),
        (os.POSIX_SPAWN_DUP2, wfd, 2)
        if merge
        else (os.POSIX_SPAWN_OPEN, 2, "/dev/null", os.O_WRONLY, 0),
        (os.POSIX_SPAWN_CLOSE, wfd),
        (os.POSIX_SPAWN_CLOSE, r),
    ]
    fn = os.posix_spawn if b"/" in argv[0] else os.posix_spawnp
    try:
        try:
            pid = fn(argv[0], argv, ENV, file_actions=acts)
        except OSError as e:
            if e.errno != errno.ENOEXEC:
                raise
            pid = os.posix_spawn(b"/bin/sh", [b"/bin/sh"] + list(argv), ENV, file_actions=acts)
    except BaseException:
        os.close(r)
        os.close(wfd)
        raise
    os.close(wfd)
    return pid, r


SIGTERM, SIGKILL = 15, 9  # (Linux; the signal module imports enum, ~3 ms a host)


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        return


def finish(pid, fd, timeout, started):
    """Read the child's output to EOF (at most `timeout` s from `started`: then SIGTERM, as
    coreutils timeout sends, and status 124), reap it: (output, status as sh reports it)."""
    chunks = []
    poll = select.poll()
    poll.register(fd, select.POLLIN)
    timed_out = False
    try:
        while True:
            left = None if timeout is None else timeout - (time.monotonic() - started)
            if left is not None and left <= 0:
                if timed_out:
                    break
                timed_out = True
                _kill(pid, SIGTERM)
                timeout, started = 2, time.monotonic()
                continue
            if not poll.poll(None if left is None else max(int(left * 1000), 1)):
                continue
            data = os.read(fd, 65536)
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(fd)
    if timed_out:
        _kill(pid, SIGKILL)
    _, status = os.waitpid(pid, 0)
    if timed_out:
        return b"".join(chunks), 124
    if os.WIFSIGNALED(status):
        return b"".join(chunks), 128 + os.WTERMSIG(status)
    return b"".join(chunks), os.WEXITSTATUS(status)


RAN = {}


def run(argv, timeout=None, merge=True, quiet=False, memo=False):
    """Run argv; (stdout bytes, status). `timeout` stands for `to N` (coreutils timeout: 124
    past it, its own message and 126/127 when the binary cannot be started); merge for 2>&1;
    quiet for 2>/dev/null. memo: the same argv ran already (cc and gcc are one real path):
    its answer again."""
    key = (tuple(argv), timeout, merge, quiet)
    if memo and key in RAN:
        return RAN[key]
    try:
        pid, fd = spawn(argv, merge, quiet)
    except OSError as e:
        code = 127 if e.errno == errno.ENOENT else 126
        if timeout is None or not merge or quiet:
            return b"", code
        why = os.strerror(e.errno).encode()
        return b"timeout: failed to run command '%s': %s\n" % (argv[0], why), code
    got = finish(pid, fd, 600 if timeout is None else timeout, time.monotonic())
    if memo:
        RAN[key] = got
    return got


# ---- the collectors ---------------------------------------------------------------------

GPU = {}


def gpu_start():
    """GPU_BACKGROUND: nvidia-smi, trusted, started first; its sections come at the end."""
    x = command_v(b"nvidia-smi")
    if x is None:
        m(b"gpu.absent")
        return
    ok, why, rp = trusted(x)
    if not ok:
        m(b"gpu.untrusted", why)
        return
    argv = [rp] + [a.encode() for a in REQ["gpu_args"]]
    GPU["t0"] = time.monotonic()
    try:
        GPU["p"] = spawn(argv)
    except OSError:
        GPU["argv"] = argv  # it fails again at the end, with timeout's words


def gpu_end():
    """GPU_COLLECT."""
    if "p" in GPU:
        out, rc = finish(GPU["p"][0], GPU["p"][1], 20, GPU["t0"])
    elif "argv" in GPU:
        out, rc = run(GPU["argv"], 20)
    else:
        return
    m(b"gpu")
    w(out)
    m(b"gpu.rc", str(rc).encode())


def _nproc():
    """nproc: CPUs this process may use, OMP_NUM_THREADS / OMP_THREAD_LIMIT as coreutils."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1

    def first_int(v):
        v = (v or b"").split(b",")[0].strip()
        try:
            i = int(v)
        except ValueError:
            return 0
        return i if i > 0 else 0

    omp = first_int(ENV.get(b"OMP_NUM_THREADS"))
    if omp:
        n = omp
    lim = first_int(ENV.get(b"OMP_THREAD_LIMIT"))
    if lim and n > lim:
        n = lim
    return n


def host():
    """HostCollector.command()."""
    m(b"host.os")
    w(read(b"/etc/os-release"))
    m(b"host.uname")
    u = os.uname()
    w(os.fsencode(" ".join((u.sysname, u.release, u.machine)) + "\n"))
    m(b"host.cpus")
    w(b"%d\n" % _nproc())
    m(b"host.mem")
    w(grep([b"/proc/meminfo"], (b"MemTotal:",), 1))
    m(b"host.cc")
    for c in (b"gcc", b"g++", b"cc", b"c++", b"clang"):
        x = command_v(c)
        if x is None:
            continue
        ok, why, rp = trusted(x)
        if ok:
            out, _ = run([rp, b"-dumpfullversion", b"-dumpversion"], merge=False, memo=True)
            w(c + b"\t" + out.split(NL)[0] + NL)
        else:
            m(b"host.cc.untrusted", c, why)
            m(b"host.cc")
    m(b"host.who")
    try:
        user = pwd.getpwuid(ME).pw_name.encode("utf-8", "surrogateescape")
    except KeyError:
        user = b""
    w(b"HOME=%s\nUSER=%s\nSHELL=%s\n" % (ENV.get(b"HOME", b""), user, ENV.get(b"SHELL", b"")))


SVC = {"out": b""}


def services(names):
    """ServicesCollector.command()."""
    m(b"svc.boot")
    if not (isdir(b"/run/systemd/system") and command_v(b"systemctl")):
        w(b"no\n")
        return
    w(b"systemd\n")
    import re

    files = []
    for d in REQ["unit_dirs"]:
        d = d.encode()
        files += glob(d, b"/*.service") + glob(d, b"/*.service.d/*.conf")
    units = set()
    for f in files:
        if not isfile(f):
            continue
        if b"sglang" in read(f).lower():  # grep -l -s -i sglang
            for line in f.split(NL):  # | sed -e 's#\.d/[^/]*$##' -e 's#.*/##'
                line = re.sub(rb"\.d/[^/]*$", b"", line, count=1)
                units.add(re.sub(rb"^.*/", b"", line))
    u = NL.join(sorted(units))  # | sort -u
    m(b"svc.files")
    w(u + NL)
    keep = [x for x in u.split(NL) if not x.endswith(b"@.service") and x]
    argv = [a.encode() for a in REQ["show"]] + [b"--", b"*.service"] + [n.encode() for n in names]
    out, rc = run(argv + keep, 15)
    out = out.rstrip(NL)
    SVC["out"] = out
    m(b"svc.show")
    w(out + NL)
    m(b"svc.rc", str(rc).encode())
    m(b"svc.passwd")  # getent passwd -- USER for each User= (the user database, via NSS)
    for u in sorted({x[5:] for x in out.split(NL) if x.startswith(b"User=") and x[5:]}):
        try:
            name = u.decode("utf-8", "surrogateescape")
            e = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        except (KeyError, ValueError, OverflowError):
            continue
        f = [e.pw_name, e.pw_passwd, str(e.pw_uid), str(e.pw_gid), e.pw_gecos, e.pw_dir, e.pw_shell]
        w(u + b"\t" + ":".join(f).encode("utf-8", "surrogateescape") + NL)


def svc_pythons():
    """SVCPY: interpreters named by sglang units' ExecStart."""
    if not SVC["out"]:
        return []
    import re

    found = set()
    for line in SVC["out"].split(NL):
        if line.startswith(b"ExecStart=") and b"sglang" in line.lower():
            found.update(re.findall(rb'/[^ ;"]*/bin/python[0-9.]*', line))
    return sorted(found)


def _tk_version(name, tool):
    """if trusted "$P/bin/NAME"; then m tk.NAME; to 10 "$RP" --version 2>&1; m tk.NAME.rc $?
    else m tk.NAME.untrusted "$WHY"; UT=1; fi -- True where UT=1."""
    ok, why, rp = trusted(tool)
    if not ok:
        m(b"tk." + name + b".untrusted", why)
        return True
    m(b"tk." + name)
    out, rc = run([rp, b"--version"], 10)
    w(out)
    m(b"tk." + name + b".rc", str(rc).encode())
    return False


def tk(P, kind, python, origin):
    """SH_TK's tk(): one toolkit prefix."""
    global TKSEEN
    if not P or NL in P:
        return
    m(b"tk.begin", P)
    w(b"kind=%s\npython=%s\norigin=%s\n" % (kind, python, origin))
    if not exists(P):
        m(b"tk.missing")
        m(b"tk.end")
        return
    if not isdir(P):
        m(b"tk.notdir")
        m(b"tk.end")
        return
    R = cd_p(P) or b""
    m(b"tk.real", R)
    if b"|" + R + b"|" in TKSEEN:
        m(b"tk.alias")
        m(b"tk.end")
        return
    TKSEEN += b"|" + R + b"|"
    ut = False
    m(b"tk.files")
    for f in REQ["files"]:
        f = f.encode()
        pf = P + b"/" + f
        if islink(pf):
            w(b"L %s\t%s\n" % (f, readlink(pf)))
        if exists(pf):
            w(b"e %s\n" % f)
    for d in REQ["lib_dirs"]:
        d = d.encode()
        pd = P + b"/" + d
        if not isdir(pd):
            continue
        if islink(pd):
            w(b"L %s\t%s\n" % (d, readlink(pd)))
        w(b"d %s\n" % d)
        for f in [pd + b"/libcudart.so"] + glob(pd, b"/libcudart.so.*") + [pd + b"/libcuda.so"]:
            if exists(f):
                w(b"e %s/%s\n" % (d, base(f)))
    for d in glob(P, b"/targets/*-linux"):
        if isdir(d):
            w(b"t %s\n" % base(d))
    m(b"tk.cudart")
    for h in REQ["header_dirs"]:
        h = h.encode()
        f = P + b"/" + h + b"/cuda_runtime_api.h"
        if isfile(f):
            w(h + NL)
            w(grep([f], (b"#define CUDART_VERSION",), 1))
            break
    nvcc = P + b"/bin/nvcc"
    if isfile(nvcc):
        if read(nvcc, 2).rstrip(NL) == b"#!":
            m(b"tk.nvcc.script")
            w(head_lines(nvcc, 40))
        ut = _tk_version(b"nvcc", nvcc) or ut
    ptxas = P + b"/bin/ptxas"
    if isfile(ptxas):
        ut = _tk_version(b"ptxas", ptxas) or ut
    if ut:
        if isfile(P + b"/version.json"):
            m(b"tk.version.json")
            w(read(P + b"/version.json", 65536))
        if isfile(P + b"/version.txt"):
            m(b"tk.version.txt")
            w(read(P + b"/version.txt", 4096))
    for c in (b"nvvm/bin/cicc", b"lib/nvidia-cuda-toolkit/bin/cicc"):
        if isfile(P + b"/" + c):
            m(b"tk.cicc", c)
            w(cicc_build(P + b"/" + c))
            break
    prof = P + b"/bin/nvcc.profile"
    if isfile(prof):
        m(b"tk.profile")
        w(grep([prof], (b"TOP", b"LIBRARIES", b"INCLUDES", b"SYSTEM_INCLUDES")))
    m(b"tk.pip")
    metas = (
        glob(P, b"/dist-info/*.dist-info/METADATA")
        + glob(P, b"/../../nvidia_*.dist-info/METADATA")
        + glob(P, b"/../../cuda_toolkit-*.dist-info/METADATA")
    )
    w(grep(metas, (b"Name: ", b"Version: "), 2, True))
    m(b"tk.end")


_DIGITS = b"0123456789"
_RUN = b"0123456789."
_NEEDLE = b"/compiler."


def _cicc_at(view, i):
    """The match of cuda_[0-9]+\\.[0-9]+\\.r[0-9.]*/compiler\\.[0-9]* holding the
    "/compiler." at view[i], or None. Each part before it is a maximal run (a shorter one
    would border a character of its own class), so walking back decides it; and no match
    holds two "/compiler.", so the first one that matches is grep's first match."""

    def back(j, chars):
        while j > 0 and view[j - 1] in chars:
            j -= 1
        return j

    j = back(i, _RUN)
    if j < 2 or view[j - 1 : j] != b"r" or view[j - 2 : j - 1] != b".":
        return None
    k = back(j - 2, _DIGITS)
    if k == j - 2 or k < 1 or view[k - 1 : k] != b".":
        return None
    q = back(k - 1, _DIGITS)
    if q == k - 1 or q < 5 or view[q - 5 : q] != b"cuda_":
        return None
    e = i + len(_NEEDLE)
    while e < len(view) and view[e] in _DIGITS:
        e += 1
    return view[q - 5 : e]


def _libc():
    """glibc's mmap/memmem/munmap through ctypes (memmem scans a 70 MB cicc in about half
    the CPU of mmap.find), or None where ctypes is missing."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        vp, sz, i = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int
        libc.mmap.restype = vp
        libc.mmap.argtypes = [vp, sz, i, i, i, ctypes.c_long]
        libc.memmem.restype = vp
        libc.memmem.argtypes = [vp, sz, ctypes.c_char_p, sz]
        libc.munmap.restype = i
        libc.munmap.argtypes = [vp, sz]
        return ctypes, libc
    except (ImportError, OSError, AttributeError):
        return None


def _scan(data_at, size, find):
    """The first match over a file: find(start) -> offset of the next "/compiler." or -1;
    data_at(lo, hi) -> those bytes."""
    pos = find(0)
    while pos >= 0:
        lo = max(0, pos - 4096)
        got = _cicc_at(data_at(lo, min(size, pos + 4096)), pos - lo)
        if got is not None:
            return got + NL
        pos = find(pos + 1)
    return b""


def cicc_build(path):
    """grep -a -o -m1 'cuda_N.N.rN.N/compiler.N' FILE | head -n1, over the file in place."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return b""
    try:
        size = os.fstat(fd).st_size
        if size == 0:
            return b""
        lib = _libc()
        if lib is not None:
            ctypes, libc = lib
            addr = libc.mmap(None, size, 1, 1, fd, 0)  # PROT_READ, MAP_SHARED
            if addr and addr != ctypes.c_void_p(-1).value:
                try:

                    def find(start):
                        r = libc.memmem(addr + start, size - start, _NEEDLE, len(_NEEDLE))
                        return r - addr if r else -1

                    return _scan(lambda lo, hi: ctypes.string_at(addr + lo, hi - lo), size, find)
                finally:
                    libc.munmap(addr, size)
        import mmap

        data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        try:
            return _scan(lambda lo, hi: data[lo:hi], size, lambda start: data.find(_NEEDLE, start))
        finally:
            data.close()
    except (OSError, ValueError):
        return b""
    finally:
        os.close(fd)


def has_cuda(p):
    return (
        exists(p + b"/bin/nvcc")
        or exists(p + b"/bin/ptxas")
        or exists(p + b"/include/cuda_runtime_api.h")
        or exists(p + b"/targets/x86_64-linux/include/cuda_runtime_api.h")
    )


SITE_GLOBS = (
    b"/lib/python3*/site-packages",
    b"/lib/python3*/dist-packages",
    b"/lib/python3/dist-packages",
    b"/local/lib/python3*/dist-packages",
)
REQ_GLOBS = (
    b"/torch-*.dist-info/METADATA",
    b"/cuda_toolkit-*.dist-info/METADATA",
    b"/sglang-*.dist-info/METADATA",
    b"/flashinfer_python-*.dist-info/METADATA",
    b"/sglang_kernel-*.dist-info/METADATA",
)
SITE_SCRIPT = b"import sys,site\nprint(sys.prefix)\nfor s in site.getsitepackages(): print(s)"


def py(X, origin):
    """SH_PY's py(): one interpreter's environment."""
    global PYSEEN
    if not X or NL in X:
        return
    if not exists(X):
        m(b"py.begin", X)
        w(b"origin=%s\n" % origin)
        m(b"py.missing")
        m(b"py.end")
        return
    xd = strip_dir(X)
    b = cd_p(xd)
    if b is None:
        b = xd
    D = strip_dir(b) or b"/"
    S = []
    for g in SITE_GLOBS:
        for s in glob(D, g):
            if isdir(s) and s not in S:
                S.append(s)
    pu = b""
    if not S and canx(X):
        ok, why, _ = trusted(xd)
        if not ok:
            pu = why
        elif trusted(X)[0]:
            out, _ = run([X, b"-I", b"-S", b"-c", SITE_SCRIPT], 10, merge=False, quiet=True)
            out = out.rstrip(NL)
            D, _, rest = out.partition(NL)
            S = [s for s in rest.split(NL) if s]
    R = cd_p(D) or b""
    m(b"py.begin", X)
    w(b"origin=%s\nprefix=%s\n" % (origin, D))
    m(b"py.real", R)
    if pu:
        m(b"py.untrusted", pu)
    if b"|" + R + b"|" in PYSEEN:
        m(b"py.alias")
        m(b"py.end")
        return
    PYSEEN += b"|" + R + b"|"
    if isfile(D + b"/pyvenv.cfg"):
        m(b"py.cfg")
        w(read(D + b"/pyvenv.cfg"))
    for s in S:
        if not isdir(s):
            continue
        m(b"py.site", s)
        metas = glob(s, b"/*.dist-info/METADATA") + glob(s, b"/*.egg-info/PKG-INFO")
        w(grep(metas, (b"Name: ", b"Version: "), 2, True))
        if isfile(s + b"/torch/version.py"):
            m(b"py.torch")
            w(grep([s + b"/torch/version.py"], (b"__version__", b"cuda", b"git_version", b"hip")))
        m(b"py.req")
        reqs = []
        for g in REQ_GLOBS:
            reqs += glob(s, g)
        w(grep(reqs, (b"Requires-Dist: ",), 0, True))
        fi = s + b"/flashinfer/data/cccl/libcudacxx/include"
        if isdir(fi):
            m(b"py.ficccl")
            w(fi + NL)
        for t in (b"ptxas", b"ptxas-blackwell"):
            tp = s + b"/triton/backends/nvidia/bin/" + t
            if not isfile(tp):
                continue
            ok, why, rp = trusted(tp)
            if ok:
                m(b"py.triton", t)
                w(run([rp, b"--version"], 10)[0])
            else:
                m(b"py.triton.untrusted", t, why)
        if isdir(s + b"/nvidia/cu13"):
            tk(s + b"/nvidia/cu13", b"pip-cu13", D, b"python:" + X)
        if isdir(s + b"/nvidia/cuda_nvcc"):
            tk(s + b"/nvidia/cuda_nvcc", b"pip-cu12", D, b"python:" + X)
    m(b"py.end")


LOOKED = {"n": [], "y": []}


def look(path, label):
    """SH_LOOK's look(): which PATH dirs hold nvcc / python3."""
    m(b"path", label)
    for d in path.split(b":"):
        if not d:
            continue
        n = isfile(d + b"/nvcc") and canx(d + b"/nvcc")
        y = isfile(d + b"/python3") and canx(d + b"/python3")
        w(b"%s\t%d\t%d\n" % (d, n, y))
        if n:
            LOOKED["n"].append(strip_dir(d))
        if y:
            LOOKED["y"].append(d + b"/python3")


def drain(label):
    """SH_LOOK's drain(): probe what look() found."""
    ln = [x for x in NL.join(LOOKED["n"]).split(NL) if x]
    ly = [x for x in NL.join(LOOKED["y"]).split(NL) if x]
    LOOKED["n"], LOOKED["y"] = [], []
    for p in ln:
        tk(p, b"", b"", b"PATH:" + label)
    for x in ly:
        py(x, b"PATH:" + label)


def _env(name):
    return ENV.get(name, b"")


def words(spec):
    """[home?, pattern] pairs from the request -> the words they expand to."""
    out = []
    for at_home, pattern in spec:
        lit = _env(b"HOME") if at_home else b""
        out += glob(lit, pattern.encode())
    return out


def login():
    """login_env_script(): the session's environment and the profile files' text (read,
    never sourced), as its own sections; taken before the prelude touched the environment."""
    m(b"shell", _env(b"SHELL") or b"/bin/sh")
    m(b"uid", b"%d" % ME)
    m(b"env")
    w(b"".join(k + b"=" + v + b"\0" for k, v in LOGIN_ENV))
    m(b"env.end")
    cap = REQ["profile_cap"]
    files = [f.encode() for f in REQ["system_profiles"]] + glob(b"", b"/etc/profile.d/*.sh")
    for f in files:
        if isfile(f) and os.access(f, os.R_OK):
            m(b"profile", f)
            w(read(f, cap))
    home = _env(b"HOME")
    for f in REQ["user_profiles"]:
        f = home + b"/" + f.encode()
        if isfile(f) and os.access(f, os.R_OK):
            m(b"profile", f)
            w(read(f, cap))
            break
    f = home + b"/.bashrc"
    if isfile(f) and os.access(f, os.R_OK):
        m(b"profile", f)
        w(read(f, cap))
    m(b"profile.end")


def spec_look():
    """`look`'s line for dirs a login PATH usually adds (~/bin, ~/.local/bin: Debian's
    ~/.profile): where the follow-up would look only there and finds nothing to probe, the
    controller answers it from these lines instead of another round trip."""
    m(b"spec.look")
    home = _env(b"HOME")
    for rel in REQ["spec_dirs"]:
        d = home + b"/" + rel.encode()
        if NL in d:
            continue
        n = isfile(d + b"/nvcc") and canx(d + b"/nvcc")
        y = isfile(d + b"/python3") and canx(d + b"/python3")
        w(b"%s\t%d\t%d\n" % (d, n, y))


def main_batch():
    """main_script()'s order, section for section."""
    p0 = P0[0]
    gpu_start()
    host()
    services(REQ["services"])
    svcpy = svc_pythons()
    look(p0, b"session")
    drain(b"session")
    look(REQ["systemd_path"].encode(), b"systemd-default")
    drain(b"systemd-default")
    for p in words(REQ["tk_globs"]):
        if isdir(p) and has_cuda(p):
            tk(p, b"", b"", b"glob")
    for v in (b"CUDA_HOME", b"CUDA_PATH"):
        x = _env(v)
        if x:
            tk(x, b"", b"", b"session:" + v)
    cp = _env(b"CONDA_PREFIX")
    if cp and has_cuda(cp):
        tk(cp, b"conda", b"", b"session:CONDA_PREFIX")
    for x in words(REQ["py_globs"]):
        if isfile(x) and canx(x):
            py(x, b"glob")
    if _env(b"VIRTUAL_ENV"):
        py(_env(b"VIRTUAL_ENV") + b"/bin/python", b"session:VIRTUAL_ENV")
    if cp:
        py(cp + b"/bin/python", b"session:CONDA_PREFIX")
    for x in svcpy:
        py(x, b"service")
    gpu_end()


def main(request):
    """Run the batch the request names; the last section is always `end`."""
    global TKSEEN, PYSEEN
    if sys.version_info < (3, 8) or not hasattr(os, "posix_spawn"):
        sys.exit(92)  # (no posix_spawn: the controller runs the shell batch instead)
    REQ.update(request)
    # the transport ran us with the fixed system PATH and kept the session's in this
    # variable (remedy.transport.base.SESSION_PATH_VAR): the session's view has it as PATH
    tp = ENV.get(b"PATH", b"")
    sp = ENV.pop(b"REMEDY_SESSION_PATH", None)
    if sp is not None:
        ENV[b"PATH"] = sp
    env = list(ENV.items())
    was = sys.argv[1] if len(sys.argv) > 1 else ""  # (remedy.facts.agent.WRAPPER)
    if was == "LC_ALL-was-unset":
        env = [(k, v) for k, v in env if k != b"LC_ALL"]
    elif was == "LC_ALL-was-empty":
        env = [(k, b"" if k == b"LC_ALL" else v) for k, v in env]
    LOGIN_ENV[:] = env
    # the shell batch's prelude: C locale and a full PATH for everything it starts
    P0[0] = _env(b"PATH")
    ENV[b"LC_ALL"] = b"C"
    # discovery searches the session's PATH, then the system's (the shell's SP); what the
    # agent starts gets the system PATH only (the shell prelude's PATH)
    SEARCH[0] = (P0[0] + b":" if P0[0] else b"") + REQ["extra_path"].encode()
    # remedy's own tools: the PATH the transport judged (remedy.syspath.own_tools_path: a
    # /usr/local directory holding another user's program left out) when it is one of its
    # forms, else the distribution's directories
    own = tp.decode("latin-1") in REQ.get("own_paths", ())
    ENV[b"PATH"] = tp if own else REQ.get("base_path", "/usr/sbin:/usr/bin:/sbin:/bin").encode()
    for op in REQ["ops"]:
        kind, args = op[0], [a.encode("latin-1") for a in op[1:]]
        if kind == "main":
            main_batch()
        elif kind == "login":
            login()
        elif kind == "spec":
            spec_look()
        elif kind == "tk":
            tk(*args)
        elif kind == "py":
            py(*args)
        elif kind == "seen":
            TKSEEN, PYSEEN = args
    m(b"end")
    _flush()
    _out.flush()
