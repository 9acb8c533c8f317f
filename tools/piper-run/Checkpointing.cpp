//===- Checkpointing.cpp - piper-run's checkpoint flags -------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Checkpointing.h"

#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdio>
#include <sys/stat.h>

using namespace piper;
using namespace piper::run;
namespace cl = llvm::cl;

cl::OptionCategory &piper::run::checkpointCategory() {
  static cl::OptionCategory category("piper-run checkpoint options");
  return category;
}

namespace {

cl::opt<std::string> saveDir(
    "save",
    cl::desc("Save parameters and optimizer state under DIR (every rank its "
             "own pieces; DIR/step-N/index.json) at the end, and every "
             "--save-every steps"),
    cl::value_desc("dir"), cl::cat(checkpointCategory()));
cl::opt<int64_t> saveEvery("save-every",
                           cl::desc("With --save: also save every K steps"),
                           cl::value_desc("K"), cl::init(0),
                           cl::cat(checkpointCategory()));
cl::opt<int64_t> keep("keep",
                      cl::desc("With --save: keep the newest N checkpoints "
                               "(default: all)"),
                      cl::value_desc("N"), cl::init(0),
                      cl::cat(checkpointCategory()));
cl::opt<bool> saveSync("save-sync",
                       cl::desc("With --save: write at the step boundary "
                                "instead of on a writer thread"),
                       cl::init(false), cl::cat(checkpointCategory()));
cl::opt<std::string> resumeFrom(
    "resume",
    cl::desc("Resume from the newest complete checkpoint under DIR (or from "
             "the checkpoint DIR itself), under this plan's strategy: "
             "parameters, optimizer state, step, seed and data order"),
    cl::value_desc("dir"), cl::cat(checkpointCategory()));
cl::opt<std::string> initFrom(
    "init-from",
    cl::desc("Start from the weights of a safetensors FILE of whole tensors "
             "named as the model's parameters (piper-ckpt consolidate); "
             "optimizer state starts at zero"),
    cl::value_desc("file"), cl::cat(checkpointCategory()));
cl::opt<bool> ckptStats(
    "ckpt-stats",
    cl::desc("At the end, print per rank the bytes saved and restored, the "
             "seconds the writer and the reads took, and the seconds the "
             "step loop spent on saves (stderr)"),
    cl::init(false), cl::cat(checkpointCategory()));
// Crash tests: a rank that dies part way through a save.
cl::opt<int> killSaveRank("kill-save-rank", cl::init(-1), cl::Hidden,
                          cl::desc("Testing: this rank dies during a save"),
                          cl::cat(checkpointCategory()));
cl::opt<int64_t> killSaveStep("kill-save-step", cl::init(0), cl::Hidden,
                              cl::desc("Testing: the save it dies in"),
                              cl::cat(checkpointCategory()));
cl::opt<std::string> killSavePoint(
    "kill-save-point", cl::Hidden,
    cl::desc("Testing: write (mid-file) or commit (before the index)"),
    cl::cat(checkpointCategory()));

std::string baseName(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int64_t fileBytes(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}

/// The run's data source must be the checkpoint's for the data order to
/// continue; a different global batch is allowed, with a warning.
bool checkData(const ckpt::Index &index, const plan::Manifest &manifest,
               const std::string &dataFile, int rank, std::string &error) {
  std::string source = dataFile.empty() ? "synthetic" : baseName(dataFile);
  if (source != index.data) {
    error =
        index.data == "synthetic"
            ? "--resume: the checkpoint was trained on synthetic data, "
              "not --data"
            : "--resume: the checkpoint was trained on --data=" + index.data +
                  "; pass it again";
    return false;
  }
  if (!dataFile.empty() && fileBytes(dataFile) != index.dataBytes) {
    error = "--resume: --data=" + dataFile + " has " +
            std::to_string(fileBytes(dataFile)) +
            " bytes, the checkpoint's had " + std::to_string(index.dataBytes);
    return false;
  }
  auto shapes = ckpt::globalDataShapes(manifest);
  if (!index.globalData.empty() && shapes != index.globalData && rank == 0) {
    std::string line = "piper-run: warning: the plan's global batch differs "
                       "from the checkpoint's; the data order does not "
                       "continue the saved run\n";
    llvm::errs() << line;
  }
  return true;
}

} // namespace

bool Checkpointing::begin(const plan::Manifest &manifest,
                          const std::string &planDir, Job &job,
                          std::vector<HostTensor> &args, uint64_t &seed,
                          bool seedGiven, const std::string &dataFile,
                          int64_t &firstStep, std::string &error) {
  role = &job.role();
  rank = job.rank;
  firstStep = 1;
  if (!resumeFrom.empty() && !initFrom.empty()) {
    error = "--resume and --init-from exclude each other";
    return false;
  }
  if (saveDir.empty() && (saveEvery != 0 || keep != 0)) {
    error = "--save-every and --keep need --save";
    return false;
  }
  if (saveEvery < 0 || keep < 0) {
    error = "--save-every and --keep must not be negative";
    return false;
  }
  // A chunk of a split part has no checkpoint region (ckpt::Region).
  if ((!saveDir.empty() || !resumeFrom.empty() || !initFrom.empty()) &&
      !ckpt::hasRegions(manifest, !initFrom.empty(), error))
    return false;
  std::vector<void *> held(args.size(), nullptr);
  for (int64_t i : role->inputs)
    held[i] = args[i].data();
  plan::Coords coords = manifest.mesh.coords(rank);
  auto start = std::chrono::steady_clock::now();
  // What this rank reads: its region of every saved tensor it holds.
  for (int64_t i : role->inputs)
    if (ckpt::isSaved(manifest.arguments[i]) &&
        (initFrom.empty() || manifest.arguments[i].kind == "param"))
      readBytes +=
          ckpt::regionOf(manifest.arguments[i], manifest.mesh, coords).numel() *
          int64_t(manifest.arguments[i].elementSize());
  if (resumeFrom.empty() && initFrom.empty())
    readBytes = 0;
  if (!resumeFrom.empty()) {
    std::string dir;
    std::vector<std::string> notes;
    ckpt::Index index;
    if (!ckpt::findCheckpoint(resumeFrom, dir, notes, error) ||
        !ckpt::loadIndex(dir, index, error) ||
        !ckpt::checkModel(index, manifest, false, "checkpoint " + dir, error) ||
        !checkData(index, manifest, dataFile, rank, error))
      return false;
    if (seedGiven && seed != index.seed) {
      error = "--resume: the checkpoint was saved with --seed=" +
              std::to_string(index.seed) + ", not " + std::to_string(seed);
      return false;
    }
    // Past here, errors concern the pieces this rank reads.
    commonError = false;
    if (!ckpt::restore(dir, index, manifest, coords, *role, held, false, error))
      return false;
    seed = index.seed;
    firstStep = index.step + 1;
    if (rank == 0) {
      std::string text;
      for (const std::string &note : notes)
        text += "piper-run: " + note + "\n";
      text += "piper-run: resuming from " + dir + " after step " +
              std::to_string(index.step) + "\n";
      llvm::errs() << text;
    }
  } else if (!initFrom.empty()) {
    ckpt::Index index;
    if (!ckpt::indexOfSafetensors(initFrom, index, error) ||
        !ckpt::checkModel(index, manifest, true, initFrom, error))
      return false;
    commonError = false;
    if (!ckpt::restore("", index, manifest, coords, *role, held, true, error))
      return false;
  }
  readSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  commonError = true;
  savedSeed = seed;
  savedData = dataFile;
  return startSaver(manifest, planDir, job);
}

bool Checkpointing::startSaver(const plan::Manifest &manifest,
                               const std::string &planDir, Job &job) {
  role = &job.role();
  if (saveDir.empty())
    return true;
  ckpt::Comm comm;
  comm.rank = rank;
  comm.size = static_cast<int>(job.roleOf.size());
  piper_plan_session session = job.session;
  comm.move = [session](int64_t *data, size_t count, int from, int to,
                        std::string &why) {
    if (piper_plan_session_move(session, data, count, PIPER_RT_I64, from, to,
                                PIPER_RT_MAX_TAG - 2) == PIPER_RT_OK)
      return true;
    why = std::string("--save: ") + piper_rt_last_error();
    return false;
  };
  ckpt::SaveOptions options;
  options.dir = saveDir;
  options.every = saveEvery;
  options.keep = keep;
  options.overlap = !saveSync;
  options.killRank = killSaveRank;
  options.killStep = killSaveStep;
  options.killPoint = killSavePoint;
  ckpt::Index metadata;
  metadata.seed = savedSeed;
  if (!savedData.empty()) {
    metadata.data = baseName(savedData);
    metadata.dataBytes = fileBytes(savedData);
  }
  metadata.globalData = ckpt::globalDataShapes(manifest);
  metadata.strategy = ckpt::describeStrategy(manifest, planDir);
  saver =
      std::make_unique<ckpt::Saver>(manifest, job.roleOf, std::move(comm),
                                    std::move(options), std::move(metadata));
  return true;
}

bool Checkpointing::beforeSwitch(std::string &error) {
  if (!saver)
    return true;
  // The save in flight commits over the old plan's session and layout.
  bool ok = saver->finish(error);
  finishedBytes += saver->bytesWritten;
  finishedWriteSeconds += saver->writeSeconds;
  finishedLoopSeconds += saver->loopSeconds;
  saver.reset();
  return ok;
}

bool Checkpointing::afterSwitch(const plan::Manifest &manifest,
                                const std::string &planDir, Job &job) {
  return startSaver(manifest, planDir, job);
}

bool Checkpointing::afterStep(int64_t step, int64_t lastStep,
                              std::vector<HostTensor> &args,
                              std::string &error) {
  if (!saver)
    return true;
  std::vector<const void *> held(args.size(), nullptr);
  for (int64_t i : role->inputs)
    held[i] = args[i].data();
  return saver->afterStep(step, step == lastStep, held, error);
}

bool Checkpointing::finish(std::string &error) {
  if (saver && !saver->finish(error))
    return false;
  if (!ckptStats)
    return true;
  char line[320];
  std::snprintf(
      line, sizeof(line),
      "piper-run: rank %d: restored %lld bytes in %.6f s; saved "
      "%lld bytes, writer %.6f s, step loop %.6f s\n",
      rank, static_cast<long long>(readBytes), readSeconds,
      static_cast<long long>(finishedBytes + (saver ? saver->bytesWritten : 0)),
      finishedWriteSeconds + (saver ? saver->writeSeconds : 0.0),
      finishedLoopSeconds + (saver ? saver->loopSeconds : 0.0));
  llvm::errs() << line;
  return true;
}

Checkpointing::~Checkpointing() = default;
