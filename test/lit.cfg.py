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
# mlir-opt: upstream passes piper-opt does not register (func-to-llvm), to
# show what they make of a Piper pass's output.
tools = ["piper-opt", "mlir-opt", "not", "count", "split-file"]
# Tools that are built only once their sources exist.
tools += [
    tool
    for tool in [
        "piper-calibrate",
        "piper-compile",
        "piper-directives",
        "piper-gen",
        "piper-interp",
        "piper-run",
        "piper-run-cuda",
        "piper-search",
    ]
    if os.path.exists(os.path.join(config.piper_tools_dir, tool))
]
llvm_config.add_tool_substitutions(tools, tool_dirs)
if "piper-run-cuda" in tools:
    config.available_features.add("piper-run-cuda")

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
# The front end (python/piper), as CMake copies it into the build tree.
config.environment["PYTHONPATH"] = os.path.join(config.piper_obj_root, "python")

# The CUDA toolkit's ptxas (and fatbinary), which the GPU target's
# gpu-module-to-binary runs and test/utils/check-cubins.py runs again.
cuda_bin = "/usr/local/cuda/bin"
if os.path.exists(os.path.join(cuda_bin, "ptxas")):
    config.available_features.add("ptxas")
    llvm_config.with_environment("PATH", cuda_bin, append_path=True)

# mlir-runner and MLIR's runner utilities, to execute small lowered
# functions on the CPU (test/Conversion/GPU/gpu-clip-run.mlir).
mlir_lib_dir = os.path.join(os.path.dirname(config.llvm_tools_dir), "lib")
config.substitutions.append(("%mlir_lib_dir", mlir_lib_dir))
if os.path.exists(os.path.join(config.llvm_tools_dir, "mlir-runner")):
    config.available_features.add("mlir-runner")

# The English text corpus (scripts/make-corpus) comes from Debian's
# `fortunes` package, which scripts/setup installs.
if os.path.isdir("/usr/share/games/fortunes"):
    config.available_features.add("fortunes")

# Multi-rank runs of compiled plans (test/Integration/*-mpi.mlir). OpenMPI
# refuses root without both variables (containers, CI) and more ranks than
# cores without --oversubscribe; `timeout` turns a hang into a failure, and
# the runtime's own timeout (PIPER_RT_TIMEOUT) fires well before it. Under
# the debug preset's sanitizers, OpenMPI's own allocations would be reported
# as leaks, so leak detection is off for these runs (as in the runtime's
# ctest entries); the other checks stay on. Each test's jobs keep their
# OpenMPI session directories under its own %t.ompi: in the one temporary
# directory lit gives every test, two jobs starting at once raced to
# create the same ompi.<host>.<uid> ("A call to mkdir was unable to create
# the desired directory ... File exists", orte_init failed).
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
            "OMPI_MCA_orte_tmpdir_base=%t.ompi "
            "ASAN_OPTIONS=" + mpi_asan_options + " "
            "PIPER_RT_TIMEOUT=30 timeout 120 " + mpiexec + " --oversubscribe",
        ),
    )

# The same runs launched by Slurm's `srun` (test/Integration/srun.mlir), on
# a throwaway one-node cluster that the test starts and stops itself with
# scripts/slurm-local (slurmctld, slurmd and munged as the current user,
# everything under its %t). The feature `slurm` needs those tools, and a
# trial start and stop here (about 4 s) must succeed, so that a machine
# where the cluster cannot start skips the test rather than failing it.
# PIPER_TEST_SLURM=0 skips the trial (and the test); PIPER_TEST_SLURM=1
# requires the feature: a failed trial is then an error.
def _slurm_local_works():
    import tempfile

    sbin_path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
    missing = [
        tool
        for tool in ["srun", "sinfo", "scancel", "squeue", "slurmctld", "slurmd", "munged"]
        if not shutil.which(tool, path=sbin_path)
    ]
    if missing:
        return "not installed: " + " ".join(missing)
    script = os.path.join(config.piper_src_root, "scripts", "slurm-local")
    probe = tempfile.mkdtemp(prefix="piper-slurm-probe.")
    try:
        result = subprocess.run(
            [script, "start", probe],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
        if result.returncode != 0:
            return "scripts/slurm-local start failed: " + result.stderr.strip()
        return None
    except (OSError, subprocess.TimeoutExpired) as e:
        return "scripts/slurm-local start failed: " + str(e)
    finally:
        try:
            subprocess.run([script, "stop", probe], timeout=60,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired):
            pass
        shutil.rmtree(probe, ignore_errors=True)


slurm_wanted = os.environ.get("PIPER_TEST_SLURM", "")
if mpiexec and slurm_wanted != "0":
    slurm_problem = _slurm_local_works()
    if slurm_problem is None:
        config.available_features.add("slurm")
    elif slurm_wanted == "1":
        lit_config.error("PIPER_TEST_SLURM=1 but " + slurm_problem)
    else:
        lit_config.note("srun tests skipped: " + slurm_problem)
    # The runs under srun: the PMIx plugin (OpenMPI's MPI_Init needs it; the
    # cluster's default, named again for clarity), --overcommit for more ranks
    # than cores, and the same timeouts and sanitizer options as %mpiexec.
    # SLURM_CONF comes from the test.
    config.substitutions.insert(
        0,
        (
            "%srun",
            "env ASAN_OPTIONS=" + mpi_asan_options + " "
            "PIPER_RT_TIMEOUT=30 timeout 120 srun --mpi=pmix --overcommit",
        ),
    )
