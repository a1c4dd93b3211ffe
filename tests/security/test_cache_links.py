"""Class 5: remedy's caches are never written through a link another user placed.

The attack, for real: root runs remedy with an XDG_CACHE_HOME (or a HOME `sudo` kept) whose
path goes through a link uid 65534 owns, in a sticky shared dir or in its own home, pointing
at a stand-in for /etc. remedy writes its caches at exit (`remedy --help` writes the start-up
code cache and the recorded help page); it used to `makedirs` through the link and write
`remedy/startup-code-*.marshal` and `remedy/help-*` into the stand-in as root. The stand-in
must stay empty. The control: root's own link in root's own directory is followed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def remedy_help(env: dict[str, str]) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_CACHE_HOME", "HOME")}
    r = subprocess.run(
        [sys.executable, "-m", "remedy", "--help"],
        env={**base, **env},
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr.decode()


@pytest.fixture
def area(tmp_path: Path) -> Path:
    tmp_path.chmod(0o755)
    (tmp_path / "etc").mkdir()  # the stand-in for /etc: root's, nothing may appear in it
    return tmp_path


@needs_root
def test_xdg_cache_home_through_a_link_planted_in_a_sticky_dir(area: Path):
    shared = area / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "cache"
    link.symlink_to(area / "etc")
    os.chown(link, NOBODY, NOBODY, follow_symlinks=False)
    remedy_help({"XDG_CACHE_HOME": str(link), "HOME": str(area)})
    assert list((area / "etc").iterdir()) == [], "root wrote its cache through nobody's link"


@needs_root
def test_a_cache_dir_in_a_home_sudo_kept_that_is_the_users_link(area: Path):
    home = area / "home"
    home.mkdir()
    (home / ".cache").symlink_to(area / "etc")
    os.chown(home / ".cache", NOBODY, NOBODY, follow_symlinks=False)
    os.chown(home, NOBODY, NOBODY)
    remedy_help({"HOME": str(home)})
    assert list((area / "etc").iterdir()) == [], "root wrote its cache through nobody's link"


@needs_root
def test_a_trusted_link_leading_through_a_planted_link_is_not_followed(area: Path):
    """root's own link, in root's private dir, to a path through nobody's link."""
    shared = area / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "evil").symlink_to(area / "etc")
    os.chown(shared / "evil", NOBODY, NOBODY, follow_symlinks=False)
    mine = area / "mine"
    mine.mkdir(mode=0o700)
    (mine / "cache").symlink_to(shared / "evil")
    remedy_help({"XDG_CACHE_HOME": str(mine / "cache"), "HOME": str(area)})
    assert list((area / "etc").iterdir()) == []


@needs_root
def test_control_roots_own_link_in_roots_dir_is_followed(area: Path):
    mine = area / "mine"
    mine.mkdir(mode=0o700)
    (mine / "cache").symlink_to(area / "etc")
    remedy_help({"XDG_CACHE_HOME": str(mine / "cache"), "HOME": str(area)})
    written = sorted(p.name for p in (area / "etc" / "remedy").iterdir())
    assert any(n.startswith("startup-code-") for n in written), written
    from remedy.cachefile import read_private

    os.environ["XDG_CACHE_HOME"] = str(mine / "cache")
    try:
        for n in written:
            assert read_private(str(mine / "cache" / "remedy" / n)) is not None, n
    finally:
        del os.environ["XDG_CACHE_HOME"]
