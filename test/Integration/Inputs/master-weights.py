# Master weights stay f32: compares parameters before (BEFORE) and after
# (AFTER) one bf16-mixed step at a learning rate whose updates are below
# bf16's resolution, in the --params-out format (a name, then its values, one
# parameter a line). Prints and checks: every value is an f32; at least
# MIN_MOVED of the weights moved; of those, at least MIN_LOST moved by less
# than half a bf16 ulp of their value (an update a bf16 weight would have
# rounded away: its bf16 copy is unchanged).
import struct
import sys


def read(path):
    params = {}
    for line in open(path):
        fields = line.split()
        if fields:
            params[fields[0]] = [float(v) for v in fields[1:]]
    return params


def f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


def bf16(v):
    """v (an f32) rounded to bf16, nearest even."""
    bits = struct.unpack("I", struct.pack("f", v))[0]
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("f", struct.pack("I", bits))[0]


before, after = read(sys.argv[1]), read(sys.argv[2])
min_moved, min_lost = float(sys.argv[3]), float(sys.argv[4])
total = moved = lost = 0
for name, old in before.items():
    new = after[name]
    assert len(old) == len(new), name
    for was, now in zip(old, new):
        total += 1
        if now != f32(now):
            sys.exit(f"{name}: {now!r} is not an f32 value")
        if now == was:
            continue
        moved += 1
        if bf16(now) == bf16(was):
            lost += 1
print(f"{total} weights, {moved} moved ({moved / total:.3f}), "
      f"{lost} of them by less than bf16 resolves ({lost / max(moved, 1):.3f})")
if moved < min_moved * total or lost < min_lost * moved:
    sys.exit("master weights: fewer updates kept than required")
