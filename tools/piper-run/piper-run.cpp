//===- piper-run.cpp - Train a model with a compiled plan -----------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// piper-run PLAN_DIR [--steps=N] [--seed=S] [--log=FILE.jsonl]
//                   [--params-out=FILE] [--trace=FILE] [--progress]
//
// Loads a plan written by piper-compile, initialises parameters exactly as
// the interpreter does (Init.h: pure functions of seed, name and element),
// zeroes optimizer state, feeds the interpreter's synthetic data
// (SyntheticData.h) and runs N training steps, printing
//   step 1 loss 2.0790981075160042
// as piper-interp does, so the two outputs compare token by token.
//
// A one-role plan runs in a single process (no MPI). A plan with several
// roles runs under `mpiexec -np N`: the runtime checks N against the plan's
// mesh, each rank runs the program of the role its mesh coordinates match
// (one device per role), sends and receives go through the piper_comm_*
// shims (Comm.cpp), and the rank that computes the loss sends it to rank 0,
// which alone prints and logs, so the output is piper-interp's.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "Plan.h"
#include "Trace.h"
#ifdef PIPER_RUN_HAVE_MPI
#include "Comm.h"
#endif

#include "piper/Interpreter/ByteCorpus.h"
#include "piper/Interpreter/SyntheticData.h"
#include "piper/Reference/Init.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <dlfcn.h>
#include <set>
#include <unistd.h>

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("piper-run options");
cl::opt<std::string> planDir(cl::Positional, cl::desc("<plan directory>"),
                             cl::Required, cl::cat(category));
cl::opt<int64_t> steps("steps", cl::desc("Training steps (default 1)"),
                       cl::init(1), cl::cat(category));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Seed of parameters and data (default 0)"),
                       cl::init(0), cl::cat(category));
cl::opt<std::string> dataFile(
    "data",
    cl::desc("Train on the bytes of a text file (e.g. Piper's "
             "data/corpus/sonnets.txt) as tokens, in the interpreter's "
             "order, instead of synthetic data (piper-interp --data)"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> paramsOut(
    "params-out",
    cl::desc("After the last step, write every parameter to FILE (rank 0, "
             "gathered from the ranks that hold it): its name, then its "
             "values, one line each, as piper-interp --params-out"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write a Chrome trace of the run (every launch and every "
             "communication of every rank, merged by rank 0; '%r' in FILE "
             "writes one file per rank) at the end"),
    cl::value_desc("file"), cl::cat(category));
cl::opt<cl::boolOrDefault> progress(
    "progress",
    cl::desc("Print a progress line (time per step, ETA) to stderr after "
             "each step (default: when stderr is a terminal)"),
    cl::cat(category));
cl::opt<bool> bufferStatsFlag(
    "buffer-stats",
    cl::desc("At the end, print how many of the plan's allocations the "
             "buffer cache served (rank 0, stderr)"),
    cl::init(false), cl::cat(category));
cl::opt<std::string> logFile("log",
                             cl::desc("Also write one JSON line per step"),
                             cl::value_desc("file"), cl::cat(category));
// Fault injection for the tests that a job whose rank dies stops everywhere
// (rather than hanging): rank R kills itself with SIGKILL as step S starts.
cl::opt<int64_t> killRank("kill-rank",
                          cl::desc("Testing: this rank dies (SIGKILL) at "
                                   "the start of --kill-at-step"),
                          cl::init(-1), cl::Hidden, cl::cat(category));
cl::opt<int64_t> killAtStep("kill-at-step",
                            cl::desc("Testing: the step --kill-rank dies at"),
                            cl::init(1), cl::Hidden, cl::cat(category));

int fail(const std::string &message) {
  llvm::errs() << "piper-run: " << message << "\n";
  return 1;
}

/// A host buffer of one step argument or result, with the memref descriptor
/// the plan's entry point reads: {allocated, aligned, offset, sizes, strides}.
struct Buffer {
  const TensorInfo *info = nullptr;
  std::vector<uint64_t> storage; // 8-byte aligned
  std::vector<int64_t> descriptor;

  /// What this device holds of `t`: its flat chunk, or the whole tensor.
  void allocate(const TensorInfo &t) {
    info = &t;
    std::vector<int64_t> shape =
        t.shard ? std::vector<int64_t>{t.shard->chunk} : t.localShape();
    size_t bytes = static_cast<size_t>(t.localNumel()) * t.elementSize();
    storage.assign((bytes + 7) / 8 + 1, 0);
    int64_t rank = static_cast<int64_t>(shape.size());
    descriptor.assign(3 + 2 * rank, 0);
    void *data = storage.data();
    std::memcpy(&descriptor[0], &data, sizeof(void *));
    std::memcpy(&descriptor[1], &data, sizeof(void *));
    int64_t stride = 1;
    for (int64_t d = rank - 1; d >= 0; --d) {
      descriptor[3 + d] = shape[d];
      descriptor[3 + rank + d] = stride;
      stride *= shape[d];
    }
  }
  void *data() { return storage.data(); }
  /// Stores f64 values in the buffer's element type.
  void setFloats(const std::vector<double> &values) {
    if (info->dtype == DType::F32) {
      float *p = static_cast<float *>(data());
      for (size_t i = 0; i < values.size(); ++i)
        p[i] = static_cast<float>(values[i]);
    } else {
      std::memcpy(data(), values.data(), values.size() * sizeof(double));
    }
  }
  double firstFloat() { return floatAt(0); }
  double floatAt(int64_t i) {
    return info->dtype == DType::F32 ? static_cast<float *>(data())[i]
                                     : static_cast<double *>(data())[i];
  }
};

/// Row-major index of `coords` over `axes` (mesh order), and the product of
/// their sizes: a device's replica index along a set of axes.
std::pair<int64_t, int64_t> indexAlong(const Plan &plan,
                                       const std::vector<int64_t> &coords,
                                       const std::vector<std::string> &axes) {
  int64_t index = 0, size = 1;
  for (auto [a, axis] : llvm::enumerate(plan.meshAxes))
    if (llvm::is_contained(axes, axis.first)) {
      index = index * axis.second + coords[a];
      size *= axis.second;
    }
  return {index, size};
}

/// The device's part along each split dimension of `t`.
std::vector<int64_t> partsOf(const Plan &plan, const TensorInfo &t,
                             const std::vector<int64_t> &coords) {
  std::vector<int64_t> parts;
  for (const SplitInfo &s : t.split)
    parts.push_back(indexAlong(plan, coords, s.axes).first);
  return parts;
}

/// The whole tensor's flat index of element `i` of part `parts` of `t`.
int64_t globalIndex(const TensorInfo &t, const std::vector<int64_t> &parts,
                    int64_t i) {
  std::vector<int64_t> local = t.localShape();
  std::vector<int64_t> index(local.size());
  for (int64_t d = static_cast<int64_t>(local.size()) - 1; d >= 0; --d) {
    index[d] = i % local[d];
    i /= local[d];
  }
  for (auto [k, s] : llvm::enumerate(t.split))
    index[s.dim] += parts[k] * local[s.dim];
  int64_t at = 0;
  for (size_t d = 0; d < index.size(); ++d)
    at = at * t.shape[d] + index[d];
  return at;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "piper-run: trains a model with a plan compiled "
                              "by piper-compile, printing the loss per step\n");
  Plan plan;
  std::string error;
  if (!loadPlan(planDir, plan, error))
    return fail(error);
  // Multi-rank: this rank's role and the rank that holds the loss.
  const RoleInfo *myRole = &plan.roles.front();
  int rank = 0;
  // Mesh coordinates and role of every world rank (one device without MPI).
  std::vector<std::vector<int64_t>> coordsOf = {
      std::vector<int64_t>(plan.meshAxes.size(), 0)};
  std::vector<const RoleInfo *> roleOf = {myRole};
#ifdef PIPER_RUN_HAVE_MPI
  piper_rt_context context = nullptr;
  int64_t meshDevices = 1;
  for (auto &[name, size] : plan.meshAxes)
    meshDevices *= size;
  // The runtime also runs a one-device plan that is traced.
  bool multiRank = meshDevices > 1 || !traceFile.empty();
  // Every rank runs the same checks on the same plan, so every rank fails
  // alike; rank 0 alone says why.
  auto failAll = [&](const std::string &message) {
    if (rank == 0)
      fail(message);
    piper::run::commStop();
    piper_rt_finalize(context);
    return 1;
  };
  if (multiRank) {
    if (piper_rt_init(&argc, &argv, &context) != PIPER_RT_OK)
      return fail(std::string("cannot start the runtime: ") +
                  piper_rt_last_error());
    piper_rt_rank(context, &rank);
    std::vector<const char *> names;
    std::vector<int64_t> sizes;
    for (auto &[name, size] : plan.meshAxes) {
      names.push_back(name.c_str());
      sizes.push_back(size);
    }
    piper_rt_mesh mesh = nullptr;
    if (piper_rt_mesh_create(names.size(), names.data(), sizes.data(), &mesh) !=
            PIPER_RT_OK ||
        piper_rt_set_mesh(context, mesh) != PIPER_RT_OK) {
      std::string message = piper_rt_last_error();
      piper_rt_mesh_destroy(mesh);
      return failAll(message);
    }
    // The role of each world rank: the one whose coordinates its own match.
    int64_t devices = 0;
    piper_rt_mesh_num_devices(mesh, &devices);
    std::vector<int64_t> coords(names.size());
    roleOf.assign(devices, nullptr);
    coordsOf.assign(devices, coords);
    for (int64_t r = 0; r < devices; ++r) {
      piper_rt_mesh_coords(mesh, r, coords.data());
      coordsOf[r] = coords;
      for (const RoleInfo &candidate : plan.roles) {
        bool match = true;
        for (auto [a, axis] : llvm::enumerate(plan.meshAxes)) {
          auto it = candidate.role.find(axis.first);
          match &= it == candidate.role.end() || it->second == coords[a];
        }
        if (!match)
          continue;
        if (roleOf[r]) {
          piper_rt_mesh_destroy(mesh);
          return failAll("rank " + std::to_string(r) + " matches roles " +
                         roleOf[r]->program + " and " + candidate.program);
        }
        roleOf[r] = &candidate;
      }
      if (!roleOf[r]) {
        piper_rt_mesh_destroy(mesh);
        return failAll("rank " + std::to_string(r) + " has no role");
      }
    }
    piper_rt_mesh_destroy(mesh);
    myRole = roleOf[rank];
    std::string error;
    if (!piper::run::commStart(context, error) ||
        !piper::run::commCreate(plan.communicators, error))
      return failAll(error);
  }
#else
  if (!traceFile.empty())
    return fail("--trace needs piper-run built with MPI (the runtime writes "
                "the trace)");
  if (plan.roles.size() != 1 || plan.mesh.size() > 1)
    return fail("the plan runs on several devices; multi-rank plans need "
                "piper-run built with MPI");
#endif
  // The loss: the mean over the batch replicas of the loss role, sent to
  // rank 0 (one device per batch replica: the others are copies).
  std::vector<int> lossRanks;
  for (size_t r = 0; r < roleOf.size(); ++r) {
    if (!llvm::is_contained(roleOf[r]->outputs, 0))
      continue;
    bool first = true;
    for (auto [a, axis] : llvm::enumerate(plan.meshAxes))
      if (!roleOf[r]->role.count(axis.first) &&
          !llvm::is_contained(plan.batchAxes, axis.first))
        first &= coordsOf[r][a] == 0;
    if (first)
      lossRanks.push_back(static_cast<int>(r));
  }
  auto [batchReplica, batchReplicas] =
      indexAlong(plan, coordsOf[rank], plan.batchAxes);
  const RoleInfo &role = *myRole;
#ifdef PIPER_RUN_HAVE_MPI
  if (multiRank)
    piper::run::commSetProgramStreams(role.streams);
  piper_rt_stream computeStream = nullptr;
  if (!traceFile.empty()) {
    // Every rank enables it (a merged trace is gathered at finalize).
    if (piper_rt_trace_enable(context, traceFile.c_str()) != PIPER_RT_OK ||
        piper_rt_stream_create(context, "compute", &computeStream) !=
            PIPER_RT_OK)
      return failAll(std::string("--trace: ") + piper_rt_last_error());
    piper::run::traceLaunches(context, computeStream, role.launches);
  }
#endif
  for (int64_t i : role.inputs)
    if (i < 0 || static_cast<size_t>(i) >= plan.arguments.size())
      return fail("bad manifest: role input " + std::to_string(i) +
                  " is not an argument");
  for (int64_t j : role.outputs)
    if (j < 0 || static_cast<size_t>(j) >= plan.results.size())
      return fail("bad manifest: role output " + std::to_string(j) +
                  " is not a result");

  llvm::SmallString<128> objectPath(plan.directory);
  llvm::sys::path::append(objectPath, role.object);
  void *handle = dlopen(objectPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return fail("cannot load " + std::string(objectPath) + ": " + dlerror());
  using Entry = void (*)(void **);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, role.entry.c_str()));
  if (!entry)
    return fail(std::string(objectPath) + " has no entry point '" + role.entry +
                "'");
  using LastError = const char *(*)();
  using ClearError = void (*)();
  auto lastError =
      reinterpret_cast<LastError>(dlsym(handle, "piper_kernels_last_error"));
  auto clearError =
      reinterpret_cast<ClearError>(dlsym(handle, "piper_kernels_clear_error"));

  // Every step argument lives here; parameters and state persist.
  std::vector<Buffer> args(plan.arguments.size());
  for (const TensorInfo &arg : plan.arguments) {
    Buffer &buffer = args[arg.index];
    buffer.allocate(arg);
    if (arg.kind == "param") {
      ref::Tensor value;
      ref::Status status =
          arg.init == "normal"
              ? ref::initNormal(seed, arg.name, arg.shape, arg.std, value)
          : arg.init == "ones" ? ref::initOnes(arg.shape, value)
                               : ref::initZeros(arg.shape, value);
      if (!status.ok())
        return fail("parameter '" + arg.name + "': " + status.message());
      if (arg.shard) {
        // This device's chunk of the flattening, zero-padded.
        int64_t member =
            indexAlong(plan, coordsOf[rank], arg.shard->axes).first;
        std::vector<double> chunk(arg.shard->chunk, 0.0);
        for (int64_t i = 0; i < arg.shard->chunk; ++i) {
          int64_t at = member * arg.shard->chunk + i;
          if (at < arg.numel())
            chunk[i] = value.data[at];
        }
        value.data = std::move(chunk);
      } else if (!arg.split.empty()) {
        // This device's part of the split dimensions.
        std::vector<int64_t> parts = partsOf(plan, arg, coordsOf[rank]);
        std::vector<double> part(arg.localNumel());
        for (int64_t i = 0; i < arg.localNumel(); ++i)
          part[i] = value.data[globalIndex(arg, parts, i)];
        value.data = std::move(part);
      }
      buffer.setFloats(value.data);
    }
    // State starts at zero (allocate() zeroes it).
  }
  std::vector<Buffer> results(plan.results.size());
  for (int64_t j : role.outputs)
    results[j].allocate(plan.results[j]);

  std::unique_ptr<llvm::raw_fd_ostream> log;
  if (!logFile.empty() && rank == 0) {
    std::error_code ec;
    log = std::make_unique<llvm::raw_fd_ostream>(logFile, ec);
    if (ec)
      return fail("cannot write " + logFile + ": " + ec.message());
  }

  // --data: a text's bytes as tokens for a language model's two integer
  // data arguments (tokens, labels).
  ref::ByteCorpus corpus;
  std::vector<const TensorInfo *> corpusArgs;
  if (!dataFile.empty()) {
    ref::Status status = ref::ByteCorpus::load(dataFile, corpus);
    if (!status.ok())
      return fail(status.message());
    for (const TensorInfo &arg : plan.arguments)
      if (arg.kind == "data")
        corpusArgs.push_back(&arg);
    if (corpusArgs.size() != 2 ||
        llvm::any_of(corpusArgs,
                     [](const TensorInfo *a) {
                       return a->dtype != DType::I64 || a->shape.empty();
                     }) ||
        corpusArgs[0]->numel() != corpusArgs[1]->numel())
      return fail("--data needs a language model whose data are two integer "
                  "arguments of one size (token ids, then labels); the plan "
                  "has " +
                  std::to_string(corpusArgs.size()) +
                  " data arguments of other kinds or sizes");
  }
  bool showProgress = progress == cl::BOU_TRUE ||
                      (progress == cl::BOU_UNSET && isatty(STDERR_FILENO));
  double totalSeconds = 0;
  for (int64_t s = 1; s <= steps; ++s) {
    // This step's data.
    for (const TensorInfo &arg : plan.arguments) {
      if (arg.kind != "data")
        continue;
      Buffer &buffer = args[arg.index];
      // The global batch is R times the argument along dim 0; this replica
      // reads rows [q n, (q+1) n) of it.
      std::vector<int64_t> global = arg.shape;
      if (!global.empty())
        global[0] *= batchReplicas;
      size_t offset = static_cast<size_t>(batchReplica * arg.numel());
      size_t count = static_cast<size_t>(arg.numel());
      ref::Status status = ref::Status::success();
      if (corpusArgs.size() == 2) {
        // Tokens, then labels, as piper-interp --data reads them.
        const TensorInfo &tokens = *corpusArgs[0];
        ref::IndexTensor t;
        status = corpus.window(s, global, tokens.numel() / tokens.shape[0],
                               &arg == corpusArgs[0] ? 0 : 1, arg.bound, t);
        if (status.ok())
          std::memcpy(buffer.data(), t.data.data() + offset,
                      count * sizeof(int64_t));
      } else if (arg.dtype == DType::I64) {
        ref::IndexTensor t;
        status = ref::syntheticIndex(seed, arg.index, s, global, arg.bound, t);
        if (status.ok())
          std::memcpy(buffer.data(), t.data.data() + offset,
                      count * sizeof(int64_t));
      } else {
        ref::Tensor t;
        status = ref::syntheticFloat(seed, arg.index, s, global, t);
        if (status.ok())
          buffer.setFloats(std::vector<double>(
              t.data.begin() + offset, t.data.begin() + offset + count));
      }
      if (!status.ok())
        return fail(status.message());
    }

    std::vector<void *> pointers;
    for (int64_t i : role.inputs)
      pointers.push_back(args[i].descriptor.data());
    for (int64_t j : role.outputs)
      pointers.push_back(results[j].descriptor.data());
    if (rank == killRank && s == killAtStep) {
      llvm::errs() << "piper-run: rank " << rank << ": killed at step " << s
                   << " (--kill-rank)\n";
      llvm::outs().flush();
      llvm::errs().flush();
      std::raise(SIGKILL);
    }
    auto start = std::chrono::steady_clock::now();
    entry(pointers.data());
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (lastError && lastError()) {
      std::string message = lastError();
      if (clearError)
        clearError();
      // A multi-rank job's other ranks stop at the runtime's timeout.
      return fail("step " + std::to_string(s) + ": kernel error: " + message);
    }

    double loss = results[0].info ? results[0].firstFloat() : 0.0;
#ifdef PIPER_RUN_HAVE_MPI
    if (multiRank) {
      std::string error;
      if (!piper::run::commFinishStep(error))
        return fail("rank " + std::to_string(rank) + ": step " +
                    std::to_string(s) + ": " + error);
      // Summed in replica order, then divided: the mean of the means.
      double sum = 0.0;
      for (int from : lossRanks) {
        double value = loss;
        if (!piper::run::commMoveScalar(value, from, 0, rank, error))
          return fail("rank " + std::to_string(rank) + ": step " +
                      std::to_string(s) + ": " + error);
        sum += value;
      }
      loss = sum / static_cast<double>(lossRanks.size());
    }
#endif
    if (rank == 0)
      llvm::outs() << "step " << s << " loss " << llvm::format("%.17g", loss)
                   << "\n";
    totalSeconds += seconds;
    if (showProgress && rank == 0) {
      double perStep = totalSeconds / static_cast<double>(s);
      llvm::errs() << "piper-run: step " << s << "/" << steps << "  "
                   << llvm::format("%.4g", perStep) << " s/step  ETA "
                   << llvm::format("%.3g", perStep * (steps - s)) << " s\n";
    }
    if (log && rank == 0)
      *log << "{\"step\": " << s
           << ", \"loss\": " << llvm::format("%.17g", loss)
           << ", \"seconds\": " << llvm::format("%.6f", seconds) << "}\n";

    // Updated parameters and state become next step's arguments.
    for (int64_t j : role.outputs) {
      const TensorInfo &result = plan.results[j];
      if (result.updates < 0)
        continue;
      Buffer &target = args[result.updates];
      std::memcpy(target.data(), results[j].data(),
                  static_cast<size_t>(result.localNumel()) *
                      result.elementSize());
    }
  }
  if (bufferStatsFlag && rank == 0) {
    BufferStats stats = bufferStats();
    llvm::errs() << "piper-run: " << stats.requests << " allocations, "
                 << stats.reused << " served from the buffer cache, "
                 << stats.reservedBytes << " bytes reserved\n";
  }
  if (!paramsOut.empty()) {
    // Every parameter, from the lowest rank whose role reads it (and, for a
    // ZeRO-3 parameter, from each member of that rank's group, in member
    // order), assembled on rank 0.
    std::string text;
    llvm::raw_string_ostream os(text);
    for (const TensorInfo &arg : plan.arguments) {
      if (arg.kind != "param")
        continue;
      int holder = -1;
      for (size_t r = 0; r < roleOf.size() && holder < 0; ++r)
        if (llvm::is_contained(roleOf[r]->inputs, arg.index))
          holder = static_cast<int>(r);
      if (holder < 0)
        continue;
      std::vector<int> sources = {holder};
      if (!arg.split.empty()) {
        // One device per part: those differing from the holder only on the
        // split axes, in rank order.
        sources.clear();
        std::set<std::vector<int64_t>> seen;
        for (size_t r = 0; r < coordsOf.size(); ++r) {
          bool same = true;
          for (auto [a, axis] : llvm::enumerate(plan.meshAxes))
            if (llvm::none_of(arg.split, [&](const SplitInfo &s) {
                  return llvm::is_contained(s.axes, axis.first);
                }))
              same &= coordsOf[r][a] == coordsOf[holder][a];
          if (same && seen.insert(partsOf(plan, arg, coordsOf[r])).second)
            sources.push_back(static_cast<int>(r));
        }
      } else if (arg.shard) {
        sources.assign(arg.shard->members, -1);
        for (size_t r = 0; r < coordsOf.size(); ++r) {
          bool same = true;
          for (auto [a, axis] : llvm::enumerate(plan.meshAxes))
            if (!llvm::is_contained(arg.shard->axes, axis.first))
              same &= coordsOf[r][a] == coordsOf[holder][a];
          if (same)
            sources[indexAlong(plan, coordsOf[r], arg.shard->axes).first] =
                static_cast<int>(r);
        }
      }
      std::vector<double> whole;
      if (!arg.split.empty())
        whole.assign(arg.numel(), 0.0);
      for (int from : sources) {
        Buffer piece;
        piece.allocate(arg);
        if (rank == from)
          piece.storage = args[arg.index].storage;
#ifdef PIPER_RUN_HAVE_MPI
        std::string error;
        if (multiRank &&
            !piper::run::commSendRecv(
                piece.data(), static_cast<size_t>(arg.localNumel()),
                arg.dtype == DType::F32 ? PIPER_RT_F32 : PIPER_RT_F64, from, 0,
                error))
          return fail("--params-out: " + error);
#endif
        if (!arg.split.empty()) {
          std::vector<int64_t> parts = partsOf(plan, arg, coordsOf[from]);
          for (int64_t i = 0; i < arg.localNumel(); ++i)
            whole[globalIndex(arg, parts, i)] = piece.floatAt(i);
          continue;
        }
        for (int64_t i = 0; i < arg.localNumel(); ++i)
          whole.push_back(piece.floatAt(i));
      }
      whole.resize(arg.numel());
      os << arg.name;
      for (double v : whole)
        os << " " << llvm::format("%.17g", v);
      os << "\n";
    }
    if (rank == 0) {
      std::error_code ec;
      llvm::raw_fd_ostream file(paramsOut, ec);
      if (ec)
        return fail("cannot write " + paramsOut + ": " + ec.message());
      file << text;
    }
  }
  llvm::outs().flush();
#ifdef PIPER_RUN_HAVE_MPI
  if (multiRank) {
    piper::run::commStop();
    if (computeStream) {
      piper::run::traceStop();
      piper_rt_stream_destroy(computeStream);
    }
    // Writes the trace (merged on rank 0) when --trace is on.
    if (piper_rt_finalize(context) != PIPER_RT_OK)
      return fail(piper_rt_last_error());
  }
#endif
  return 0;
}
