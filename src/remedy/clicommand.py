"""The click command for one command line, built for the command it names only.

typer turns every command function into a click command (signature, type hints, one
option object per parameter) before it parses anything: ~30 ms for remedy's 15 commands,
at every start. A command line that starts with a command name needs only that command
under the group (the group's own options come before a command name, so there are none
here); anything else (no command, an option first, a name that is not a command, which gets
click's "No such command" or its suggestion, shell completion) gets the whole group, exactly
as typer builds it.
"""

from __future__ import annotations

import copy
import os
from typing import Any


def command_for(app: Any, argv: list[str]) -> Any:
    """The click command typer builds for `app`, with only `argv[0]`'s command when that is
    a command's name."""
    import typer.main

    one = _only(app, argv[0]) if argv and not _completing() else None
    return typer.main.get_command(one if one is not None else app)


def _completing() -> bool:
    """Shell completion (`_REMEDY_COMPLETE=...`) lists every command."""
    return any(k.endswith("_COMPLETE") for k in os.environ)


def _only(app: Any, name: str) -> Any:
    """A shallow copy of the Typer app holding only the command or command group `name`,
    or None when `name` is not exactly one of them."""
    from typer.main import get_command_name

    if name.startswith("-"):
        return None
    commands = [
        c
        for c in app.registered_commands
        if (c.name or (c.callback and get_command_name(c.callback.__name__))) == name
    ]
    groups = [g for g in app.registered_groups if g.name == name]
    if any(not g.name for g in app.registered_groups) or len(commands) + len(groups) != 1:
        return None  # a group merged without a name, or no (or an ambiguous) match
    if not (app.registered_callback or app.info.callback):
        return None  # typer would build a lone command, not a group: keep the whole app
    one = copy.copy(app)
    one.registered_commands = commands
    one.registered_groups = groups
    return one
