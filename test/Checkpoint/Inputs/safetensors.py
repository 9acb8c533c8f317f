#!/usr/bin/env python3
"""An independent safetensors reader and writer (struct and json only).

  safetensors.py dump FILE PARAMS   prints FILE's tensors named in PARAMS (a
                                    piper-run --params-out file), in its
                                    order and format
  safetensors.py write PARAMS PLAN_JSON OUT DTYPE
                                    writes PARAMS' values as a safetensors
                                    file of whole tensors (shapes from the
                                    plan's parameters), in DTYPE (F32, F64)

The checkpoint tests use it to check that piper-ckpt consolidate writes the
format as published (8-byte little-endian header length, JSON header,
data_offsets relative to the data) and that piper-run --init-from reads a
file written by another program.
"""

import json
import struct
import sys

FORMATS = {"F64": "d", "F32": "f", "I64": "q"}


def dump(path, params):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    base = 8 + n
    for line in open(params):
        name = line.split()[0]
        entry = header[name]
        begin, end = entry["data_offsets"]
        code = FORMATS[entry["dtype"]]
        size = struct.calcsize(code)
        values = struct.unpack("<%d%s" % ((end - begin) // size, code),
                               blob[base + begin : base + end])
        print(name + "".join(" %.17g" % v for v in values))


def write(params, plan_json, out, dtype):
    shapes = {a["name"]: a["shape"] for a in json.load(open(plan_json))["arguments"]
              if a["kind"] == "param"}
    header, data = {}, b""
    for line in open(params):
        name, *values = line.split()
        chunk = struct.pack("<%d%s" % (len(values), FORMATS[dtype]),
                            *[float(v) for v in values])
        header[name] = {"dtype": dtype, "shape": shapes[name],
                        "data_offsets": [len(data), len(data) + len(chunk)]}
        data += chunk
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(sys.argv[2], sys.argv[3])
    else:
        write(*sys.argv[2:6])
