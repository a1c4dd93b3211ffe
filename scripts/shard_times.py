#!/usr/bin/env python3
"""Merge the per-file seconds of a sharded run into tests/shard_times.json.

`REMEDY_TIMES_DIR=DIR bash scripts/test` leaves DIR/NAME-K.json for each shard (tests/shards.py);
this folds them into the table scripts/test balances its shards by, one entry per file per
shard name. Run it after a full run whose timings you trust:
    python3 scripts/shard_times.py DIR"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TABLE = Path(__file__).resolve().parents[1] / "tests" / "shard_times.json"


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: shard_times.py DIR (the REMEDY_TIMES_DIR of a full run)", file=sys.stderr)
        return 2
    table: dict[str, dict[str, float]] = {}
    for f in sorted(Path(argv[0]).glob("*-*.json")):
        name = f.stem.rsplit("-", 1)[0]
        try:
            times = json.loads(f.read_text())
        except ValueError as exc:
            print(f"{f}: not JSON ({exc})", file=sys.stderr)
            return 1
        into = table.setdefault(name, {})
        for k, v in times.items():  # a file split over two shards of a name: its sum
            into[str(k)] = round(into.get(str(k), 0.0) + float(v), 1)
    if not table:
        print(f"{argv[0]}: no NAME-K.json files", file=sys.stderr)
        return 1
    table = {n: dict(sorted(t.items())) for n, t in sorted(table.items())}
    TABLE.write_text(json.dumps(table, indent=1) + "\n")
    for n, t in table.items():
        print(f"{n}: {len(t)} files, {sum(t.values()):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
