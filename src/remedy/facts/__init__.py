"""Fact collectors: a fact is a command plus a parser (pyinfra's model).

    facts = await collect_facts(transport, services=["sglang.service"], timeout=30)
    facts = collect_local()

Each collector has command() (a POSIX sh snippet) and parse(stdout) (pure, tolerant);
collect_facts composes them into one batched script per round trip.
"""

from __future__ import annotations

from remedy.facts.collect import collect_facts, collect_local, main_script
from remedy.facts.envs import login_env_script, parse_env_block, parse_login_env
from remedy.facts.gpus import GpuCollector, parse_query_gpu
from remedy.facts.host import HostCollector
from remedy.facts.pythons import PythonEnvCollector
from remedy.facts.sections import DEFAULT_TOKEN, Section, split_sections
from remedy.facts.services import ServicesCollector, parse_show
from remedy.facts.toolkits import ToolkitCollector

__all__ = [
    "DEFAULT_TOKEN",
    "GpuCollector",
    "HostCollector",
    "PythonEnvCollector",
    "Section",
    "ServicesCollector",
    "ToolkitCollector",
    "collect_facts",
    "collect_local",
    "login_env_script",
    "main_script",
    "parse_env_block",
    "parse_login_env",
    "parse_query_gpu",
    "parse_show",
    "split_sections",
]
