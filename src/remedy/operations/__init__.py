"""Typed operations: what a plan step does, as validated parameters, never as shell.

A plan carries intent (pyinfra-style): `pip-install` of named packages into a Python env the
facts recorded, `env` set/unset in a named scope (a unit's drop-in, a profile.d file),
`link-layout` links inside a toolkit prefix the facts recorded, `exec-start` for the unit the
plan targets, `apt-install` of named packages. The shell commands, the checkpoint, the preview
and the Ansible tasks are rendered here from those parameters at apply/export time, with each
value quoted for the syntax it lands in (operations/writers.py). A saved plan whose operation
parameters were edited is refused before anything runs (operations/verify.py).

Parameters are checked twice: their form when a plan is loaded (pydantic: absolute normalised
paths, variable/unit/package names, known package indexes), and against the facts the step
was planned from when the planner makes it (`check`): a Python env or toolkit prefix must be
one the facts recorded, a link must stay inside its prefix, a package must be one the
knowledge or that environment names, a drop-in must be for the unit the plan targets.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from typing import Annotated, Any, ClassVar, Literal

from packaging.version import InvalidVersion, Version
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from remedy.model import Touch
from remedy.operations import writers
from remedy.operations.playbook import (
    Ctx,
    ExportError,
    Mapped,
    U,
    changed,
    file_task,
    norm_pkg,
    python_env,
)
from remedy.transport.quote import join, quote


class OperationError(ValueError):
    """A parameter that does not hold against the facts it came from."""


# --------------------------------------------------------------------------------------------
# parameter forms
# --------------------------------------------------------------------------------------------


def _no_nul(v: str) -> str:
    if "\0" in v:
        raise ValueError("contains a NUL byte")
    return v


def _abs_path(v: str) -> str:
    _no_nul(v)
    if not v.startswith("/") or posixpath.normpath(v) != v or v.startswith("//"):
        raise ValueError(f"{v!r} is not an absolute, normalised path (no '..', no '//')")
    return v


def _rel_path(v: str) -> str:
    _no_nul(v)
    n = posixpath.normpath(v)
    if v.startswith("/") or n != v or n == ".." or n.startswith("../") or n == ".":
        raise ValueError(f"{v!r} is not a relative path inside its prefix")
    return v


def _link_target(v: str) -> str:
    _no_nul(v)
    if not v or "/" in v or v in (".", ".."):
        raise ValueError(f"{v!r}: a link target must be a name in the same directory")
    return v


# used with fullmatch: `$` alone also matches before a final "\n" ("x\n" would pass)
_ENV = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
_PKG = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$")
_APT = re.compile(r"^[a-z0-9][a-z0-9+.-]{1,100}$")
_UNIT_SUFFIX = (".service", ".socket", ".target", ".timer", ".mount", ".slice", ".scope")
_CC = re.compile(r"[\x00-\x1f\x7f]")


def _env_name(v: str) -> str:
    if not _ENV.fullmatch(v):
        raise ValueError(f"{v!r} is not a valid environment variable name")
    return v


def _unit(v: str) -> str:
    # a unit name becomes a directory name (/etc/systemd/system/UNIT.d): no '/', no '..'
    from remedy.model import unit_name

    if "/" in v or _CC.search(v) or v.startswith(".") or not v.endswith(_UNIT_SUFFIX):
        raise ValueError(f"{v!r} is not a systemd unit name")
    return unit_name(v)  # nor an option (a leading '-') of the systemctl it is given to


def _slug(v: str) -> str:
    if not _SLUG.fullmatch(v):
        raise ValueError(f"{v!r} is not a file-name slug (a-z, 0-9, -)")
    return v


def _pkg(v: str) -> str:
    if not _PKG.fullmatch(v):
        raise ValueError(f"{v!r} is not a Python package name")
    return v


def _version(v: str | None) -> str | None:
    if v is None:
        return v
    try:
        Version(v)
    except InvalidVersion:
        raise ValueError(f"{v!r} is not a package version") from None
    return v


def _apt(v: str) -> str:
    if not _APT.fullmatch(v):
        raise ValueError(f"{v!r} is not a Debian package name")
    return v


# Package indexes remedy may name (upstream's own): anything else is refused.
KNOWN_INDEXES = (
    # pytorch.org's per-CUDA wheel indexes (https://pytorch.org/get-started/locally/)
    re.compile(r"^https://download\.pytorch\.org/whl/cu[0-9]{2,3}$"),
    # FlashInfer's jit-cache/cubin indexes (flashinfer-ai/flashinfer README, "Install")
    re.compile(r"^https://flashinfer\.ai/whl/cu[0-9]{2,3}$"),
)


def _index(v: str | None) -> str | None:
    if v is None:
        return v
    if not any(rx.fullmatch(v) for rx in KNOWN_INDEXES):
        raise ValueError(f"{v!r} is not a package index remedy knows (no other index is used)")
    return v


AbsPath = Annotated[str, AfterValidator(_abs_path)]
RelPath = Annotated[str, AfterValidator(_rel_path)]
EnvName = Annotated[str, AfterValidator(_env_name)]
UnitName = Annotated[str, AfterValidator(_unit)]
Slug = Annotated[str, AfterValidator(_slug)]
PkgName = Annotated[str, AfterValidator(_pkg)]
PkgVersion = Annotated[str | None, AfterValidator(_version)]
AptName = Annotated[str, AfterValidator(_apt)]
IndexUrl = Annotated[str | None, AfterValidator(_index)]
Text = Annotated[str, AfterValidator(_no_nul)]


# --------------------------------------------------------------------------------------------
# the operations
# --------------------------------------------------------------------------------------------


class Operation(BaseModel):
    """Base: a typed, validated change. Subclasses render commands/touches/Ansible tasks.

    Each operation's validator is built when a plan first validates one (defer_build): a plan
    uses two or three of the seven, and building the others cost ~3 ms of every `plan`."""

    model_config = ConfigDict(extra="forbid", defer_build=True)
    op: str
    # why a playbook must not automate it (None: it has an Ansible form)
    not_exported: ClassVar[str | None] = None

    def commands(self) -> list[str]:
        raise NotImplementedError

    def touches(self) -> list[Touch]:
        raise NotImplementedError

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        """Raise OperationError when a parameter does not hold against `facts`."""

    def runs_pythons(self) -> list[str]:
        """The host's interpreters this operation's commands run (as root when remedy is):
        the runner checks them as it checks a probe's (remedy.trust) before anything
        changes, so a venv another user owns never runs its code as root."""
        return []

    def runs_compiler(self) -> bool:
        """Whether this operation's commands may run the host's C compiler from the step's
        PATH (the runner then checks what PATH finds for remedy.trust.STEP_PATH_NAMES)."""
        return False

    def writes_under(self) -> list[str]:
        """Directories of a tree the facts found (not remedy's fixed ones) that this
        operation's commands create entries in, as root: the runner and the playbook check
        them (remedy.trust.write_check_argv) before anything changes, as for runs_pythons."""
        return []

    def ansible(self, ctx: Ctx) -> Mapped:
        raise ExportError(
            f"{ctx.where()}: operation {self.op!r} is not exported: {self.not_exported}"
        )


def _pythons(facts: dict[str, Any]) -> set[str]:
    out = {p.get("path") for p in facts.get("pythons") or []}
    out |= {t.get("python") for t in facts.get("toolkits") or []}
    return {posixpath.normpath(p) for p in out if p}


class PipInstall(Operation):
    op: Literal["pip-install"] = "pip-install"
    python: AbsPath
    packages: dict[PkgName, PkgVersion] = Field(min_length=1)
    no_deps: bool = False
    force_reinstall: bool = False
    index_url: IndexUrl = None
    extra_index_url: IndexUrl = None

    def reqs(self) -> list[str]:
        return [f"{n}=={v}" if v else n for n, v in self.packages.items()]

    def runs_pythons(self) -> list[str]:
        return [f"{self.python}/bin/python"]

    def runs_compiler(self) -> bool:
        return True  # a package with no wheel here is built from its sdist (setuptools' CC)

    def commands(self) -> list[str]:
        argv = [f"{self.python}/bin/python", "-m", "pip", "install"]
        argv += ["--no-deps"] if self.no_deps else []
        argv += ["--force-reinstall"] if self.force_reinstall else []
        argv += self.reqs()
        argv += ["--index-url", self.index_url] if self.index_url else []
        argv += ["--extra-index-url", self.extra_index_url] if self.extra_index_url else []
        return [join(argv)]

    def touches(self) -> list[Touch]:
        detail = " ".join(self.reqs())
        for u in (self.index_url, self.extra_index_url):
            detail += f" from {u}" if u else ""
        return [Touch(kind="package", target=self.python, detail=detail)]

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        if posixpath.normpath(self.python) not in _pythons(facts):
            raise OperationError(f"python {self.python!r} is not a Python env the facts recorded")
        env = python_env(facts, self.python) or {}
        have = {norm_pkg(n) for n in env.get("packages") or {}}
        for n in self.packages:
            if norm_pkg(n) not in have and not package_is_known(n, known_packages):
                raise OperationError(f"package {n!r} is named neither by the knowledge nor by "
                                     f"{self.python}'s installed packages")  # fmt: skip

    def ansible(self, ctx: Ctx) -> Mapped:
        env = python_env(ctx.facts, self.python) or {}
        before = {norm_pkg(k): v for k, v in (env.get("packages") or {}).items()}
        pins = [
            {"name": n, "before": _installed(ctx, n, before.get(norm_pkg(n))), "after": v}
            for n, v in self.packages.items()
        ]
        extra: list[str] = ["--no-deps"] if self.no_deps else []
        extra += ["--index-url", self.index_url] if self.index_url else []
        extra += ["--extra-index-url", self.extra_index_url] if self.extra_index_url else []
        reqs = self.reqs()
        pip = f"{self.python}/bin/pip"
        m = Mapped()
        reg = ctx.reg(0)
        task: dict[str, Any] = {
            "name": ctx.name("pip install " + " ".join(reqs)),
            "ansible.builtin.pip": {
                "name": U(reqs),
                "executable": U(pip),
                "state": "forcereinstall" if self.force_reinstall else "present",
            },
            "register": reg,
        }
        if extra:
            task["ansible.builtin.pip"]["extra_args"] = U(shlex.join(extra))
        changes = [f"{p['name']} {p['before'] or '(none)'} -> {p['after'] or 'any'}" for p in pins]
        m.apply.append({
            "name": ctx.name("what pip would change (check mode has no pip diff)"),
            "ansible.builtin.debug": {"msg": U("planned: " + ", ".join(changes))},
            "when": "ansible_check_mode",
        })  # fmt: skip
        m.apply.append(task)
        back = [f"{p['name']}=={p['before']}" for p in pins if p["after"] and p["before"]]
        gone = [p["name"] for p in pins if p["after"] and not p["before"]]
        if back:
            m.undo.append({
                "name": ctx.name("pip back to the plan's versions " + " ".join(back)),
                "ansible.builtin.pip": {"name": U(back), "executable": U(pip),
                                        "extra_args": "--no-deps"},
                "when": changed(reg),
            })  # fmt: skip
        if gone:
            m.undo.append({
                "name": ctx.name("pip uninstall what the plan's host did not have"),
                "ansible.builtin.pip": {"name": U(gone), "executable": U(pip),
                                        "state": "absent"},
                "when": changed(reg),
            })  # fmt: skip
        m.checks.append({"kind": "packages", "python": self.python, "pins": pins})
        return m


# a PEP 440 version's characters: no blank, no comma (Ansible's pip module splits `name` on
# commas: `X==1,--find-links=DIR` gave root's pip an option), nothing a requirement parses
_VERSION_CHARS = re.compile(r"[A-Za-z0-9.!+_-]+")


def _installed(ctx: Ctx, name: str, version: Any) -> str | None:
    """The facts' installed version of `name`, which the playbook's undo reinstalls: only a
    PEP 440 version (the facts are the host's or a saved plan's, not remedy's)."""
    if version is None:
        return None
    if not isinstance(version, str) or not _VERSION_CHARS.fullmatch(version):
        raise ExportError(f"{ctx.where()}: the installed version of {name} in the facts, "
                          f"{version!r}, is not a version")  # fmt: skip
    try:
        Version(version)
    except InvalidVersion:
        raise ExportError(f"{ctx.where()}: the installed version of {name} in the facts, "
                          f"{version!r}, is not a version") from None  # fmt: skip
    return version


_APT_KNOWN = (re.compile(r"^python3\.[0-9]+-dev$"), re.compile(r"^lib(curand|cublas)-dev-\d+-\d+$"))


class AptInstall(Operation):
    op: Literal["apt-install"] = "apt-install"
    packages: list[AptName] = Field(min_length=1)
    creates: list[AbsPath] = Field(default_factory=list)  # directories the packages add

    def commands(self) -> list[str]:
        return ["DEBIAN_FRONTEND=noninteractive apt-get install -y " + join(self.packages)]

    def runs_compiler(self) -> bool:
        return True  # a maintainer script may build (dkms runs make, gcc, as, ld)

    def touches(self) -> list[Touch]:
        out = [Touch(kind="package", target="apt", detail=" ".join(self.packages))]
        return out + [Touch(kind="dir", target=d) for d in self.creates]

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        cands = set(facts.get("apt_candidates") or [])
        for p in self.packages:
            known = p in cands or norm_pkg(p) in known_packages
            if not known and not any(rx.match(p) for rx in _APT_KNOWN):
                raise OperationError(f"apt package {p!r} is not one the knowledge names")

    def ansible(self, ctx: Ctx) -> Mapped:
        reg = ctx.reg(0)
        m = Mapped()
        m.apply.append({
            "name": ctx.name("apt install " + " ".join(self.packages)),
            "ansible.builtin.apt": {"name": U(self.packages), "state": "present"},
            "register": reg,
        })  # fmt: skip
        m.undo.append({
            "name": ctx.name("apt remove what this run installed"),
            "ansible.builtin.apt": {"name": U(self.packages), "state": "absent"},
            "when": changed(reg),
        })  # fmt: skip
        m.checks.append({"kind": "apt", "packages": list(self.packages)})
        return m


class SetEnv(Operation):
    """Set/unset variables of the server's environment in a named scope: a drop-in of the
    unit (`dropin`) or, for a server started by hand, the login environment: a /etc/profile.d
    file (login shells) and the variables' lines of /etc/environment, which pam_env gives every
    SSH session, a non-login `ssh host cmd` included, that never reads /etc/profile.d. Written
    to profile.d alone, a fix held only in login shells: the build the log came from, run as
    `ssh host cmd`, still failed after a run that said `fixed`."""

    op: Literal["env"] = "env"
    scope: Literal["dropin", "profile"]
    unit: UnitName | None = None
    name: Slug  # the profile.d file: /etc/profile.d/zz-remedy-NAME.sh (read after the others)
    set: dict[EnvName, Text] = Field(default_factory=dict)
    unset: list[EnvName] = Field(default_factory=list)
    # the unit's own EnvironmentFile= sets a variable of `set`: Environment= (a drop-in's
    # too) loses to any EnvironmentFile= (systemd.exec(5)), so the drop-in also names a file
    # of remedy's, next to it (<drop-in>.env; systemd reads only *.conf there), read after the
    # unit's own files: a later file's value wins (sandbox/scenarios/service-envfile-cuda-home)
    envfile: bool = False
    # the drop-in is named to be parsed after every drop-in of the unit (zz-remedy-VAR.conf,
    # knowledge.functions.dropin_name): an admin's later drop-in (90-local.conf) that names an
    # EnvironmentFile= of its own would be read after remedy's file and win; read last,
    # remedy's file is the last one listed (sandbox/scenarios/service-dropin-later-cuda-home,
    # tests/test_toolchain_sandbox.py test_o)
    last: bool = False
    # CacheDirectory=NAME in the drop-in: systemd creates /var/cache/NAME for the unit's user
    # and makes it writable under ProtectHome=/ProtectSystem=strict (systemd.exec(5)); a slug,
    # never a path from the host (sandbox/scenarios/service-jit-cache-readonly)
    cache_directory: Slug | None = None

    def model_post_init(self, _ctx: Any) -> None:
        if not self.set and not self.unset:
            raise ValueError("an env operation must set or unset a variable")
        if self.cache_directory and self.scope != "dropin":
            raise ValueError("a CacheDirectory= is for a drop-in")
        if (self.scope == "dropin") != bool(self.unit):
            raise ValueError("scope 'dropin' needs a unit; 'profile' takes none")
        if self.envfile and (self.scope != "dropin" or self.unset or not self.set):
            raise ValueError("an EnvironmentFile is for a drop-in that sets variables")
        if self.last and self.scope != "dropin":
            raise ValueError("only a drop-in is named to be read last")

    def envfile_path(self) -> str:
        return self.path().removesuffix(".conf") + ".env"

    def path(self) -> str:
        if self.scope == "dropin":
            from remedy.knowledge.functions import dropin_name
            from remedy.units.dropin import dropin_path

            var = next(iter(self.set), None) or self.unset[0]
            return dropin_path(str(self.unit), dropin_name(var, self.last))
        return f"/etc/profile.d/zz-remedy-{self.name}.sh"

    def text(self) -> str:
        if self.scope == "dropin":
            text = writers.dropin_env_text(self.set, self.unset)
            if self.envfile:
                text += f"EnvironmentFile={self.envfile_path()}\n"
            if self.cache_directory:
                text += f"CacheDirectory={self.cache_directory}\n"
            return text
        return writers.profile_text(self.set, self.unset)

    def _tmp(self) -> str:
        d, f = posixpath.split(self.path())
        return f"{d}/.{f}.tmp"

    def pam_env(self) -> bool:
        """Whether /etc/environment gets the change too: the login scope, with every value
        one pam_env reads back exactly, on a line short enough for every pam_env (else
        profile.d only, as before)."""
        return self.scope == "profile" and all(
            writers.pam_env_line_fits(k, v) for k, v in self.set.items()
        )

    def _etc_env_tmp(self) -> str:
        return f"/etc/.environment.remedy-{self.name}.tmp"

    def _etc_env_command(self) -> str:
        """Rewrite /etc/environment without the variables' lines, plus the new ones; renamed
        into place (never written through a link)."""
        f, t = writers.ETC_ENVIRONMENT, self._etc_env_tmp()
        names = "|".join([*self.set, *self.unset])
        pattern = f"^[[:space:]]*(export[[:space:]]+)?({names})="
        lines = "".join(
            f" {quote(writers.etc_environment_line(k, v))}" for k, v in self.set.items()
        )
        add = f" && printf '%s\\n'{lines} >> {quote(t)}" if self.set else ""
        # grep -a, C locale: a NUL or a non-UTF-8 byte in the file would make grep call it
        # binary and print nothing (or drop lines), and the rename would then put a file
        # without them in place; a read error (exit 2) stops the rename, no lines matching
        # (exit 1) is the variables being the only lines. The temporary file starts as a
        # `cp -p` of the old one, owned by root: its mode and group stay (a 0600 file holding
        # a token is not made 0644), and its text is never readable by more users than before
        keep = f"{{ LC_ALL=C grep -a -Ev {quote(pattern)} {quote(f)} || [ $? -eq 1 ]; }}"
        copy = f"cp -p {quote(f)} {quote(t)} && chown 0 {quote(t)}"
        return (
            f"if [ -f {quote(f)} ]; then {copy} && {keep} > {quote(t)}; "
            f"else : > {quote(t)} && chmod 0644 {quote(t)}; fi{add} && mv -f {quote(t)} {quote(f)}"
        )

    def commands(self) -> list[str]:
        path, tmp = self.path(), self._tmp()
        write = [
            f"printf '%s' {quote(self.text())} > {quote(tmp)}",
            f"mv -f {quote(tmp)} {quote(path)}",
        ]
        if self.scope == "dropin":
            if self.envfile:
                env, etmp = self.envfile_path(), self._tmp().removesuffix(".conf.tmp") + ".env.tmp"
                text = writers.environment_file_text(self.set)
                write = [
                    f"printf '%s' {quote(text)} > {quote(etmp)}",
                    f"mv -f {quote(etmp)} {quote(env)}",
                    *write,
                ]
            return [f"mkdir -p {quote(posixpath.dirname(path))}", *write, "systemctl daemon-reload"]
        if self.pam_env():
            write.append(self._etc_env_command())
        return write

    def _detail(self) -> str:
        parts = [f"{k}={v}" for k, v in self.set.items()] + [f"unset {k}" for k in self.unset]
        return ("Environment=" if self.scope == "dropin" else "export ") + "; ".join(parts)

    def touches(self) -> list[Touch]:
        kind = "dropin" if self.scope == "dropin" else "file"
        out = [
            Touch(kind=kind, target=self.path(), detail=self._detail()),
            Touch(kind="file", target=self._tmp(), detail="temporary, renamed into place"),
        ]
        if self.envfile:
            out += [
                Touch(kind="file", target=self.envfile_path(),
                      detail=f"EnvironmentFile= of the drop-in: {self._detail()[12:]}"),
                Touch(kind="file", target=self._tmp().removesuffix(".conf.tmp") + ".env.tmp",
                      detail="temporary, renamed into place"),
            ]  # fmt: skip
        if self.unit:
            out.append(Touch(kind="service", target=self.unit, detail="daemon-reload now"))
        if self.pam_env():
            detail = "; ".join(
                [writers.etc_environment_line(k, v) for k, v in self.set.items()]
                + [f"remove {k}" for k in self.unset]
            )
            out += [
                Touch(kind="file", target=writers.ETC_ENVIRONMENT,
                      detail=f"{detail} (pam_env: every SSH session)"),
                Touch(kind="file", target=self._etc_env_tmp(),
                      detail="temporary, renamed into place"),
            ]  # fmt: skip
        return out

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        service = (facts.get("workload") or {}).get("service")
        if self.scope == "dropin" and self.unit != service:
            raise OperationError(f"a drop-in for {self.unit!r}, not the plan's unit {service!r}")
        if self.scope == "profile" and service:
            raise OperationError(f"a profile.d file for a server run by the unit {service!r}")
        self.text()  # values systemd/sh cannot take back exactly raise here

    def ansible(self, ctx: Ctx) -> Mapped:
        m = file_task(ctx, 0, self.path(), self.text(), "0644", notify=self.scope == "dropin")
        if self.envfile:
            e = file_task(
                ctx,
                9,
                self.envfile_path(),
                writers.environment_file_text(self.set),
                "0644",
                notify=False,
            )
            m.apply = e.apply + m.apply
            m.undo = m.undo + e.undo
        if not self.pam_env():
            return m
        f = writers.ETC_ENVIRONMENT
        undo: list[dict[str, Any]] = []
        for j, k in enumerate([*self.set, *self.unset], start=1):
            reg = ctx.reg(j)
            edit: dict[str, Any] = {"path": f, "regexp": f"^\\s*(export\\s+)?{k}=",
                                    "backup": True}  # fmt: skip
            if k in self.set:
                # no `mode`: lineinfile would chmod an existing 0600 file (a token in it) to
                # 0644; a file it creates gets 0666 & ~umask, 0644 under root's 022
                edit.update(line=U(writers.etc_environment_line(k, self.set[k])), create=True)
            else:
                edit["state"] = "absent"
            m.apply.append({"name": ctx.name(f"{k} in {f}"),
                            "ansible.builtin.lineinfile": edit, "register": reg})  # fmt: skip
            # undone newest first: the first edit's backup is the file as it was
            undo.insert(0, {
                "name": ctx.name(f"restore {f} from its backup"),
                "ansible.builtin.copy": {"src": "{{ " + reg + ".backup }}", "dest": f,
                                         "remote_src": True, "mode": "preserve"},
                "when": f"{changed(reg)} and {reg}.backup is defined and {reg}.backup",
            })  # fmt: skip
        m.undo = undo + m.undo
        return m


class Link(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: RelPath
    target: Annotated[str, AfterValidator(_link_target)]


STUB_SONAME = "libcuda.so.1"


class LinkLayout(Operation):
    """Links (and the libcuda link-time stub) inside a toolkit prefix the facts recorded."""

    op: Literal["link-layout"] = "link-layout"
    prefix: AbsPath
    links: list[Link] = Field(default_factory=list)
    stub: RelPath | None = None

    def _at(self, rel: str) -> str:
        return f"{self.prefix}/{rel}"

    def _stub_cmd(self) -> str:
        s = self._at(str(self.stub))
        return (f"mkdir -p {quote(posixpath.dirname(s))} && (test -e {quote(s)} || "
                f"(echo | cc -x c -shared -Wl,-soname,{STUB_SONAME} -o {quote(s)} -))")  # fmt: skip

    def runs_compiler(self) -> bool:
        return self.stub is not None  # `cc` builds the stub

    def writes_under(self) -> list[str]:
        paths = [self._at(k.path) for k in self.links] + (
            [self._at(self.stub)] if self.stub else []
        )
        return [posixpath.dirname(p) for p in paths]

    def commands(self) -> list[str]:
        out = [
            f"test -e {quote(self._at(k.path))} || ln -s {quote(k.target)} {quote(self._at(k.path))}"
            for k in self.links
        ]
        return out + ([self._stub_cmd()] if self.stub else [])

    def touches(self) -> list[Touch]:
        out = [Touch(kind="symlink", target=self._at(k.path), detail=f"→ {k.target}")
               for k in self.links]  # fmt: skip
        if self.stub:
            out.append(Touch(kind="file", target=self._at(self.stub),
                             detail=f"link-time stub (SONAME {STUB_SONAME})"))  # fmt: skip
        return out

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        prefixes = {posixpath.normpath(t.get("prefix") or "") for t in facts.get("toolkits") or []}
        if self.prefix not in prefixes:
            raise OperationError(f"{self.prefix!r} is not a toolkit prefix the facts recorded")

    def ansible(self, ctx: Ctx) -> Mapped:
        m = Mapped()
        j = 0
        for k in self.links:
            reg, path = ctx.reg(j), self._at(k.path)
            m.apply.append({
                "name": ctx.name(f"link {path} -> {k.target}"),
                "ansible.builtin.file": {"path": U(path), "src": U(k.target), "state": "link",
                                         "force": False},
                "register": reg,
            })  # fmt: skip
            m.checks.append({"kind": "link", "path": path, "target": k.target})
            m.undo.insert(0, {
                "name": ctx.name(f"remove {path} (this run created it)"),
                "ansible.builtin.file": {"path": U(path), "state": "absent"},
                "when": changed(reg),
            })  # fmt: skip
            j += 1
        if self.stub:
            from remedy.trust import step_env_guard

            reg, path = ctx.reg(j), self._at(self.stub)
            d = posixpath.dirname(path)
            m.apply.append({
                "name": ctx.name(f"directory {d}"),
                "ansible.builtin.file": {"path": U(d), "state": "directory", "mode": "0755"},
                "register": reg + "_dir",
            })  # fmt: skip
            m.apply.append({
                "name": ctx.name(f"create {path}"),
                # the login environment's gcc variables another user's places fill
                # (COMPILER_PATH...) are left out here, as `remedy run` does: the play's
                # `environment:` can only set them (remedy.trust.UNSET_ONLY_VARS)
                "ansible.builtin.shell": {"cmd": U(step_env_guard() + self._stub_cmd()),
                                          "creates": U(path)},
                "register": reg,
            })  # fmt: skip
            m.checks.append({"kind": "exists", "path": path})
            m.undo.insert(0, {
                "name": ctx.name(f"remove {d} (this run created it)"),
                "ansible.builtin.file": {"path": U(d), "state": "absent"},
                "when": changed(reg + "_dir"),
            })  # fmt: skip
            m.undo.insert(0, {
                "name": ctx.name(f"remove {path} (this run created it)"),
                "ansible.builtin.file": {"path": U(path), "state": "absent"},
                "when": changed(reg),
            })  # fmt: skip
        return m


EXEC_START_DROPIN = "60-remedy-exec-start.conf"


class ExecStart(Operation):
    """A drop-in for the plan's unit that resets ExecStart= to `argv` (each word quoted)."""

    op: Literal["exec-start"] = "exec-start"
    unit: UnitName
    argv: list[Text] = Field(min_length=1)

    def model_post_init(self, _ctx: Any) -> None:
        writers.exec_start_dropin_text(self.argv)  # a word systemd would read as syntax

    def path(self) -> str:
        from remedy.units.dropin import dropin_path

        return dropin_path(self.unit, EXEC_START_DROPIN)

    def commands(self) -> list[str]:
        d = posixpath.dirname(self.path())
        tmp = f"{d}/.{EXEC_START_DROPIN}.tmp"
        text = writers.exec_start_dropin_text(self.argv)
        return [f"mkdir -p {quote(d)} && printf '%s' {quote(text)} > {quote(tmp)} && "
                f"mv -f {quote(tmp)} {quote(self.path())} && systemctl daemon-reload"]  # fmt: skip

    def touches(self) -> list[Touch]:
        return [
            Touch(kind="dropin", target=self.path(), detail=writers.exec_start_line(self.argv)),
            Touch(kind="service", target=self.unit, detail="daemon-reload; restart at the launch probe"),
        ]  # fmt: skip

    def check(self, facts: dict[str, Any], known_packages: set[str]) -> None:
        service = (facts.get("workload") or {}).get("service")
        if self.unit != service:
            raise OperationError(
                f"an ExecStart= for {self.unit!r}, not the plan's unit {service!r}"
            )
        writers.exec_start_dropin_text(self.argv)

    def ansible(self, ctx: Ctx) -> Mapped:
        text = writers.exec_start_dropin_text(self.argv)
        return file_task(ctx, 0, self.path(), text, "0644", notify=True)


class PurgeJitCaches(Operation):
    """Remove the JIT caches of FlashInfer, tvm-ffi and torch extensions (fixed paths under
    the server's $HOME or their own variables, as each consumer resolves them)."""

    op: Literal["purge-jit-caches"] = "purge-jit-caches"
    not_exported: ClassVar[str | None] = (
        "a one-off cache purge with no idempotent form; run `remedy run`"
    )

    def commands(self) -> list[str]:
        """rm -rf as root of paths $HOME, the cache variables and a glob name at run time:
        each removed only if no other user can change where it leads (trust.SH_REMOVE); a
        link planted in a HOME `sudo` kept, or in a cache dir the server's user owns, used
        to take root's `rm -rf` into any tree."""
        from remedy.trust import remove_trees_command

        return [remove_trees_command(
            '"${FLASHINFER_WORKSPACE_BASE:-$HOME}"/.cache/flashinfer/*/*/cached_ops '
            '"${TVM_FFI_CACHE_DIR:-$HOME/.cache/tvm-ffi}" '
            '"${TORCH_EXTENSIONS_DIR:-$HOME/.cache/torch_extensions}"')]  # fmt: skip

    def touches(self) -> list[Touch]:
        return [
            Touch(kind="dir", target="~/.cache/flashinfer (cached_ops)", detail="FlashInfer JIT modules"),
            Touch(kind="dir", target="~/.cache/tvm-ffi", detail="SGLang jit_kernel modules"),
            Touch(kind="dir", target="~/.cache/torch_extensions", detail="torch cpp_extension modules"),
        ]  # fmt: skip


class Manual(Operation):
    """A step a person does (a driver upgrade) or a report: shown, never executed."""

    op: Literal["manual"] = "manual"
    text: Text
    kind: Literal["report", "driver"] = "report"

    @property
    def not_exported(self) -> str:  # type: ignore[override]
        return "a driver upgrade and reboot is a manual step" if self.kind == "driver" else (
            "a report, not a change")  # fmt: skip

    def commands(self) -> list[str]:
        return ["# " + _CC.sub(" ", self.text)]

    def touches(self) -> list[Touch]:
        if self.kind == "driver":
            return [Touch(kind="driver", target="nvidia driver", detail=self.text)]
        return []


OPERATIONS: dict[str, type[Operation]] = {
    c.model_fields["op"].default: c
    for c in (PipInstall, AptInstall, SetEnv, LinkLayout, ExecStart, PurgeJitCaches, Manual)
}


# remedy's own operations (tests may register fixtures besides them)
BUILTIN: tuple[str, ...] = tuple(OPERATIONS)


def register(cls: type[Operation]) -> type[Operation]:
    """Add an operation type (tests use this for runner-only fixtures)."""
    OPERATIONS[cls.model_fields["op"].default] = cls
    return cls


def parse_operation(data: Any) -> Operation:
    """A dict (from a plan file or the planner) as its typed operation; ValueError if not."""
    if isinstance(data, Operation):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("op"), str):
        raise ValueError("an operation is a mapping with an 'op' name")
    cls = OPERATIONS.get(data["op"])
    if cls is None:
        raise ValueError(
            f"unknown operation {data['op']!r} (known: {', '.join(sorted(OPERATIONS))})"
        )
    return cls.model_validate(data)


__all__ = [
    "OPERATIONS",
    "AptInstall",
    "ExecStart",
    "LinkLayout",
    "Manual",
    "Operation",
    "OperationError",
    "PipInstall",
    "PurgeJitCaches",
    "SetEnv",
    "parse_operation",
    "register",
]


# Python packages remedy may name besides the CUDA release wheels (cuda-releases.yaml) and the
# components' own packages (components.yaml): the kernels' companion packages and the
# cu12-suffixed runtime wheels that rules-breadth.yaml's actions install.
_EXTRA_PACKAGES = (
    "torch", "torchvision", "torchaudio", "flashinfer-python", "flashinfer-cubin",
    "flashinfer-jit-cache", "sgl-kernel", "nvidia-curand", "nvidia-cublas",
)  # fmt: skip
_RUNTIME_WHEEL = re.compile(r"^nvidia-cuda-(runtime|nvrtc)(-cu[0-9]+)?$")


def known_packages(kb: Any) -> set[str]:
    """Package names (normalised) the knowledge names: release wheels, apt packages of the
    releases, the components' packages."""
    names: set[str] = set(_EXTRA_PACKAGES)
    for r in kb.releases:
        names |= set(r.wheels) | set(r.apt)
    names |= {c.package for c in kb.components.values() if c.package}
    try:  # the provider table (knowledge/providers.yaml): who ships a missing file
        from remedy.knowledge.providers import load_table

        table = load_table()
    except Exception:  # noqa: BLE001 - no table: no provider packages
        table = None
    if table is not None:
        for line in table.pip.values():
            names |= set(line.packages)
        names |= set(table.debian.packages)
    return {norm_pkg(n) for n in names}


def package_is_known(name: str, known: set[str]) -> bool:
    return norm_pkg(name) in known or bool(_RUNTIME_WHEEL.match(norm_pkg(name)))
