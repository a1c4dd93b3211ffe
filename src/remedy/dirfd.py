"""A directory reached by handle, never through a link another user could have placed.

Why: remedy writes as root into directories named on its command line (`--out`, `--log`)
or in its environment (XDG_CACHE_HOME). A link anywhere on such a path (`/tmp/reports ->
/etc/cron.d`, planted by whoever got the name first in a sticky /tmp) chooses where root's
file lands, and a name checked and then used can be swapped in between. So the path is
walked from `/` one name at a time with O_NOFOLLOW; a link is followed only when it and the
directory holding it are root's or this user's and that directory is not writable by
others (or is sticky): the rule of remedy.fileread.foreign_link. The caller then works
through the handle (openat, renameat), so nothing checked can be swapped afterwards.

Stdlib only (os, stat): the caches use it on remedy's start-up path.
"""

from __future__ import annotations

import os
import stat

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
MAX_LINKS = 40


def link_ok(dfd: int, name: str) -> str | None:
    """None when the link `name` in the directory `dfd` may be followed; else why not."""
    me = os.geteuid()
    lst = os.lstat(name, dir_fd=dfd)
    parent = os.fstat(dfd)
    if lst.st_uid not in (0, me) or parent.st_uid not in (0, me):
        return f"it is a link owned by uid {lst.st_uid} in a directory of uid {parent.st_uid}"
    if parent.st_mode & 0o022 and not parent.st_mode & stat.S_ISVTX:
        return "it is a link in a directory others can change"
    return None


def open_dir(path: str, *, create: bool = False, last_link: bool = True) -> tuple[int | None, str]:
    """(a handle on directory `path`, "") or (None, why not). create: missing directories
    are made 0700 on the way. last_link False: the last name must itself be a directory,
    not even a trusted link (remedy's own cache directory)."""
    names = [c for c in os.path.abspath(path).split("/") if c]
    walked = ""
    fd = os.open("/", DIR_FLAGS)
    try:
        hops = 0
        while names:
            name = names.pop(0)
            here = f"{walked}/{name}"
            try:
                nfd = os.open(name, DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    return None, f"{here} does not exist"
                os.mkdir(name, 0o700, dir_fd=fd)
                nfd = os.open(name, DIR_FLAGS | NOFOLLOW, dir_fd=fd)
            except OSError as exc:  # ELOOP/ENOTDIR: a link (followed only when trusted), or a file
                st = os.lstat(name, dir_fd=fd)
                if not stat.S_ISLNK(st.st_mode):
                    return None, f"{here} is not a directory ({exc.strerror})"
                if not names and not last_link:
                    return None, f"{here} is a link"
                why = link_ok(fd, name)
                if why:
                    return None, f"{here}: {why}: not followed"
                hops += 1
                if hops > MAX_LINKS:
                    return None, f"{path} leads through more than {MAX_LINKS} links"
                target = os.readlink(name, dir_fd=fd)
                names[:0] = [c for c in target.split("/") if c]
                if target.startswith("/"):
                    os.close(fd)
                    fd, walked = os.open("/", DIR_FLAGS), ""
                continue
            os.close(fd)
            fd, walked = nfd, here
        fd, out = -1, fd
        return out, ""
    except OSError as exc:
        return None, f"{path}: {exc.strerror or exc}"
    finally:
        if fd >= 0:
            os.close(fd)
