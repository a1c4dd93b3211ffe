"""Inventories and host patterns (remedy.fleet.inventory): INI, YAML, plain lists, groups and
children, variable precedence, ranges, connection variables, Ansible's pattern semantics, and
malformed input named by file:line. Where ansible-core is installed (the dev extra), the same
inventories go through `ansible-inventory --list` and must give the same hosts, groups and
variables — Ansible itself is the oracle for "Ansible semantics"."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from remedy.errors import InputError
from remedy.fleet.inventory import (
    InventoryError,
    detect_format,
    expand_hosts,
    load_inventory,
    parse_inventory,
    split_pattern,
)

INI = """\
# a comment
lonely ansible_host=10.0.0.9

[gpu]
gpu[01:04] ansible_user=ops
gpu09:2222 rack=b

[cpu]
cpu-[a:c]

[gpu:vars]
rack=a
ansible_ssh_private_key_file=~/.ssh/gpu

[h200]
gpu03 rack=c
gpu04

[h200:vars]
rack=h
tier=fast

[prod:children]
gpu
cpu

[gpu:children]
h200

[prod:vars]
tier=slow
env=prod

[all:vars]
ansible_user=root
env=none
"""

YAML = """\
all:
  vars:
    ansible_user: root
    env: none
  hosts:
    lonely:
      ansible_host: 10.0.0.9
  children:
    prod:
      vars: {tier: slow, env: prod}
      children:
        gpu:
          vars:
            rack: a
            ansible_ssh_private_key_file: ~/.ssh/gpu
          hosts:
            gpu[01:04]:
              ansible_user: ops
            gpu09:
              ansible_port: 2222
              rack: b
          children:
            h200:
              vars: {rack: h, tier: fast}
              hosts:
                gpu03: {rack: c}
                gpu04:
        cpu:
          hosts:
            cpu-[a:c]:
"""


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


@pytest.fixture(params=["ini", "yaml"])
def inv(request, tmp_path):
    if request.param == "ini":
        return load_inventory(write(tmp_path, "hosts", INI))
    return load_inventory(write(tmp_path, "hosts.yml", YAML))


def test_hosts_ranges_and_order(inv):
    assert list(inv.hosts) == [
        "lonely",
        "gpu01",
        "gpu02",
        "gpu03",
        "gpu04",
        "gpu09",
        "cpu-a",
        "cpu-b",
        "cpu-c",
    ]


def test_groups_children_and_ungrouped(inv):
    assert inv.hosts["lonely"].groups == ["all", "ungrouped"]
    assert set(inv.hosts["gpu03"].groups) == {"all", "prod", "gpu", "h200"}
    assert set(inv.hosts["cpu-b"].groups) == {"all", "prod", "cpu"}
    assert inv.group_hosts("prod") == [f"gpu0{i}" for i in (1, 2, 3, 4, 9)] + [
        "cpu-a",
        "cpu-b",
        "cpu-c",
    ]


def test_variable_precedence(inv):
    v = {h: inv.hosts[h].vars for h in inv.hosts}
    # host > child group (h200) > parent (gpu) > grandparent (prod) > all
    assert v["gpu03"]["rack"] == "c"  # host var
    assert v["gpu04"]["rack"] == "h"  # h200 over gpu
    assert v["gpu01"]["rack"] == "a"
    assert v["gpu09"]["rack"] == "b"
    assert v["gpu04"]["tier"] == "fast" and v["gpu01"]["tier"] == "slow"
    assert v["cpu-a"]["env"] == "prod" and v["lonely"]["env"] == "none"
    assert v["gpu02"]["ansible_user"] == "ops" and v["cpu-a"]["ansible_user"] == "root"


def test_connection_variables(inv):
    c = inv.hosts["gpu09"].connection
    assert (c.address, c.port, c.user, c.key_file) == ("gpu09", 2222, "root", "~/.ssh/gpu")
    c = inv.hosts["lonely"].connection
    assert (c.address, c.port, c.user, c.key_file) == ("10.0.0.9", None, "root", None)
    assert c.known_hosts is None


def test_known_hosts_from_ssh_args_and_remedy_var(tmp_path):
    inv = load_inventory(
        write(
            tmp_path,
            "h.ini",
            "a ansible_ssh_common_args='-o UserKnownHostsFile=/k/a -o StrictHostKeyChecking=yes'\n"
            'b ansible_ssh_extra_args="-oUserKnownHostsFile=/k/b1 -p 2200" '
            "remedy_known_hosts=/k/b2\n"
            "c ansible_ssh_common_args='-i /keys/c -l bob -o \"UserKnownHostsFile /k/c /k/c2\"'\n",
        )
    )
    assert inv.hosts["a"].connection.known_hosts == ("/k/a",)
    b = inv.hosts["b"].connection
    assert b.known_hosts == ("/k/b2",) and b.port == 2200  # remedy_known_hosts wins
    c = inv.hosts["c"].connection
    assert (c.key_file, c.user, c.known_hosts) == ("/keys/c", "bob", ("/k/c", "/k/c2"))


def test_plain_list(tmp_path):
    p = write(tmp_path, "hosts.txt", "# fleet\ngpu01\nops@gpu02:2202\n\nnode[1:3]  # comment\n")
    assert detect_format(p.read_text(), str(p)) == "plain"
    inv = load_inventory(p)
    assert list(inv.hosts) == ["gpu01", "gpu02", "node1", "node2", "node3"]
    c = inv.hosts["gpu02"].connection
    assert (c.user, c.port) == ("ops", 2202)
    assert inv.select("ungrouped") == list(inv.hosts.values())


def test_ranges():
    assert expand_hosts("gpu[01:03]") == ["gpu01", "gpu02", "gpu03"]
    assert expand_hosts("n[1:10:4]") == ["n1", "n5", "n9"]
    assert expand_hosts("r[a:b]-[1:2]") == ["ra-1", "ra-2", "rb-1", "rb-2"]
    assert expand_hosts("x[8:11]") == ["x8", "x9", "x10", "x11"]
    for bad in ("gpu[01:]", "gpu[1:a]", "gpu[3:1]", "gpu[01:03", "gpu[1:5:0]"):
        with pytest.raises(InventoryError):
            expand_hosts(bad)


PATTERNS = [
    ("all", "lonely gpu01 gpu02 gpu03 gpu04 gpu09 cpu-a cpu-b cpu-c"),
    ("*", "lonely gpu01 gpu02 gpu03 gpu04 gpu09 cpu-a cpu-b cpu-c"),
    ("h200", "gpu03 gpu04"),
    ("gpu0*", "gpu01 gpu02 gpu03 gpu04 gpu09"),
    ("cpu:h200", "gpu03 gpu04 cpu-a cpu-b cpu-c"),
    ("cpu,lonely", "lonely cpu-a cpu-b cpu-c"),
    ("prod:!h200", "gpu01 gpu02 gpu09 cpu-a cpu-b cpu-c"),
    ("!h200:prod", "gpu01 gpu02 gpu09 cpu-a cpu-b cpu-c"),  # exclusions apply last
    ("gpu:&h200", "gpu03 gpu04"),
    ("prod:&gpu:!gpu04", "gpu01 gpu02 gpu03 gpu09"),
    ("~gpu0[12]", "gpu01 gpu02"),
    ("gpu[0]", "gpu01"),
    ("gpu[1:2]", "gpu02 gpu03"),
    ("gpu[-1]", "gpu09"),
    ("h200[-1]", "gpu04"),
    ("!cpu", "lonely gpu01 gpu02 gpu03 gpu04 gpu09"),  # only exclusions: from `all`
    ("gpu09, cpu-b", "gpu09 cpu-b"),
]


@pytest.mark.parametrize("pattern, expected", PATTERNS)
def test_patterns(inv, pattern, expected):
    assert [h.name for h in inv.select(pattern)] == expected.split()


def test_pattern_errors(inv):
    with pytest.raises(InventoryError, match="'gpux' matches no host"):
        inv.select("gpu:gpux")
    with pytest.raises(InventoryError, match="leaves no host"):
        inv.select("cpu:&h200")
    with pytest.raises(InventoryError, match="regular expression"):
        inv.select("~gpu(")
    assert isinstance(InventoryError("x"), InputError)  # exit 2 like any bad input


def test_split_pattern():
    assert split_pattern("a:&b:!c") == ["a", "&b", "!c"]
    assert split_pattern("g[1:2]:h") == ["g[1:2]", "h"]
    assert split_pattern("a:b, c") == ["a:b", "c"]  # commas win, as in Ansible


@pytest.mark.parametrize(
    "name, text, line, what",
    [
        ("h.ini", "[gpu]\ngpu01\n[gpu:vars]\nnovalue\n", 4, "expected NAME=VALUE"),
        ("h.ini", "[gpu\ngpu01\n", 1, "bad section header"),
        ("h.ini", "[gpu:hostz]\ngpu01\n", 1, "unknown section kind"),
        ("h.ini", "[gpu]\ngpu01 port 22\n", 2, "expected NAME=VALUE host variable"),
        ("h.ini", "[gpu]\ngpu01\ngpu[05:]\n", 3, "bad range"),
        ("h.ini", "[gpu]\ngpu01 ansible_user='root\n", 2, "No closing quotation"),
        ("h.ini", "[a:children]\nb\n[b:children]\na\n", 4, "its own ancestor"),
        ("h.yml", "all:\n  hosts:\n    - gpu01\n", 2, "valid dictionary"),
        ("h.yml", "all:\n  children:\n    gpu:\n      hostz:\n        gpu01:\n", 4, "hostz"),
        ("h.yml", "all:\n  hosts:\n    gpu01:\n  hosts:\n    gpu02:\n", 2, "duplicate key"),
        ("h.yml", "all:\n  hosts:\n    gpu01: {a: [1, 2}\n", 3, "YAML"),
        ("h.yml", "- gpu01\n- gpu02\n", 1, "mapping of groups"),
        ("h.txt", "gpu01\ngpu02 extra\ngpu03\n", 2, "one host per line"),
    ],
)
def test_malformed_names_file_and_line(tmp_path, name, text, line, what):
    p = write(tmp_path, name, text)
    if name == "h.txt":
        with pytest.raises(InventoryError) as ei:
            parse_inventory(text, str(p), fmt="plain")
    else:
        with pytest.raises(InventoryError) as ei:
            load_inventory(p)
    assert ei.value.file == str(p) and ei.value.line == line, str(ei.value)
    assert str(ei.value).startswith(f"{p}:{line}: ") and what in str(ei.value)


def test_unreadable_empty_and_bad_vars(tmp_path):
    with pytest.raises(InventoryError, match="cannot read"):
        load_inventory(tmp_path / "missing.ini")
    with pytest.raises(InventoryError, match="names no host"):
        load_inventory(write(tmp_path, "empty.ini", "# nothing\n"))
    # a port that is no number is refused where it is written (file:line), not at connect
    with pytest.raises(InventoryError, match=r"p\.ini:1: ansible_port must be a whole number"):
        load_inventory(write(tmp_path, "p.ini", "a ansible_port=ssh\n"))
    bad = load_inventory(write(tmp_path, "w.ini", "b ansible_connection=winrm\n"))
    with pytest.raises(InventoryError, match="winrm is not supported"):
        bad.hosts["b"].connection  # noqa: B018


def test_format_detection():
    assert detect_format("all:\n  hosts:\n", "inv") == "yaml"
    assert detect_format("[gpu]\na\n", "inv") == "ini"
    assert detect_format("a ansible_host=1.2.3.4\n", "inv") == "ini"
    assert detect_format("a\nb:2222\n", "inv") == "plain"
    assert detect_format("a: b\n", "hosts.yaml") == "yaml"


# --------------------------------------------------------------------------------------------
# Ansible itself as the oracle
# --------------------------------------------------------------------------------------------

ANSIBLE_INVENTORY = shutil.which("ansible-inventory") or str(
    Path(__file__).resolve().parents[1] / ".venv" / "bin" / "ansible-inventory"
)


def ansible_view(path: Path) -> tuple[dict[str, set[str]], dict[str, dict]]:
    if not Path(ANSIBLE_INVENTORY).exists():
        pytest.skip("ansible-core is not installed (pip install -e .[dev])")
    r = subprocess.run(
        [ANSIBLE_INVENTORY, "-i", str(path), "--list"],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "ANSIBLE_INVENTORY_ENABLED": "ini,yaml", "HOME": "/tmp"},
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    hostvars = data.pop("_meta")["hostvars"]
    groups_of: dict[str, set[str]] = {}

    def walk(g: str, anc: list[str]) -> None:
        node = data.get(g, {})
        for h in node.get("hosts", []):
            groups_of.setdefault(h, set()).update([g, *anc])
        for c in node.get("children", []):
            walk(c, [g, *anc])

    walk("all", [])
    return groups_of, hostvars


@pytest.mark.parametrize("name, text", [("hosts.ini", INI), ("hosts.yml", YAML)])
def test_same_as_ansible_inventory(tmp_path, name, text):
    p = write(tmp_path, name, text)
    groups_of, hostvars = ansible_view(p)
    inv = load_inventory(p)
    assert set(inv.hosts) == set(groups_of)
    for h, host in inv.hosts.items():
        assert set(host.groups) == groups_of[h], h
        assert host.vars == hostvars.get(h, {}), h


ORACLE_PATTERNS = """
import json, sys
from ansible.parsing.dataloader import DataLoader
from ansible.inventory.manager import InventoryManager
inv = InventoryManager(loader=DataLoader(), sources=[sys.argv[1]])
print(json.dumps({p: [h.name for h in inv.get_hosts(p)] for p in json.loads(sys.argv[2])}))
"""


@pytest.mark.parametrize("name, text", [("hosts.ini", INI), ("hosts.yml", YAML)])
def test_patterns_same_as_ansible(tmp_path, name, text):
    """Every pattern of test_patterns selects the same hosts as Ansible's InventoryManager."""
    python = Path(ANSIBLE_INVENTORY).with_name("python")
    if not Path(ANSIBLE_INVENTORY).exists() or not python.exists():
        pytest.skip("ansible-core is not installed (pip install -e .[dev])")
    p = write(tmp_path, name, text)
    patterns = [args[0] for args in PATTERNS]
    r = subprocess.run(
        [str(python), "-c", ORACLE_PATTERNS, str(p), json.dumps(patterns)],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "ANSIBLE_INVENTORY_ENABLED": "ini,yaml", "HOME": "/tmp"},
    )
    assert r.returncode == 0, r.stderr
    theirs = json.loads(r.stdout)
    inv = load_inventory(p)
    for pat in patterns:
        assert {h.name for h in inv.select(pat)} == set(theirs[pat]), pat


# --------------------------------------------------------------------------------------------
# the command line, without SSH: local hosts and input errors
# --------------------------------------------------------------------------------------------


def remedy_cli(*args: str) -> subprocess.CompletedProcess:
    import sys

    return subprocess.run(
        [sys.executable, "-m", "remedy", *args], capture_output=True, text=True, timeout=300
    )


def test_fleet_plan_groups_identical_hosts_into_one_plan(tmp_path, capsys):
    """Two inventory hosts that are this machine (ansible_connection=local) have the same facts
    but for their names: ONE plan group with both; --limit narrows it; --json is one document."""
    p = write(
        tmp_path,
        "local.ini",
        "[here]\nme1 ansible_connection=local\nme2 ansible_connection=local\n",
    )
    r = remedy_cli("plan", "--inventory", str(p), "--json")
    assert r.returncode in (0, 3), r.stderr  # 3: this machine may have no complete plan
    doc = json.loads(r.stdout)
    assert [g["hosts"] for g in doc["groups"]] == [["me1", "me2"]], doc["groups"]
    assert set(doc["plans"]) == {"1"} and doc["plans"]["1"]["host"] == "me1"
    assert "collecting facts from 2 host(s)" in r.stderr and "me2: facts ok" in r.stderr
    code, out, _ = remedy_inproc(capsys, "facts", "--inventory", str(p), "--limit", "me2", "--json")
    assert code == 0
    doc = json.loads(out)
    assert [h["host"] for h in doc["hosts"]] == ["me2"] and doc["hosts"][0]["facts"][
        "host"
    ] == "me2"


def remedy_inproc(capsys, *args: str) -> tuple[int, str, str]:
    from remedy.cli import main

    capsys.readouterr()
    with pytest.raises(SystemExit) as ei:
        main(list(args))
    cap = capsys.readouterr()
    return ei.value.code, cap.out, cap.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["plan", "--inventory", "{bad}"], "{bad}:2: expected NAME=VALUE host variable"),
        (["run", "--inventory", "{good}", "--limit", "nope"], "'nope' matches no host"),
        (["run", "--inventory", "{good}", "--max-errors", "ten"], "--max-errors takes a number"),
        (["run", "--inventory", "{good}", "--batch-size", "0"], "--batch-size must be at least 1"),
        (["run", "gpu01", "--inventory", "{good}"], "--inventory names the hosts"),
        (["facts", "--limit", "gpu"], "--limit goes with --inventory"),
    ],
)
def test_fleet_cli_input_errors_exit_2(tmp_path, capsys, args, message):
    bad = write(tmp_path, "bad.ini", "[gpu]\ngpu01 port 22\n")
    good = write(tmp_path, "good.ini", "[gpu]\ngpu01\n")
    argv = [a.format(bad=bad, good=good) for a in args]
    code, out, err = remedy_inproc(capsys, *argv)
    assert code == 2, (out, err)
    assert message.format(bad=bad) in err and "Traceback" not in err
