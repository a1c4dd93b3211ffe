"""Fleets: many hosts from an inventory, one plan per set of identical hosts, a staged rollout.

inventory.py  Ansible inventories (INI, YAML) and plain host lists; host patterns (--limit)
fanout.py     bounded-concurrency SSH to many hosts; facts grouped into plan groups
rollout.py    canary, batches and the error budget (knows nothing about SSH)
report.py     the fleet's summary table, JSON document and exit code
commands.py   what `remedy facts|plan|run --inventory` do, put together
"""
