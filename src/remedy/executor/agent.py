#!/usr/bin/env python3
"""remedy's host-side helper: lock, journal, checkpoint, restore, atomic writes.

The controller renders and decides; this small stdlib-only script does the few things that
must be atomic and durable on the host itself (Ansible's module split). It is sent to the
host and run with the host's python3 (>= 3.8). Every write is fsynced, and so is its
directory, before the command reports success. Output is one JSON object on stdout.

    agent.py lock-acquire STATE_DIR JSON     exit 3 + the holder's JSON when held
    agent.py lock-release STATE_DIR RUN_ID   exit 3 when held by another run
    agent.py lock-read STATE_DIR
    agent.py append FILE JSON                append one journal line
    agent.py read FILE                       the journal lines as a JSON list
    agent.py write FILE MODE < data          atomic write (temp + fsync + rename)
    agent.py capture DIR < spec.json         checkpoint paths and Python packages
    agent.py restore DIR                     put them back exactly
    agent.py snapshot < spec.json            digest of paths and packages (for tests)
    agent.py runs STATE_DIR                  list run ids with their last events
"""

import contextlib
import errno
import hashlib
import json
import os
import stat
import sys
import tarfile
import time


def out(obj, code=0):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
    sys.exit(code)


def fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def private_dir(path):
    # umask 077: makedirs gives `mode` to the leaf only; parents it creates (runs/) get 0700 too
    old = os.umask(0o077)
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    finally:
        os.umask(old)
    os.chmod(path, 0o700)


def atomic_write(path, data, mode=0o600):
    """temp + fsync + rename, all through the directory's handle: the temp name is random
    and created O_EXCL|O_NOFOLLOW, so a link planted in the directory is never written
    through."""
    path = os.path.normpath(os.path.abspath(path))
    with parent_of(path) as (dfd, name):
        tmp = f".{name}.remedy-tmp-{os.getpid()}-{os.urandom(6).hex()}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW, mode, dir_fd=dfd)
        try:
            try:
                os.write(fd, data)
                os.fchmod(fd, mode)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            raise
        os.fsync(dfd)


# -- lock -----------------------------------------------------------------------------------


def _held(path):
    """The lock's record; a lock file that is empty, cut short or not a JSON object (an older
    remedy killed between creating it and writing it) names no run: run_id "?", which
    `--break-lock ?` or a `resume` releases (nobody can be holding such a lock)."""
    with open(path, "rb") as f:
        raw = f.read(1 << 16)
    try:
        held = json.loads(raw)
    except ValueError:
        held = None
    if not isinstance(held, dict) or not isinstance(held.get("run_id"), str):
        return {"run_id": "?", "torn": True, "note": "unreadable lock file " + path}
    return held


def lock_acquire(state, info):
    private_dir(state)
    path = os.path.join(state, "lock.json")
    data = (json.dumps(json.loads(info)) + "\n").encode()
    # the whole record first, then linked into place: a kill at any point leaves either no
    # lock or a complete one, never an empty lock.json that blocks every later run
    tmp = os.path.join(state, f".lock-{os.getpid()}-{os.urandom(6).hex()}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW, 0o600)
    try:
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, path)
        except FileExistsError:
            out({"held": _held(path)}, 3)
        except OSError as exc:  # a file system without hard links: create, then write
            if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EMLINK):
                raise
            _lock_create(path, data)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
    fsync_dir(state)
    out({"acquired": True})


def _lock_create(path, data):
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW, 0o600)
    except FileExistsError:
        out({"held": _held(path)}, 3)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def lock_release(state, run_id):
    path = os.path.join(state, "lock.json")
    try:
        held = _held(path)
    except OSError:
        out({"released": False, "note": "no lock"})
    if held.get("run_id") != run_id:
        out({"held": held}, 3)
    os.unlink(path)
    fsync_dir(state)
    out({"released": True})


def lock_read(state):
    try:
        out({"held": _held(os.path.join(state, "lock.json"))})
    except OSError:
        out({"held": None})


# -- journal --------------------------------------------------------------------------------


def append(path, line):
    private_dir(os.path.dirname(path))
    rec = json.loads(line)
    rec.setdefault("ts", time.time())
    data = (json.dumps(rec, sort_keys=True) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a journal left looser (an older remedy, a copy) is tightened
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_dir(os.path.dirname(path))
    out({"ok": True})


def read(path):
    recs = []
    try:
        with open(path, "rb") as f:
            for raw in f:
                try:
                    rec = json.loads(raw)
                except ValueError:
                    rec = None
                if not isinstance(rec, dict):
                    rec = {"event": "torn", "raw": raw[:200].decode("utf-8", "replace")}
                recs.append(rec)
    except OSError:
        pass
    out({"records": recs})


def runs(state):
    base = os.path.join(state, "runs")
    items = []
    for rid in sorted(os.listdir(base)) if os.path.isdir(base) else []:
        jpath = os.path.join(base, rid, "journal.jsonl")
        first, last, committed = None, None, []
        try:
            with open(jpath, "rb") as f:
                for raw in f:
                    try:
                        rec = json.loads(raw)
                    except ValueError:
                        continue
                    if not isinstance(rec, dict):
                        continue
                    first = first or rec
                    last = rec
                    if rec.get("event") == "committed":
                        committed.append(rec.get("step"))
        except OSError:
            continue
        items.append({"run_id": rid, "first": first, "last": last, "committed": committed})
    out({"runs": items})


# -- checkpoints ----------------------------------------------------------------------------


def _lexists(p):
    return os.path.lexists(p)


def _kind(p):
    st = os.lstat(p)
    if stat.S_ISLNK(st.st_mode):
        return "symlink"
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    return "file"


def _missing_ancestors(p):
    """Directories above p that do not exist yet (so a restore can remove them again)."""
    missing = []
    d = os.path.dirname(p)
    while d and d != "/" and not _lexists(d):
        missing.append(d)
        d = os.path.dirname(d)
    return missing


def _site_dirs(python):
    """site-packages dirs of a Python environment prefix (venv or system prefix)."""
    import glob

    found, real = [], set()
    for pat in (
        "lib/python*/site-packages",
        "lib64/python*/site-packages",
        "lib/python*/dist-packages",
        "local/lib/python*/dist-packages",
    ):
        for d in sorted(glob.glob(os.path.join(python, pat))):
            # a venv's lib64 is a symlink to lib: one directory, walked (and emptied) once
            r = os.path.realpath(d)
            if r not in real:
                real.add(r)
                found.append(d)
    return found


def _package_files(python, names):
    """Absolute paths of every file of the named installed distributions (from RECORD).

    Read in this process with importlib.metadata over the environment's site dirs, so it
    works whatever interpreter (or none) the environment has."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8
        raise RuntimeError("the host agent needs Python >= 3.8") from None
    want = {n.lower().replace("_", "-") for n in names}
    res = {}
    for dist in metadata.distributions(path=_site_dirs(python)):
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name not in want or name in res:
            continue
        files = [os.path.normpath(str(dist.locate_file(f))) for f in dist.files or []]
        # RECORD is written by whoever owns the environment: an entry outside it (a `../`
        # to /etc) is not this package's file, and a rollback must never delete it
        files = [f for f in files if _inside(f, python)]
        res[name] = {"version": dist.version, "files": files}
    return res


def _dirs_under(roots):
    found = set()
    for r in roots:
        for dp, dns, _ in os.walk(r):
            found.add(dp)
            for dn in dns:
                found.add(os.path.join(dp, dn))
    return sorted(found)


def _site_listing(python):
    """Every entry under the environment's site dirs: an install cut off half-way (pip
    killed before it wrote RECORD) leaves files no distribution owns, which only this
    listing can tell from the environment's own."""
    entries = []
    for sd in _site_dirs(python):
        for dp, dns, fns in os.walk(sd):
            entries.extend(os.path.join(dp, n) for n in dns + fns)
    return sorted(entries)


def _orphans(pk, members):
    """Entries under the site dirs that the capture did not see (files first, then the
    directories deepest first), except what the checkpoint itself puts back."""
    if "site" not in pk:
        return [], []
    seen = set(pk["site"])
    files, dirs = [], []
    for sd in _site_dirs(pk["python"]):
        for dp, dns, fns in os.walk(sd):
            for n in fns + [d for d in dns if os.path.islink(os.path.join(dp, d))]:
                f = os.path.join(dp, n)
                if f not in seen and f not in members:
                    files.append(f)
            dirs.extend(os.path.join(dp, d) for d in dns if os.path.join(dp, d) not in seen)
    return files, sorted(dirs, key=len, reverse=True)


def _add_member(tf, path):
    """Put path in the checkpoint as what it is now, read through its directory's handle: a
    plain file's bytes only from the very file that was looked at (opened O_NOFOLLOW, its
    inode compared). tarfile.add() looked (lstat) and then read by name, and in a tree its
    owner can change, a file swapped for a link in between (or its directory swapped for a
    link to /root) put root's secret in the checkpoint, under the owner's uid, and the
    rollback wrote it back into the owner's file."""
    path = os.path.normpath(path)
    arcname = path.lstrip("/")
    with parent_of(path) as (dfd, name):
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        if stat.S_ISREG(st.st_mode):
            fd = os.open(name, os.O_RDONLY | O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0), dir_fd=dfd)
            with os.fdopen(fd, "rb") as f:
                fst = os.fstat(fd)
                if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (
                    st.st_dev,
                    st.st_ino,
                ):
                    raise Refused(f"{path} changed while it was checkpointed: not copied")
                tf.addfile(tf.gettarinfo(arcname=arcname, fileobj=f), f)
            return
        ti = tf.tarinfo(arcname)
        ti.mode, ti.uid, ti.gid = stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid
        ti.mtime, ti.size = st.st_mtime, 0
        if stat.S_ISLNK(st.st_mode):
            ti.type, ti.linkname = tarfile.SYMTYPE, os.readlink(name, dir_fd=dfd)
        elif stat.S_ISDIR(st.st_mode):
            ti.type = tarfile.DIRTYPE
        else:  # what a restore would refuse (_check_member): refused before the step runs
            raise Refused(f"{path} is not a file, directory or link: no checkpoint of it")
        tf.addfile(ti)


def capture(cpdir, spec):
    """spec: {"paths": [...], "packages": [{"python": prefix, "names": [...]}]}"""
    private_dir(cpdir)
    manifest = {"paths": [], "packages": [], "created": time.time()}
    members = []
    for p in spec.get("paths", []):
        p = os.path.normpath(p)
        entry = {"path": p, "exists": _lexists(p), "missing_ancestors": _missing_ancestors(p)}
        if entry["exists"]:
            entry["kind"] = _kind(p)
            if entry["kind"] != "dir":
                members.append(p)
            else:
                entry["dirs"] = _dirs_under([p])
        manifest["paths"].append(entry)
    for pk in spec.get("packages", []):
        info = _package_files(pk["python"], pk["names"])
        for d in info.values():
            for f in d["files"]:
                if _lexists(f):
                    members.append(f)
        site_roots = set()
        for d in info.values():
            for f in d["files"]:
                parts = f.split(os.sep)
                if "site-packages" in parts:
                    i = parts.index("site-packages")
                    if len(parts) > i + 1:
                        site_roots.add(os.sep.join(parts[: i + 2]))
        roots = sorted(r for r in site_roots if os.path.isdir(r))
        keep = set(_dirs_under(roots))
        for d in info.values():
            for f in d["files"]:
                a = os.path.dirname(f)
                while a and a != "/" and a not in keep:
                    keep.add(a)
                    a = os.path.dirname(a)
        keep.update(_site_dirs(pk["python"]))
        manifest["packages"].append(
            {
                "python": pk["python"],
                "names": pk["names"],
                "installed": {n: d["version"] for n, d in info.items()},
                "roots": roots,
                "dirs": sorted(keep),
                "site": _site_listing(pk["python"]),
            }
        )
    tpath = os.path.join(cpdir, "files.tar")
    try:
        with tarfile.open(tpath, "w") as tf:
            for m in sorted(set(members)):
                _add_member(tf, m)
        fd = os.open(tpath, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        os.chmod(tpath, 0o600)
        atomic_write(os.path.join(cpdir, "manifest.json"), json.dumps(manifest).encode())
    except BaseException:
        # a half-written checkpoint (a full disk) must not stay: it would hold the space the
        # journal and the rollback of the earlier steps need, and look like a checkpoint
        for f in ("manifest.json", "files.tar"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(cpdir, f))
        raise
    out({"captured": len(set(members))})


# -- filesystem by handle -----------------------------------------------------------------
#
# Rollback deletes and re-creates files in trees that a venv owner can write. A path string
# is resolved again by every syscall, so a directory swapped for a link between checkpoint and
# rollback would redirect a delete (or a write) anywhere. Everything below works through
# directory handles: a path is opened one component at a time with O_NOFOLLOW from "/", a
# link on the way is followed only where nobody but root (or this user) could have put it,
# and the final operation is unlink/rmdir/mkdir/symlink/open(O_EXCL|O_NOFOLLOW) relative to
# the directory's handle.

O_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class Refused(Exception):
    """A path that would make remedy follow a link someone else controls."""


def _safe_dir_stat(st):
    """A directory only root or this user can change entries of: owned by one of them and
    not writable by group/others (a root-owned sticky directory protects each entry)."""
    if st.st_uid not in (0, os.geteuid()):
        return False
    if st.st_mode & 0o022:
        return bool(st.st_mode & stat.S_ISVTX) and st.st_uid == 0
    return True


def _link_trusted(parent_st, link_st):
    if link_st.st_uid not in (0, os.geteuid()):
        return False
    if parent_st.st_uid not in (0, os.geteuid()):
        return False
    # in a sticky directory only the link's owner can replace it, and that owner is trusted
    return not (parent_st.st_mode & 0o022) or bool(parent_st.st_mode & stat.S_ISVTX)


def open_dir(path, create=False, mode=0o755):
    """A handle on the directory `path` names, resolved without following any link an
    untrusted user could have placed; missing components are created with create=True."""
    fd = os.open("/", O_DIR)
    cur = "/"
    queue = [c for c in path.split("/") if c and c != "."]
    hops = 0
    try:
        while queue:
            c = queue.pop(0)
            if c == "..":
                nfd = os.open("..", O_DIR, dir_fd=fd)
                os.close(fd)
                fd, cur = nfd, os.path.dirname(cur) or "/"
                continue
            try:
                st = os.stat(c, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(c, mode, dir_fd=fd)
                st = os.stat(c, dir_fd=fd, follow_symlinks=False)
            here = os.path.join(cur, c)
            if stat.S_ISLNK(st.st_mode):
                if not _link_trusted(os.fstat(fd), st):
                    raise Refused(
                        f"{here} is a link (owner uid {st.st_uid}) in a directory others can "
                        "change: not followed"
                    )
                hops += 1
                if hops > 40:
                    raise Refused(f"{path}: too many levels of links")
                target = os.readlink(c, dir_fd=fd)
                if target.startswith("/"):
                    os.close(fd)
                    fd, cur = os.open("/", O_DIR), "/"
                queue = [t for t in target.split("/") if t and t != "."] + queue
                continue
            if not stat.S_ISDIR(st.st_mode):
                raise Refused(f"{here} is not a directory")
            try:
                nfd = os.open(c, O_DIR | O_NOFOLLOW, dir_fd=fd)
            except OSError as exc:
                raise Refused(f"{here} changed while it was opened ({exc.strerror})") from None
            os.close(fd)
            fd, cur = nfd, here
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def parent_of(path, create=False):
    """(handle of path's directory, path's last component)."""
    path = os.path.normpath(path)
    name = os.path.basename(path)
    if not name or name in (".", ".."):
        raise Refused(f"{path}: no file name")
    fd = open_dir(os.path.dirname(path), create=create)
    try:
        yield fd, name
    finally:
        os.close(fd)


def _lstat_at(fd, name):
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _rmtree_at(fd, name):
    """Remove the directory `name` under handle fd and everything in it; links are removed,
    never followed."""
    dfd = os.open(name, O_DIR | O_NOFOLLOW, dir_fd=fd)
    try:
        for entry in os.scandir(dfd):
            if entry.is_dir(follow_symlinks=False):
                _rmtree_at(dfd, entry.name)
            else:
                os.unlink(entry.name, dir_fd=dfd)
    finally:
        os.close(dfd)
    os.rmdir(name, dir_fd=fd)


def safe_unlink(path):
    """Unlink a file or link (not a directory); missing is fine."""
    with parent_of(path) as (fd, name):
        st = _lstat_at(fd, name)
        if st is not None and not stat.S_ISDIR(st.st_mode):
            os.unlink(name, dir_fd=fd)


def safe_remove(path):
    """Remove whatever path is (a tree, a file, a link) without following links."""
    try:
        with parent_of(path) as (fd, name):
            st = _lstat_at(fd, name)
            if st is None:
                return
            if stat.S_ISDIR(st.st_mode):
                _rmtree_at(fd, name)
            else:
                os.unlink(name, dir_fd=fd)
    except FileNotFoundError:
        return


def safe_rmdir_if_empty(path):
    """rmdir path when it is an empty real directory; True when it was removed."""
    try:
        with parent_of(path) as (fd, name):
            st = _lstat_at(fd, name)
            if st is None or not stat.S_ISDIR(st.st_mode):
                return False
            dfd = os.open(name, O_DIR | O_NOFOLLOW, dir_fd=fd)
            try:
                empty = not os.listdir(dfd)
            finally:
                os.close(dfd)
            if empty:
                os.rmdir(name, dir_fd=fd)
            return empty
    except (FileNotFoundError, NotADirectoryError):
        return False


def _prune_empty_at(fd, path, keep):
    """Depth first: remove empty directories under handle fd that are not in keep."""
    for entry in list(os.scandir(fd)):
        if not entry.is_dir(follow_symlinks=False):
            continue
        sub = os.path.join(path, entry.name)
        dfd = os.open(entry.name, O_DIR | O_NOFOLLOW, dir_fd=fd)
        try:
            _prune_empty_at(dfd, sub, keep)
            empty = not os.listdir(dfd)
        finally:
            os.close(dfd)
        if sub not in keep and empty:
            os.rmdir(entry.name, dir_fd=fd)


def _check_member(m):
    """A checkpoint member is data: a plain relative name, one of the kinds capture writes."""
    parts = m.name.split("/")
    if m.name.startswith("/") or ".." in parts or "" in parts[:-1]:
        raise Refused(f"checkpoint member {m.name!r}: not a plain path")
    if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
        raise Refused(f"checkpoint member {m.name!r}: not a file, directory or link")


def restore_member(tf, m):
    """Put one captured member back through its directory's handle (mode, owner, mtime, link
    target), replacing what is there now without following it."""
    _check_member(m)
    dest = "/" + m.name
    root = os.geteuid() == 0
    with parent_of(dest, create=True) as (fd, name):
        st = _lstat_at(fd, name)
        if m.isdir():
            if st is not None and not stat.S_ISDIR(st.st_mode):
                os.unlink(name, dir_fd=fd)
                st = None
            if st is None:
                os.mkdir(name, 0o700, dir_fd=fd)
            dfd = os.open(name, O_DIR | O_NOFOLLOW, dir_fd=fd)
            try:
                if root:
                    os.fchown(dfd, m.uid, m.gid)
                os.fchmod(dfd, m.mode)
            finally:
                os.close(dfd)
            return
        if st is not None:
            if stat.S_ISDIR(st.st_mode):
                _rmtree_at(fd, name)
            else:
                os.unlink(name, dir_fd=fd)
        if m.issym():
            os.symlink(m.linkname, name, dir_fd=fd)
            if root:
                with contextlib.suppress(OSError):
                    os.chown(name, m.uid, m.gid, dir_fd=fd, follow_symlinks=False)
            return
        src = tf.extractfile(m)
        wfd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | O_NOFOLLOW, 0o600, dir_fd=fd)
        try:
            for block in iter(lambda: src.read(1 << 20), b""):
                os.write(wfd, block)
            if root:
                os.fchown(wfd, m.uid, m.gid)
            os.fchmod(wfd, m.mode)
            os.utime(wfd, (m.mtime, m.mtime))
            os.fsync(wfd)
        finally:
            os.close(wfd)


def _inside(path, prefix):
    prefix = os.path.normpath(prefix).rstrip("/") + "/"
    return os.path.normpath(path).startswith(prefix)


def _same(tf, m, dest):
    """Whether dest is exactly the captured member already (kind, link target, bytes, mode
    and, as root, owner): a restore leaves such a file alone, so undoing a step that changed
    nothing (it failed on a read-only or root-owned file) writes nothing either."""
    try:
        st = os.lstat(dest)
    except OSError:
        return False
    if m.issym():
        return stat.S_ISLNK(st.st_mode) and os.readlink(dest) == m.linkname
    if not m.isfile() or not stat.S_ISREG(st.st_mode) or st.st_size != m.size:
        return False
    if stat.S_IMODE(st.st_mode) != m.mode or (
        os.geteuid() == 0 and (st.st_uid, st.st_gid) != (m.uid, m.gid)
    ):
        return False
    # by no link and without blocking, and only the very file looked at: an owner who swaps a
    # FIFO in after the lstat would hang the rollback, a link would be read through
    try:
        fd = os.open(dest, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return False
    fst = os.fstat(fd)
    if not stat.S_ISREG(fst.st_mode) or (fst.st_dev, fst.st_ino) != (st.st_dev, st.st_ino):
        os.close(fd)
        return False
    src = tf.extractfile(m)
    with os.fdopen(fd, "rb") as fh:
        while True:
            a, b = src.read(1 << 20), fh.read(1 << 20)
            if a != b:
                return False
            if not a:
                return True


def restore(cpdir):
    with open(os.path.join(cpdir, "manifest.json")) as f:
        manifest = json.load(f)
    tf = tarfile.open(os.path.join(cpdir, "files.tar"))
    members = {"/" + m.name: m for m in tf.getmembers()}
    for m in members.values():
        _check_member(m)

    checked = {}

    def unchanged(p):
        if p not in checked:
            m = members.get(p)
            checked[p] = m is not None and _same(tf, m, p)
        return checked[p]

    # 1. packages: remove whatever versions are installed now (except files identical to
    #    the captured ones), then put the old files back. The list is written first: a
    #    restore killed half-way may already have removed a RECORD, and its retry must still
    #    find the files that RECORD listed
    todo_path = os.path.join(cpdir, "restore-remove.json")
    try:
        with open(todo_path) as fh:
            todo = set(json.load(fh))
    except (OSError, ValueError):
        todo = set()
    prefixes = [pk["python"] for pk in manifest["packages"]]
    for pk in manifest["packages"]:
        for d in _package_files(pk["python"], pk["names"]).values():
            todo.update(d["files"])
    todo = {f for f in todo if any(_inside(f, pre) for pre in prefixes)}
    if manifest["packages"]:
        atomic_write(todo_path, json.dumps(sorted(todo)).encode())
    emptied = set()
    for f in sorted(todo):
        if _lexists(f) and _kind(f) != "dir" and not unchanged(f):
            safe_unlink(f)
            emptied.add(os.path.dirname(f))
        elif not _lexists(f):
            emptied.add(os.path.dirname(f))
    # what a half-done install left that no RECORD lists (its process was killed)
    new_dirs = []
    for pk in manifest["packages"]:
        files, dirs = _orphans(pk, members)
        for f in files:
            with contextlib.suppress(FileNotFoundError):
                safe_unlink(f)
        new_dirs.extend(dirs)
    # 2. paths: remove what the step created or changed
    for e in manifest["paths"]:
        p = e["path"]
        if not e["exists"]:
            safe_remove(p)
        elif e.get("kind") == "dir":
            keep = set(e.get("dirs", []))
            try:
                dfd = open_dir(p)
            except FileNotFoundError:
                continue
            try:
                _prune_empty_at(dfd, os.path.normpath(p), keep)
            finally:
                os.close(dfd)
        elif not unchanged(p):
            safe_remove(p)
    # 3. put the captured files back, with modes, owners and link targets. Read as data
    #    (extractfile) and written by handle: no extraction filter decides what lands where
    with tf:
        for m in tf.getmembers():
            dest = "/" + m.name
            if unchanged(dest):
                continue
            restore_member(tf, m)
    # 4. directories that did not exist before go away again (deepest first)
    for e in manifest["paths"]:
        for d in e.get("missing_ancestors", []):
            safe_rmdir_if_empty(d)
    keep = set()
    for pk in manifest["packages"]:
        keep.update(pk.get("dirs", []))
    for pk in manifest["packages"]:
        for r in pk.get("roots", []):
            try:
                dfd = open_dir(r)
            except (FileNotFoundError, NotADirectoryError):
                continue
            try:
                _prune_empty_at(dfd, os.path.normpath(r), keep)
            finally:
                os.close(dfd)
            if r not in keep:
                safe_rmdir_if_empty(r)
    for d in sorted(set(new_dirs), key=len, reverse=True):
        safe_rmdir_if_empty(d)
    # directories the newer versions created (a new dist-info, new subpackages)
    for d in sorted(emptied, key=len, reverse=True):
        while d and d != "/" and d not in keep and safe_rmdir_if_empty(d):
            d = os.path.dirname(d)
    for e in manifest["paths"]:
        d = os.path.dirname(e["path"])
        fsync_dir(d)
    with contextlib.suppress(OSError):
        os.unlink(todo_path)
    out({"restored": True})


def _file_digest(f, st, cache):
    """sha256 of a file's bytes; with a cache, reused while (inode, size, mtime, ctime) are
    unchanged: any write, rename over or restore changes ctime, which no caller can set."""
    key = [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]
    hit = cache.get(f) if cache is not None else None
    if hit and hit[:4] == key:
        return hit[4]
    h = hashlib.sha256()
    with open(f, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    if cache is not None:
        cache[f] = key + [h.hexdigest()]
    return h.hexdigest()


def snapshot(spec):
    """Digest of paths (recursively): kind, link target, content, mode and owner of each
    entry. spec["cache"]: a file of content digests by stat key, for repeated snapshots of
    large unchanged trees (a test's before/after)."""
    h = hashlib.sha256()
    listing = []
    cache_path = spec.get("cache")
    cache = None
    if cache_path:
        try:
            with open(cache_path) as fh:
                cache = json.load(fh)
        except (OSError, ValueError):
            cache = {}
    for p in spec.get("paths", []):
        for dp, dns, fns in (
            os.walk(p)
            if os.path.isdir(p) and not os.path.islink(p)
            else [(os.path.dirname(p), [], [os.path.basename(p)])]
        ):
            dns.sort()
            if dp == os.path.dirname(p) and not os.path.isdir(p):
                names = fns
            else:
                names = sorted(fns + dns)
                listing.append(("D", dp, oct(os.lstat(dp).st_mode)))
            for n in sorted(names):
                f = os.path.join(dp, n)
                if not _lexists(f):
                    listing.append(("-", f, ""))
                    continue
                st = os.lstat(f)
                if stat.S_ISLNK(st.st_mode):
                    listing.append(("L", f, os.readlink(f)))
                elif stat.S_ISREG(st.st_mode):
                    digest = _file_digest(f, st, cache)
                    listing.append(("F", f, f"{digest} {st.st_mode:o} {st.st_uid}:{st.st_gid}"))
    for row in sorted(listing):
        h.update(repr(row).encode())
    if cache_path and cache is not None:
        private_dir(os.path.dirname(cache_path))
        atomic_write(cache_path, json.dumps(cache).encode())
    res = {"digest": h.hexdigest(), "entries": len(listing)}
    if spec.get("listing"):
        res["listing"] = sorted(listing)
    out(res)


def main(argv):
    if len(argv) < 2:
        out({"error": "usage: agent.py COMMAND ..."}, 2)
    cmd, args = argv[1], argv[2:]
    try:
        if cmd == "lock-acquire":
            lock_acquire(args[0], args[1])
        elif cmd == "lock-release":
            lock_release(args[0], args[1])
        elif cmd == "lock-read":
            lock_read(args[0])
        elif cmd == "append":
            append(args[0], args[1])
        elif cmd == "read":
            read(args[0])
        elif cmd == "runs":
            runs(args[0])
        elif cmd == "write":
            data = sys.stdin.buffer.read()
            parent = os.path.dirname(args[0])
            if parent and not os.path.isdir(parent):
                private_dir(parent)
            atomic_write(args[0], data, int(args[1], 8))
            out({"written": len(data)})
        elif cmd == "capture":
            capture(args[0], json.load(sys.stdin))
        elif cmd == "restore":
            restore(args[0])
        elif cmd == "snapshot":
            snapshot(json.load(sys.stdin))
        else:
            out({"error": "unknown command " + cmd}, 2)
    except SystemExit:
        raise
    except Exception as exc:  # reported to the controller as data, never a traceback there
        out({"error": f"{type(exc).__name__}: {exc}"}, 1)


if __name__ == "__main__":
    main(sys.argv)
