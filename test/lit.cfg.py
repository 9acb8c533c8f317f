# -*- Python -*-
# lit configuration for Piper's IR tests.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "Piper"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.piper_obj_root, "test")
# Unit tests and the embedding example run as their own ctest entries.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "embed", "utils"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%piper_src_root", config.piper_src_root))
# Token-wise comparison with a numeric tolerance (strategy invariance).
config.substitutions.append(
    ("%numdiff", "python3 " + os.path.join(config.piper_src_root, "test", "utils", "numdiff.py")))

llvm_config.use_default_substitutions()
# The sanitizer options of the debug preset reach the tools under test.
llvm_config.with_system_environment(
    ["HOME", "INCLUDE", "LIB", "TMP", "TEMP", "ASAN_OPTIONS", "UBSAN_OPTIONS"])

# Every FileCheck invocation checks that captured names do not leak between
# CHECK-LABEL blocks.
config.substitutions.insert(0, ("FileCheck", "FileCheck -enable-var-scope"))

tool_dirs = [config.piper_tools_dir, config.llvm_tools_dir]
# Debian's LLVM keeps not/count/split-file beside FileCheck, off PATH.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.piper_tools_dir, append_path=True)
tools = ["piper-opt", "not", "count", "split-file"]
# Tools that are built only once their sources exist.
tools += [
    tool
    for tool in [
        "piper-compile",
        "piper-directives",
        "piper-gen",
        "piper-interp",
        "piper-run",
    ]
    if os.path.exists(os.path.join(config.piper_tools_dir, tool))
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# The PyTorch cross-check (test/Torch/) runs under Debian's python3, the one
# that has torch (1.13 CPU); where torch does not import, those tests report
# UNSUPPORTED. Inserted first: the default `%python` substitution would
# otherwise rewrite the start of `%python_torch`.
python_torch = "/usr/bin/python3"
try:
    has_torch = (
        subprocess.run(
            [python_torch, "-c", "import torch"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=120,
        ).returncode
        == 0
    )
except (OSError, subprocess.TimeoutExpired):
    has_torch = False
if has_torch:
    config.available_features.add("torch")
config.substitutions.insert(0, ("%python_torch", python_torch))

# Multi-rank runs of compiled plans (test/Integration/*-mpi.mlir). OpenMPI
# refuses root without both variables (containers, CI) and more ranks than
# cores without --oversubscribe; `timeout` turns a hang into a failure, and
# the runtime's own timeout (PIPER_RT_TIMEOUT) fires well before it. Under
# the debug preset's sanitizers, OpenMPI's own allocations would be reported
# as leaks, so leak detection is off for these runs (as in the runtime's
# ctest entries); the other checks stay on.
mpiexec = shutil.which("mpiexec")
asan_options = config.environment.get("ASAN_OPTIONS", "")
mpi_asan_options = (asan_options + ":" if asan_options else "") + "detect_leaks=0"
if mpiexec:
    config.available_features.add("mpi")
    config.substitutions.insert(
        0,
        (
            "%mpiexec",
            "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
            "ASAN_OPTIONS=" + mpi_asan_options + " "
            "PIPER_RT_TIMEOUT=30 timeout 120 " + mpiexec + " --oversubscribe",
        ),
    )
