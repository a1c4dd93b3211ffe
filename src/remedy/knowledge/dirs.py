"""Where the knowledge and the playbooks are (remedy.knowledge.loader names them too): found
without importing the loader and its schema, which a cached load never needs
(remedy.knowledge.logview)."""

from __future__ import annotations

import os
from pathlib import Path

import remedy
from remedy.errors import KnowledgeError


def data_dirs() -> tuple[Path, Path]:
    """knowledge/ and playbooks/: $REMEDY_KNOWLEDGE_DIR / $REMEDY_PLAYBOOKS_DIR when set (a
    site's own or a test's rules: a new rule is a data change), else the repo's in a
    checkout, else the packaged copy in a wheel."""
    kenv, penv = os.environ.get("REMEDY_KNOWLEDGE_DIR"), os.environ.get("REMEDY_PLAYBOOKS_DIR")
    if kenv or penv:
        checked_env_dir("REMEDY_KNOWLEDGE_DIR")
        checked_env_dir("REMEDY_PLAYBOOKS_DIR")
        base_k, base_p = _builtin_dirs()
        return Path(kenv) if kenv else base_k, Path(penv) if penv else base_p
    return _builtin_dirs()


def checked_env_dir(var: str) -> None:
    """KnowledgeError unless the directory $var names is one only root or this user can
    change (remedy.fileread.untrusted_tree): a site's rules decide what root installs and
    writes, so rules another user can edit would be that user's commands run as root."""
    from remedy.fileread import untrusted_tree

    d = os.environ.get(var)
    why = untrusted_tree(d) if d else None
    if why:
        raise KnowledgeError(
            f"refusing ${var}={d}: {why}; rules another user can change would decide "
            "what remedy does as root",
            hint="give the directory and its files to root (not writable by group or others)",
        )


def _builtin_dirs() -> tuple[Path, Path]:
    repo = Path(remedy.__file__).resolve().parents[2]
    if (repo / "knowledge" / "rules.yaml").is_file():
        return repo / "knowledge", repo / "playbooks"
    pkg = Path(remedy.__file__).resolve().parent / "_data"
    return pkg / "knowledge", pkg / "playbooks"
