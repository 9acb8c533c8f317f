//===- Job.cpp - This rank's place in a run -------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "Job.h"

#ifdef PIPER_PLAN_HAVE_CUDA
#include "piper-rt/plan_abi_gpu.h"
#endif

using namespace piper;
using namespace piper::run;

namespace {

#ifdef PIPER_PLAN_HAVE_MPI
/// Starts the runtime on the plan's mesh.
bool startRuntime(int &argc, char **&argv, const plan::Manifest &manifest,
                  Job &job, std::string &error) {
  if (piper_rt_init(&argc, &argv, &job.context) != PIPER_RT_OK) {
    error = std::string("cannot start the runtime: ") + piper_rt_last_error();
    return false;
  }
  piper_rt_rank(job.context, &job.rank);
  std::vector<const char *> names;
  std::vector<int64_t> sizes;
  for (const plan::MeshAxis &axis : manifest.mesh.axes) {
    names.push_back(axis.name.c_str());
    sizes.push_back(axis.size);
  }
  piper_rt_mesh mesh = nullptr;
  bool ok = piper_rt_mesh_create(names.size(), names.data(), sizes.data(),
                                 &mesh) == PIPER_RT_OK &&
            piper_rt_set_mesh(job.context, mesh) == PIPER_RT_OK;
  if (!ok)
    error = piper_rt_last_error();
  piper_rt_mesh_destroy(mesh);
  return ok;
}

/// The plan's communicators, in manifest order, on every rank.
bool addCommunicators(const plan::Manifest &manifest, Job &job,
                      std::string &error) {
  for (const plan::Communicator &c : manifest.communicators) {
    std::vector<const char *> axes;
    for (const std::string &axis : c.axes)
      axes.push_back(axis.c_str());
    if (piper_plan_session_add_communicator(job.session, axes.size(),
                                            axes.data(),
                                            c.stream.c_str()) != PIPER_RT_OK) {
      error = "communicator over " +
              (c.axes.empty() ? std::string() : c.axes.front()) +
              "...: " + piper_rt_last_error();
      return false;
    }
  }
  return true;
}

#ifdef PIPER_PLAN_HAVE_CUDA
/// Partitions the SMs for the role's overlapped compute streams
/// ("compute", "compute_overlap") when plan.json gives them shares.
bool applySmShares(const plan::Role &role, Job &job, std::string &error) {
  if (role.smShares.empty())
    return true;
  auto share = [&](const char *stream) {
    auto it = role.smShares.find(stream);
    return it == role.smShares.end() ? 0.0 : it->second;
  };
  double first = share("compute"), second = share("compute_overlap");
  if (first > 0 && second > 0 &&
      piper_plan_session_set_sm_shares(job.session, first, second) !=
          PIPER_RT_OK) {
    error = std::string("sm_shares: ") + piper_rt_last_error();
    return false;
  }
  return true;
}
#endif

std::vector<const char *> cStrings(const std::vector<std::string> &list) {
  std::vector<const char *> out;
  for (const std::string &s : list)
    out.push_back(s.c_str());
  return out;
}
#endif

} // namespace

bool Job::start(int &argc, char **&argv, const plan::Manifest &manifest,
                const std::string &traceFile, std::string &error) {
#ifdef PIPER_PLAN_HAVE_CUDA
  // Before MPI: where there is no GPU, one line says so (plan_abi_gpu.h).
  if (piper_gpu_probe() != PIPER_RT_OK) {
    error = piper_rt_last_error();
    return false;
  }
  [[maybe_unused]] constexpr bool needsContext = true; // the backend needs one
#else
  [[maybe_unused]] constexpr bool needsContext = false;
#endif
#ifdef PIPER_PLAN_HAVE_MPI
  // The runtime also runs a one-device plan that is traced.
  if ((needsContext || manifest.mesh.numDevices() > 1 || !traceFile.empty()) &&
      !startRuntime(argc, argv, manifest, *this, error))
    return false;
  if (context && !traceFile.empty() &&
      piper_rt_trace_enable(context, traceFile.c_str()) != PIPER_RT_OK) {
    // Every rank enables it (a merged trace is gathered at finalize).
    error = std::string("--trace: ") + piper_rt_last_error();
    return false;
  }
#else
  (void)argc;
  (void)argv;
  if (!traceFile.empty()) {
    error = "--trace needs piper-run built with MPI (the runtime writes the "
            "trace)";
    return false;
  }
  if (manifest.roles.size() != 1 || manifest.mesh.axes.size() > 1) {
    error = "the plan runs on several devices; multi-rank plans need "
            "piper-run built with MPI";
    return false;
  }
#endif
  return openSession(manifest, !traceFile.empty(), error);
}

bool Job::openSession(const plan::Manifest &manifest, bool traced,
                      std::string &error) {
  if (!manifest.rolesOfRanks(roleOf, error))
    return false;
  if (piper_plan_session_create(context, &session) != PIPER_RT_OK) {
    error = piper_rt_last_error();
    return false;
  }
  piper_plan_session_activate(session);
#ifdef PIPER_PLAN_HAVE_MPI
  if (!context)
    return true;
#ifdef PIPER_PLAN_HAVE_CUDA
  // The role's SM partition (plan.json's sm_shares), before the
  // communicators, which get NCCL CTA limits from it (plan_abi_gpu.h).
  if (!applySmShares(role(), *this, error))
    return false;
#endif
  if (!addCommunicators(manifest, *this, error))
    return false;
  std::vector<const char *> streams = cStrings(role().streams);
  piper_plan_session_set_streams(session, streams.size(), streams.data());
  if (!traced)
    return true;
  std::vector<const char *> launches = cStrings(role().launches);
  if (piper_plan_session_trace_launches(session, launches.size(),
                                        launches.data()) != PIPER_RT_OK) {
    error = std::string("--trace: ") + piper_rt_last_error();
    return false;
  }
  // A plan compiled with --trace-kernels: spans per op inside the launches.
  std::vector<const char *> kinds = cStrings(manifest.kernelKinds);
  if (!kinds.empty())
    piper_plan_session_trace_kernels(session, kinds.size(), kinds.data());
#else
  (void)traced;
#endif
  return true;
}

bool Job::switchTo(const plan::Manifest &manifest, bool traced,
                   std::string &error) {
  int64_t devices = static_cast<int64_t>(roleOf.size());
  if (manifest.mesh.numDevices() != devices) {
    error = "--switch-to: the new plan runs on " +
            std::to_string(manifest.mesh.numDevices()) +
            " devices and this job has " + std::to_string(devices) +
            "; a switch in memory keeps the ranks";
    return false;
  }
  if (session) {
    piper_plan_session_destroy(session);
    session = nullptr;
  }
#ifdef PIPER_PLAN_HAVE_MPI
  if (context) {
    std::vector<const char *> names;
    std::vector<int64_t> sizes;
    for (const plan::MeshAxis &axis : manifest.mesh.axes) {
      names.push_back(axis.name.c_str());
      sizes.push_back(axis.size);
    }
    piper_rt_mesh mesh = nullptr;
    bool ok = piper_rt_mesh_create(names.size(), names.data(), sizes.data(),
                                   &mesh) == PIPER_RT_OK &&
              piper_rt_replace_mesh(context, mesh) == PIPER_RT_OK;
    piper_rt_mesh_destroy(mesh);
    if (!ok) {
      error = std::string("--switch-to: ") + piper_rt_last_error();
      return false;
    }
  }
#endif
  return openSession(manifest, traced, error);
}

// Summed in replica order, then divided: the mean of the means.
bool Job::meanLoss(const std::vector<int> &lossRanks, double &loss,
                   std::string &error) {
  if (!context)
    return true;
  double sum = 0.0;
  for (int from : lossRanks) {
    double value = loss;
    if (piper_plan_session_move(session, &value, 1, PIPER_RT_F64, from, 0,
                                PIPER_RT_MAX_TAG) != PIPER_RT_OK) {
      error = "loss from rank " + std::to_string(from) + ": " +
              piper_rt_last_error();
      return false;
    }
    sum += value;
  }
  loss = sum / static_cast<double>(lossRanks.size());
  return true;
}

bool Job::stop(std::string &error) {
  if (session) {
    piper_plan_session_destroy(session);
    session = nullptr;
  }
#ifdef PIPER_PLAN_HAVE_MPI
  // Writes the trace (merged on rank 0) when --trace is on.
  if (context && piper_rt_finalize(context) != PIPER_RT_OK) {
    error = piper_rt_last_error();
    return false;
  }
  context = nullptr;
#else
  (void)error;
#endif
  return true;
}
