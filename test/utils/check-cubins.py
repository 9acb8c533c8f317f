#!/usr/bin/env python3
# ===- check-cubins.py - Every role of a GPU plan carries accepted kernels -===#
#
# Part of the Piper project, under the Apache License v2.0 with LLVM
# Exceptions. See LICENSE for license information.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# ===-----------------------------------------------------------------------===#
#
# check-cubins.py PLAN_DIR ARCH [--ptxas PTXAS] [--role OBJECT]... [--jobs N]
#
# Independent of MLIR: reads plan.json (target, gpu_arch, roles), finds the
# fatbins embedded in each role's shared object (magic 0xBA55ED50; one per
# gpu.module, i.e. per distinct kernel) and checks that
#   - plan.json says "target": "cuda" and "gpu_arch": ARCH;
#   - every role object carries at least one fatbin, and every fatbin holds
#     a cubin: an ELF image with e_machine EM_CUDA (190) built for ARCH
#     (e_flags bits 8-15 hold the SM number), and a PTX image for ARCH;
#   - every PTX image assembles again with `ptxas -arch=ARCH` (fatbinary
#     compresses PTX as one zstd frame of the entry's compressed size,
#     unpacked with the zstd tool), and every kernel entry of the PTX
#     (`.entry`) has its code in the cubin beside it (a `.text.<kernel>`
#     section).
# --role restricts the check to the named objects (e.g. step.pp1.so).
# Prints one line per role, then "all N roles: ..." and exits 0; otherwise
# one line saying what is wrong and exits 1.
#
# ===-----------------------------------------------------------------------===#

import argparse
import concurrent.futures
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
EM_CUDA = 190
KIND_PTX, KIND_ELF = 1, 2
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def fail(message):
    print("check-cubins: " + message)
    sys.exit(1)


def fatbin_images(data):
    """(kind, sm, payload) of every image of every fatbin in `data`.

    An entry's header holds its kind (offset 0), header size (4), payload
    size (8), compressed size (16; the payload is padded beyond it) and SM
    number (28)."""
    images, fatbins = [], 0
    at = data.find(FATBIN_MAGIC)
    while at >= 0:
        _, _, header, size = struct.unpack_from("<IHHQ", data, at)
        fatbins += 1
        p, end = at + header, at + header + size
        while p < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, p)
            packed = struct.unpack_from("<I", data, p + 16)[0]
            sm = struct.unpack_from("<I", data, p + 28)[0]
            body = data[p + entry_header : p + entry_header + payload]
            if packed and body.startswith(ZSTD_MAGIC):
                body = body[:packed]
            images.append((kind, sm, body))
            p += entry_header + payload
        at = data.find(FATBIN_MAGIC, end)
    return fatbins, images


def cubin_sm(image):
    """The SM number of a cubin ELF image, or None if it is none."""
    if image[:4] != b"\x7fELF" or image[4] != 2:
        return None
    machine = struct.unpack_from("<H", image, 18)[0]
    if machine != EM_CUDA:
        return None
    flags = struct.unpack_from("<I", image, 48)[0]
    return (flags >> 8) & 0xFF


def cubin_kernels(image):
    """The kernels of a cubin: the names of its `.text.<kernel>` sections."""
    shoff, = struct.unpack_from("<Q", image, 40)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", image, 58)
    def section(i):
        return struct.unpack_from("<IIQQQQ", image, shoff + i * shentsize)
    names_at = section(shstrndx)[4]
    kernels = set()
    for i in range(shnum):
        name_off = section(i)[0]
        end = image.index(b"\0", names_at + name_off)
        name = image[names_at + name_off : end].decode()
        if name.startswith(".text."):
            kernels.add(name[len(".text."):])
    return kernels


def ptx_text(payload):
    """The PTX source of an image (unpacked first if compressed)."""
    if not payload.startswith(ZSTD_MAGIC):
        return payload.rstrip(b"\0"), ""
    with tempfile.TemporaryDirectory() as tmp:
        packed, ptx = os.path.join(tmp, "k.zst"), os.path.join(tmp, "k.ptx")
        with open(packed, "wb") as f:
            f.write(payload)
        run = subprocess.run(["zstd", "-q", "-d", packed, "-o", ptx],
                             capture_output=True, text=True)
        if run.returncode != 0:
            return None, "zstd: " + run.stderr.strip()
        with open(ptx, "rb") as f:
            return f.read().replace(b"\0", b""), ""


def ptxas_accepts(ptxas, arch, ptx):
    """Runs ptxas on PTX source: (ok, message)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "kernel.ptx")
        with open(path, "wb") as f:
            f.write(ptx)
        run = subprocess.run([ptxas, "-arch=" + arch, path, "-o",
                              os.path.join(tmp, "kernel.cubin")],
                             capture_output=True, text=True)
        return run.returncode == 0, run.stderr.strip()


def check_fatbin(args, sm, name, cubin, ptx_payload):
    """Checks one kernel's cubin and PTX; returns its kernel count."""
    ptx, why = ptx_text(ptx_payload)
    if ptx is None:
        return "%s: %s" % (name, why)
    entries = set(re.findall(rb"\.entry\s+([A-Za-z_$][\w$]*)", ptx))
    entries = {e.decode() for e in entries}
    missing = entries - cubin_kernels(cubin)
    if not entries or missing:
        return "%s: the cubin lacks kernel(s) %s of its PTX" % (
            name, ", ".join(sorted(missing)) or "(none in the PTX)")
    ok, message = ptxas_accepts(args.ptxas, args.arch, ptx)
    if not ok:
        return "ptxas rejects a kernel of %s: %s" % (name, message)
    return len(entries)


def check_role(args, sm, plan, name, pool):
    with open(os.path.join(plan, name), "rb") as f:
        data = f.read()
    fatbins, images = fatbin_images(data)
    if fatbins == 0:
        fail(name + " carries no fatbin")
    cubins = [i for i in images if i[0] == KIND_ELF]
    ptxs = [i for i in images if i[0] == KIND_PTX]
    if not cubins:
        fail(name + " carries no cubin")
    for _, image_sm, payload in cubins:
        if cubin_sm(payload) != sm or image_sm != sm:
            fail("%s carries a cubin for sm_%s, not %s"
                 % (name, cubin_sm(payload), args.arch))
    if len(ptxs) != len(cubins) or any(i[1] != sm for i in ptxs):
        fail("%s: %d cubins but %d PTX images for %s"
             % (name, len(cubins), len([i for i in ptxs if i[1] == sm]),
                args.arch))
    # fatbinary writes each fatbin's ELF, then its PTX.
    results = pool.map(lambda pair: check_fatbin(args, sm, name, *pair),
                       zip([c[2] for c in cubins], [p[2] for p in ptxs]))
    kernels = 0
    for result in results:
        if isinstance(result, str):
            fail(result)
        kernels += result
    print("%s: %d fatbins, %d cubins for %s, %d PTX accepted by ptxas, "
          "%d kernels" % (name, fatbins, len(cubins), args.arch, len(ptxs),
                          kernels))
    return len(cubins), len(ptxs), kernels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("arch")
    parser.add_argument("--ptxas", default="ptxas")
    parser.add_argument("--role", action="append", default=[],
                        help="check only this role object (repeatable)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    sm = int(args.arch[3:].rstrip("a"))
    with open(os.path.join(args.plan, "plan.json")) as f:
        manifest = json.load(f)
    if manifest.get("target") != "cuda" or manifest.get("gpu_arch") != args.arch:
        fail("plan.json records target %r, gpu_arch %r; expected cuda, %s"
             % (manifest.get("target"), manifest.get("gpu_arch"), args.arch))
    names = [role["object"] for role in manifest["roles"]]
    for wanted in args.role:
        if wanted not in names:
            fail("the plan has no role object %s" % wanted)
    if args.role:
        names = [n for n in names if n in args.role]
    totals = [0, 0, 0]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for name in names:
            counts = check_role(args, sm, args.plan, name, pool)
            totals = [a + b for a, b in zip(totals, counts)]
    print("all %d roles: %d cubins for %s, %d PTX accepted by ptxas, "
          "%d kernels" % (len(names), totals[0], args.arch, totals[1],
                          totals[2]))


if __name__ == "__main__":
    main()
