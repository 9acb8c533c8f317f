#!/usr/bin/env python3
"""Copies a compiled plan directory and damages one thing in it, as a hostile
user or a broken disk would (test/Hardening/plan-tamper.mlir).

usage: tamper_plan.py SRC_PLAN DST_PLAN CASE
"""
import json
import shutil
import sys

src, dst, case = sys.argv[1:4]
shutil.rmtree(dst, ignore_errors=True)
shutil.copytree(src, dst)
path = dst + "/plan.json"
with open(path) as f:
    plan = json.load(f)
role = plan["roles"][0]
obj = dst + "/" + role["object"]
text = None

if case == "negative-shape":
    plan["arguments"][0]["shape"][0] = -3
elif case == "huge-shape":
    plan["arguments"][0]["shape"] = [4294967296, 4294967296]
elif case == "memory":
    plan["arguments"][0]["shape"] = [1 << 20, 1 << 19]
elif case == "fewer-inputs":
    role["inputs"].pop()
elif case == "duplicate-input":
    role["inputs"][1] = role["inputs"][0]
elif case == "duplicate-output":
    role["outputs"][1] = role["outputs"][0]
elif case == "dtype":
    data = [a for a in plan["arguments"] if a["kind"] == "data"][0]
    data["dtype"] = "f32" if data["dtype"] == "f64" else "f64"
elif case == "update-shape":
    res = [r for r in plan["results"] if "updates" in r][0]
    res["shape"] = [1]
elif case == "entry-malloc":
    role["entry"] = "malloc"
elif case == "entry-missing":
    role["entry"] = "piper_entry_nothing"
elif case == "object-path":
    role["object"] = "../../etc/passwd"
elif case == "no-checksum":
    del role["object_checksum"]
elif case == "truncated":
    with open(obj, "r+b") as f:
        f.truncate(4096)
elif case == "bitflip":
    with open(obj, "r+b") as f:
        f.seek(2000)
        b = f.read(1)
        f.seek(2000)
        f.write(bytes([b[0] ^ 0x10]))
elif case in ("mesh-0", "mesh-neg"):
    plan["mesh"]["axes"][0]["size"] = 0 if case == "mesh-0" else -1
elif case == "mesh-x":
    plan["mesh"]["axes"][0]["size"] = "x"
elif case == "mesh-huge":
    plan["mesh"]["axes"][0]["size"] = 1 << 40
elif case == "version-float":
    text = json.dumps(plan, indent=2).replace('"version": 1', '"version": 1.0')
elif case == "deep":
    text = "[" * 50000 + "]" * 50000
else:
    sys.exit("unknown case " + case)

with open(path, "w") as f:
    f.write(text if text is not None else json.dumps(plan, indent=2))
