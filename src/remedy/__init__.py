"""remedy: a remediation planner for GPU inference hosts."""

__version__ = "0.1.0"
