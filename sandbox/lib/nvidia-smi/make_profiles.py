"""Write the profiles of the nvidia-smi stand-in from the H200 recording (run once; output is
checked in). h200.json replays the recording verbatim; sm120.json adapts it to the SM120 seed host.

usage: python3 sandbox/lib/nvidia-smi/make_profiles.py
"""

import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
REC = os.path.join(HERE, "recordings", "h200")


def read(name):
    with open(os.path.join(REC, name)) as f:
        return f.read()


def split_csv(line):
    return [c.strip() for c in line.rstrip("\n").split(", ")]


def fields_from(args_file, units_file, nounits_file):
    args = read(args_file)
    names = re.search(r"--query-gpu=(\S+)", args).group(1).split(",")
    header, values = read(units_file).splitlines()[:2]
    nounits = read(nounits_file).splitlines()[0] if nounits_file else None
    heads, vals = split_csv(header), split_csv(values)
    nus = split_csv(nounits) if nounits else [re.sub(r" (MiB|MHz|W|%)$", "", v) for v in vals]
    return {
        n: {"header": h, "value": v, "nounits": u}
        for n, h, v, u in zip(names, heads, vals, nus, strict=True)
    }


def main():
    fields = fields_from("06.args", "06.stdout", "07.stdout")
    fields.update(
        {k: v for k, v in fields_from("15.args", "15.stdout", None).items() if k not in fields}
    )
    valid, aliases = [], {}
    for line in read("help-query-gpu.txt").splitlines():
        m = re.match(r'^"([^"]+)"(?: or "([^"]+)")?$', line.strip())
        if m:
            valid.append(m.group(1))
            if m.group(2):
                valid.append(m.group(2))
                aliases[m.group(2)] = m.group(1)
    aliases.update({"clocks.current.sm": "clocks.sm", "clocks.current.memory": "clocks.mem"})
    aliases = {k: v for k, v in aliases.items() if k != v}
    replay = {}
    for i in range(1, 16):
        a = read(f"{i:02d}.args").rstrip("\n")
        if "--query-gpu" not in a:
            replay[a] = f"{i:02d}"
    base = {
        "recording": "h200",
        "fields": fields,
        "aliases": aliases,
        "valid_fields": sorted(set(valid)),
        "replay": replay,
    }
    h200 = dict(
        base,
        profile="h200",
        note="Real nvidia-smi 580.159.04 output recorded on a real NVIDIA H200, replayed verbatim.",
        substitutions=[],
    )
    name = "NVIDIA RTX PRO 6000 Blackwell Workstation Edition"
    uuid = "GPU-00000120-5b00-4000-8000-000000000000"
    over = {
        "name": name,
        "compute_cap": "12.0",
        "uuid": uuid,
        "pci.bus_id": "00000000:01:00.0",
        "memory.total": "97887 MiB",
        "memory.free": "97272 MiB",
        "power.limit": "600.00 W",
    }
    f120 = json.loads(json.dumps(fields))
    for k, v in over.items():
        f120[k]["value"] = v
        f120[k]["nounits"] = re.sub(r" (MiB|MHz|W|%)$", "", v)
    sm120 = dict(
        base,
        profile="sm120",
        note=(
            "ADAPTED from the H200 recording for the SM120 seed host: name, compute_cap, memory, "
            "power limit, bus id and a synthetic UUID substituted; driver 580.159.04 and every "
            "other value are the H200's (no seed records its exact 580.x driver)."
        ),
        fields=f120,
        substitutions=[
            ["NVIDIA H200                    On", "NVIDIA RTX PRO 6000 Blac...    On"],
            ["0MiB / 143771MiB", "0MiB /  97887MiB"],
            ["/  700W", "/  600W"],
            ["GPU-e8405d15-ab31-67dd-adc2-2807cd182bcd", uuid],
            ["00000000:00:06.0", "00000000:01:00.0"],
            ["NVIDIA H200", name],
            ["Hopper", "Blackwell"],
            ["143771 MiB", "97887 MiB"],
            ["143156 MiB", "97272 MiB"],
            ["700.00 W", "600.00 W"],
        ],
    )
    for prof in (h200, sm120):
        with open(os.path.join(HERE, prof["profile"] + ".json"), "w") as f:
            json.dump(prof, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
