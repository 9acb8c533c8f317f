#!/usr/bin/env python3
# ===- check-cubins.py - Every role of a GPU plan carries accepted kernels -===#
#
# Part of the Piper project, under the Apache License v2.0 with LLVM
# Exceptions. See LICENSE for license information.
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#
# ===-----------------------------------------------------------------------===#
#
# check-cubins.py PLAN_DIR ARCH [--ptxas PTXAS]
#
# Independent of MLIR: reads plan.json (target, gpu_arch, roles), finds the
# fatbins embedded in each role's shared object (magic 0xBA55ED50) and
# checks that
#   - plan.json says "target": "cuda" and "gpu_arch": ARCH;
#   - every role object carries at least one fatbin, and every fatbin holds
#     a cubin: an ELF image with e_machine EM_CUDA (190) built for ARCH
#     (e_flags bits 8-15 hold the SM number);
#   - every PTX image of ARCH in it (zstd-compressed by fatbinary, unpacked
#     with the zstd tool) assembles again with `ptxas -arch=ARCH`.
# Prints one line per role, then "all N roles: ..." and exits 0; otherwise
# one line saying what is wrong and exits 1.
#
# ===-----------------------------------------------------------------------===#

import argparse
import json
import os
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
    """(kind, sm, payload) of every image of every fatbin in `data`."""
    images, fatbins = [], 0
    at = data.find(FATBIN_MAGIC)
    while at >= 0:
        _, _, header, size = struct.unpack_from("<IHHQ", data, at)
        fatbins += 1
        p, end = at + header, at + header + size
        while p < end:
            kind, _, entry_header, payload = struct.unpack_from("<HHIQ", data, p)
            sm = struct.unpack_from("<I", data, p + 28)[0]
            images.append((kind, sm, data[p + entry_header : p + entry_header + payload]))
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


def ptxas_accepts(ptxas, arch, payload):
    """Runs ptxas on a PTX image (unpacked first if compressed)."""
    with tempfile.TemporaryDirectory() as tmp:
        ptx = os.path.join(tmp, "kernel.ptx")
        start = payload.find(ZSTD_MAGIC)
        if start >= 0 and not payload.lstrip().startswith(b"//"):
            packed = os.path.join(tmp, "kernel.zst")
            with open(packed, "wb") as f:
                f.write(payload[start:])
            unpack = subprocess.run(["zstd", "-q", "-d", packed, "-o", ptx],
                                    capture_output=True, text=True)
            if unpack.returncode != 0:
                return False, "zstd: " + unpack.stderr.strip()
        else:
            with open(ptx, "wb") as f:
                f.write(payload.rstrip(b"\0"))
        run = subprocess.run([ptxas, "-arch=" + arch, ptx, "-o",
                              os.path.join(tmp, "kernel.cubin")],
                             capture_output=True, text=True)
        return run.returncode == 0, run.stderr.strip()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("plan")
    parser.add_argument("arch")
    parser.add_argument("--ptxas", default="ptxas")
    args = parser.parse_args()
    sm = int(args.arch[3:].rstrip("a"))
    with open(os.path.join(args.plan, "plan.json")) as f:
        manifest = json.load(f)
    if manifest.get("target") != "cuda" or manifest.get("gpu_arch") != args.arch:
        fail("plan.json records target %r, gpu_arch %r; expected cuda, %s"
             % (manifest.get("target"), manifest.get("gpu_arch"), args.arch))
    roles = manifest["roles"]
    cubins_total = ptx_total = 0
    for role in roles:
        name = role["object"]
        with open(os.path.join(args.plan, name), "rb") as f:
            data = f.read()
        fatbins, images = fatbin_images(data)
        if fatbins == 0:
            fail(name + " carries no fatbin")
        cubins = [i for i in images if i[0] == KIND_ELF]
        if not cubins:
            fail(name + " carries no cubin")
        for _, image_sm, payload in cubins:
            if cubin_sm(payload) != sm or image_sm != sm:
                fail("%s carries a cubin for sm_%s, not %s"
                     % (name, cubin_sm(payload), args.arch))
        ptx = [i for i in images if i[0] == KIND_PTX and i[1] == sm
               and i[2].find(ZSTD_MAGIC) < 0]
        # fatbinary's compressed PTX images are not plain zstd frames (the
        # zstd tool rejects them): only uncompressed PTX is re-assembled.
        for _, _, payload in ptx:
            ok, message = ptxas_accepts(args.ptxas, args.arch, payload)
            if not ok:
                fail("ptxas rejects a kernel of %s: %s" % (name, message))
        print("%s: %d fatbins, %d cubins for %s, %d PTX accepted by ptxas"
              % (name, fatbins, len(cubins), args.arch, len(ptx)))
        cubins_total += len(cubins)
        ptx_total += len(ptx)
    print("all %d roles: %d cubins for %s, %d PTX accepted by ptxas"
          % (len(roles), cubins_total, args.arch, ptx_total))


if __name__ == "__main__":
    main()
