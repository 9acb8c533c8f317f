"""Parameter files and the synthetic data of piper-run, in Python.

write_params/read_params use the text format of --params-in/--params-out:
one line per parameter, its name then its values (%.17g, row-major).
synthetic_index/synthetic_float reproduce include/piper/Interpreter/
SyntheticData.h bit for bit (splitmix64, fnv1a64 and the Box-Muller of
include/piper/Reference/Init.h), so PyTorch can train on exactly the batches
piper-run feeds.
"""

import math

import torch

_M = (1 << 64) - 1


def splitmix64(x):
    z = (x + 0x9E3779B97F4A7C15) & _M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M
    return z ^ (z >> 31)


def fnv1a64(s):
    h = 0xCBF29CE484222325
    for c in s.encode():
        h = ((h ^ c) * 0x100000001B3) & _M
    return h


def init_key(seed, name):
    return splitmix64((seed ^ fnv1a64(name)) & _M)


def data_key(seed, arg_index, step):
    return splitmix64((init_key(seed, "data.%d" % arg_index) + step) & _M)


def synthetic_index(seed, arg_index, step, shape, bound):
    key = data_key(seed, arg_index, step)
    n = 1
    for d in shape:
        n *= d
    vals = [(splitmix64((key + i) & _M) * bound) >> 64 for i in range(n)]
    return torch.tensor(vals, dtype=torch.int64).reshape(shape)


def standard_normal_at(key, index):
    r1 = splitmix64((key + 2 * index) & _M)
    r2 = splitmix64((key + 2 * index + 1) & _M)
    u1 = float((r1 >> 11) + 1) * (1.0 / 9007199254740992.0)
    u2 = float(r2 >> 11) * (1.0 / 9007199254740992.0)
    return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * 3.141592653589793 * u2)


def synthetic_float(seed, arg_index, step, shape):
    key = data_key(seed, arg_index, step)
    n = 1
    for d in shape:
        n *= d
    vals = [standard_normal_at(key, i) for i in range(n)]
    return torch.tensor(vals, dtype=torch.float64).reshape(shape)


def write_params(path, named_tensors):
    with open(path, "w") as f:
        for name, t in named_tensors:
            flat = t.detach().contiguous().reshape(-1).double().tolist()
            f.write(name + "".join(" %.17g" % v for v in flat) + "\n")


def read_params(path):
    out = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            if fields:
                out[fields[0]] = [float(v) for v in fields[1:]]
    return out
