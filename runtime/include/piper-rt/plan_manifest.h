//===- plan_manifest.h - The plan manifest (plan.json) schema ----*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The single source of truth for plan.json, the manifest piper-compile writes
// beside one shared object per device role, and piper-run (through the
// runtime) reads. The compiler fills a Manifest and calls writeManifest; the
// runtime calls loadManifest. No LLVM or MLIR here: the header is plain
// C++17, usable from the compiler (which also includes LLVM) and from a
// training job (which carries no compiler).
//
// How a device holds a tensor (docs/Lowering.md, "Replicas"):
// - whole: every device of the role holds the entire tensor;
// - `shard` (ZeRO): member k of the group over `axes` holds chunk k of the
//   row-major flattening, zero-padded to `members` chunks of `chunk`
//   elements (k: the device's row-major index over the axes, mesh order);
// - `split` (expert parallelism): dimension `dim` is cut into `parts` over
//   `axes`; the device holds part p (its row-major index over the axes) of
//   size shape[dim] / parts.
// The layout arithmetic (which chunk or part a device holds, the global
// index of a local element) lives in the methods below, once.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_PLAN_MANIFEST_H
#define PIPER_RT_PLAN_MANIFEST_H

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace piper::plan {

/// The manifest's "format" and "version".
inline constexpr const char *kFormat = "piper-plan";
inline constexpr int64_t kVersion = 1;
/// The manifest's file name inside a plan directory.
inline constexpr const char *kManifestFile = "plan.json";

/// Element types. The compiler may describe bf16 and other tensors; the
/// runtime runs f32, f64 and i64 only (the reader rejects the rest).
enum class DType { F32, F64, I64, BF16, Other };
/// "f32", "f64", "i64", "bf16", "other".
const char *dtypeName(DType dtype);
/// Bytes of one element (2 for bf16, 0 for Other).
size_t dtypeSize(DType dtype);

struct MeshAxis {
  std::string name;
  int64_t size = 1;
  bool operator==(const MeshAxis &o) const {
    return name == o.name && size == o.size;
  }
};

/// A device's coordinates on the mesh, one per axis in mesh order.
using Coords = std::vector<int64_t>;

struct Mesh {
  std::string name;
  /// In declared order: world rank r is the row-major index of its coords.
  std::vector<MeshAxis> axes;

  int64_t numDevices() const;
  /// The coordinates of world rank `rank`.
  Coords coords(int64_t rank) const;
  /// The row-major index of `coords` over the axes named in `over` (taken in
  /// mesh order) and the product of their sizes: a device's index in its
  /// group over those axes, and the group's size.
  std::pair<int64_t, int64_t>
  indexAlong(const Coords &coords, const std::vector<std::string> &over) const;
  /// Whether `a` and `b` agree on every axis not named in `except`.
  bool sameOutside(const Coords &a, const Coords &b,
                   const std::vector<std::string> &except) const;
  bool operator==(const Mesh &o) const {
    return name == o.name && axes == o.axes;
  }
};

/// Held as flat chunks of the row-major flattening (ZeRO).
struct Shard {
  std::vector<std::string> axes;
  int64_t members = 1, chunk = 0;
  bool operator==(const Shard &o) const {
    return axes == o.axes && members == o.members && chunk == o.chunk;
  }
};

/// One dimension held in parts (expert parallelism).
struct Split {
  int64_t dim = 0;
  std::vector<std::string> axes;
  int64_t parts = 1;
  bool operator==(const Split &o) const {
    return dim == o.dim && axes == o.axes && parts == o.parts;
  }
};

/// One argument or result of the step function. Optional fields are written
/// only when set.
struct Tensor {
  int64_t index = 0;
  /// "param", "state", "data" (arguments); "loss", "param", "state",
  /// "other" (results).
  std::string kind;
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  /// Parameters: name, init ("normal", "zeros", "ones") and std (normal).
  std::optional<std::string> name, init;
  std::optional<double> std;
  /// Optimizer state: the parameter and slot it belongs to.
  std::optional<std::string> param, slot;
  /// Integer data: the exclusive upper bound of its values.
  std::optional<int64_t> bound;
  /// Results: the argument it replaces at the next step.
  std::optional<int64_t> updates;
  std::optional<Shard> shard;
  std::vector<Split> split;

  bool operator==(const Tensor &o) const;

  int64_t numel() const;
  size_t elementSize() const { return dtypeSize(dtype); }
  /// The shape of one device's part (split dimensions divided).
  std::vector<int64_t> localShape() const;
  /// The shape of what one device holds: {chunk} when sharded, else the
  /// local shape (the memref the compiled entry point takes).
  std::vector<int64_t> heldShape() const;
  /// Elements one device holds.
  int64_t localNumel() const;
  /// The device at `coords`: its part along each split, in `split` order.
  std::vector<int64_t> parts(const Mesh &mesh, const Coords &coords) const;
  /// The flat index in the whole tensor of element `i` of what the device at
  /// `coords` holds, or -1 for the zero padding of a shard's last chunk.
  int64_t globalIndex(const Mesh &mesh, const Coords &coords, int64_t i) const;
  /// The same for a device holding part `parts` of the split dimensions.
  int64_t globalIndexOfPart(const std::vector<int64_t> &parts, int64_t i) const;
};

/// A role's forward-only evaluation entry (EvalPrograms.h in the
/// compiler): the training program's forward, its transfers and the loss,
/// without backward, gradient communication or update. Its inputs and
/// outputs are subsets of the role's; it writes only the loss. The sampling
/// entry is the same program; in the role that computes the loss it also
/// writes `logits` (after its outputs): the first microbatch's logits that
/// the loss reads, [rows, vocabulary], row r the next-token scores after
/// position r % S of sequence r / S.
struct EvalEntry {
  std::string entry;
  std::vector<int64_t> inputs, outputs;
  /// Sampling only: the logits' shape (empty: none) and element type.
  std::vector<int64_t> logitsShape;
  DType logitsDtype = DType::F64;
  bool operator==(const EvalEntry &o) const {
    return entry == o.entry && inputs == o.inputs && outputs == o.outputs &&
           logitsShape == o.logitsShape && logitsDtype == o.logitsDtype;
  }
};

/// One device role's program.
struct Role {
  std::string program, object, entry;
  /// The role's coordinates (axis -> coordinate); absent axes: any.
  std::map<std::string, int64_t> role;
  std::vector<int64_t> inputs, outputs;
  /// The program's launches in order (the trace hooks' indices).
  std::vector<std::string> launches;
  /// The program's streams in order (piper_comm_record/wait's indices).
  std::vector<std::string> streams;
  /// The object's size and checksum, recorded by piper-compile and verified
  /// before it is loaded (plan_validate.h).
  std::optional<int64_t> objectBytes;
  std::optional<std::string> objectChecksum;
  /// The evaluation entry in the same object ("eval"; absent in plans
  /// compiled before it existed: piper-run then evaluates with the step).
  std::optional<EvalEntry> eval;
  /// The sampling entry ("sample"; absent when the plan cannot sample: see
  /// docs/TrainAnLM.md).
  std::optional<EvalEntry> sample;
  /// The fraction of the device's SMs each overlapped compute stream gets
  /// (`transform.piper.overlap ... sm_shares [a, b]`): the first task of a
  /// pair runs on "compute", the second on "compute_overlap". Each share is
  /// in (0, 1], their sum at most 1; empty ("sm_shares" absent) when the
  /// role overlaps nothing with shares. The CUDA backend partitions the SMs
  /// by them (docs/GPU-runtime.md); the CPU ignores them.
  std::map<std::string, double> smShares;

  /// Whether the device at `coords` runs this role.
  bool matches(const Mesh &mesh, const Coords &coords) const;
  bool operator==(const Role &o) const;
};

/// A communicator the compiled programs index: the group over `axes`, its
/// operations ordered on stream `stream`.
struct Communicator {
  std::vector<std::string> axes;
  std::string stream;
  bool operator==(const Communicator &o) const {
    return axes == o.axes && stream == o.stream;
  }
};

/// Informational: the update is compiled into the programs.
struct Optimizer {
  std::string kind;
  /// The compile-time default learning rate (piper-run --lr overrides it).
  double lr = 0;
  /// The default gradient-norm bound of a plan compiled with clipping
  /// (--clip-grad-norm); 0: the plan does not clip ("clip_grad_norm" absent).
  double clipGradNorm = 0;
  bool operator==(const Optimizer &o) const {
    return kind == o.kind && lr == o.lr && clipGradNorm == o.clipGradNorm;
  }
};

struct Manifest {
  /// The step function and the model file it came from.
  std::string function, source;
  Mesh mesh;
  std::optional<Optimizer> optimizer;
  std::vector<Tensor> arguments, results;
  std::vector<Role> roles;
  /// The axes replicas split the batch over (dim 0 of every data argument).
  std::vector<std::string> batchAxes;
  /// What the role objects run on: "cpu" (the default; "target" absent from
  /// plan.json) or "cuda", whose kernels are cubins for `gpuArch` (sm_90, ...;
  /// docs/GPU.md).
  std::string target = "cpu", gpuArch;
  std::vector<Communicator> communicators;
  /// The kernel kinds piper_trace_kernel_begin/end index (piper-compile
  /// --trace-kernels); empty, and absent from plan.json, otherwise.
  std::vector<std::string> kernelKinds;

  bool operator==(const Manifest &o) const;

  /// The role of every world rank of the mesh, in rank order. Fails, naming
  /// the rank, when a rank matches no role or several.
  bool rolesOfRanks(std::vector<const Role *> &out, std::string &error) const;
  /// The ranks whose loss output counts: one per batch replica of the role
  /// that computes result 0 (the others are its copies), in rank order.
  std::vector<int> lossRanks(const std::vector<const Role *> &roleOf) const;
};

/// plan.json's text for `manifest`: keys sorted, indented by 2, with a final
/// newline; byte for byte what piper-compile wrote with llvm::json.
std::string writeManifest(const Manifest &manifest);

/// Parses plan.json's `text`. On failure returns false with one line that
/// starts with `file` and names the field's JSON path, e.g.
///   P/plan.json: bad manifest: chunks do not cover the tensor at
///   plan.arguments[3].shard
bool readManifest(const std::string &text, const std::string &file,
                  Manifest &manifest, std::string &error);

/// Whether a runtime built for `runtimeTarget` ("cpu", "cuda") can run
/// `manifest`'s objects; otherwise false with one line in `error` naming
/// both.
bool checkRunTarget(const Manifest &manifest, const std::string &runtimeTarget,
                    std::string &error);

/// Reads `<directory>/plan.json` (readManifest, plus "cannot read plan ...").
bool loadManifest(const std::string &directory, Manifest &manifest,
                  std::string &error);

} // namespace piper::plan

#endif // PIPER_RT_PLAN_MANIFEST_H
