//===- checkpoint.h - Sharded checkpoints of a running plan ------*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A checkpoint is a directory (docs/Checkpoints.md):
//
//   DIR/step-00000006/rank-00000.safetensors   what rank 0 holds
//   DIR/step-00000006/rank-00002.safetensors   ... (ranks holding nothing
//                                              new write no file)
//   DIR/step-00000006/index.json               written last
//
// Every rank writes only the pieces it holds of the logical tensors (the
// parameters and the optimizer state: whole tensors, ZeRO chunks, TP/EP
// parts), in safetensors files; among copies of one piece (data-parallel
// replicas), the lowest rank writes it. index.json names each logical tensor
// (name, shape, dtype) and how its pieces tile it (a flat range of the
// row-major order, or a box), with each piece's file, byte offset, size and
// CRC-32 (zlib's), plus the step, the data cursor and the strategy.
//
// Reading asks the index which pieces overlap the region a device needs and
// reads those byte ranges only, so a checkpoint resumes under any strategy.
// The layout of a device's region comes from plan.json (plan_manifest.h);
// nothing here recomputes it.
//
// Plain C++17 with no LLVM or MLIR, like the rest of the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_CHECKPOINT_H
#define PIPER_RT_CHECKPOINT_H

#include "piper-rt/plan_json.h"
#include "piper-rt/plan_manifest.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace piper::ckpt {

/// index.json's "format" and "version", and its file name.
inline constexpr const char *kFormat = "piper-checkpoint";
inline constexpr int64_t kVersion = 1;
inline constexpr const char *kIndexFile = "index.json";

/// CRC-32 (the polynomial of zlib, PNG and Python's zlib.crc32) of `bytes`
/// bytes, continuing from `crc` (0 to start).
uint32_t crc32(const void *data, size_t bytes, uint32_t crc = 0);

//===----------------------------------------------------------------------===//
// Regions: which elements of a tensor a piece or a device holds
//===----------------------------------------------------------------------===//

/// A set of a tensor's elements, in the order a device stores them: a flat
/// range [begin, end) of the row-major order (a ZeRO chunk without its zero
/// padding), or a box (a TP/EP part, or the whole tensor).
struct Region {
  bool flat = false;
  int64_t begin = 0, end = 0;
  std::vector<int64_t> offset, shape;

  int64_t numel() const;
  /// The region's elements as runs {global flat start, length}, in stored
  /// order (which is also increasing global order), for a tensor of shape
  /// `global`. Runs are as long as the layout allows.
  std::vector<std::pair<int64_t, int64_t>>
  runs(const std::vector<int64_t> &global) const;
  /// "flat [0, 128)" or "box [0, 8] + [16, 8]".
  std::string str() const;
  bool operator==(const Region &o) const;
};

/// The region of `t` that the device at `coords` holds (plan_manifest.h's
/// layout); an empty flat range for a chunk that is all padding.
Region regionOf(const plan::Tensor &t, const plan::Mesh &mesh,
                const plan::Coords &coords);

/// Whether every saved tensor of `m` (only parameters if `paramsOnly`) has
/// a region: a ZeRO chunk of a split part (TP/EP x ZeRO) is neither a box
/// nor a flat range of the whole tensor. If not, `error` says which tensor
/// ("checkpoints of 'NAME' are not supported: ...").
bool hasRegions(const plan::Manifest &m, bool paramsOnly, std::string &error);

/// Whether a checkpoint saves `t`: parameters and optimizer state.
bool isSaved(const plan::Tensor &t);
/// The logical name of a saved argument: a parameter's name, or
/// "optimizer.<param>.<slot>" for its optimizer state.
std::string logicalName(const plan::Tensor &t);

//===----------------------------------------------------------------------===//
// The index
//===----------------------------------------------------------------------===//

/// One saved piece of a logical tensor.
struct Piece {
  std::string file;
  /// Absolute byte offset of the piece's data in `file`, and its size.
  int64_t offset = 0, bytes = 0;
  Region region;
  /// CRC-32 of the piece's bytes; absent (-1) for a file not written by
  /// Piper (piper-run --init-from).
  int64_t crc = -1;
};

struct TensorEntry {
  std::string name;
  /// "param" or "state" (with `param` and `slot`).
  std::string kind, param, slot;
  plan::DType dtype = plan::DType::F64;
  std::vector<int64_t> shape;
  std::vector<Piece> pieces;

  int64_t numel() const;
};

struct Index {
  /// The last completed training step: a run resumed from here starts at
  /// step + 1, with the data of that step (the data cursor).
  int64_t step = 0;
  uint64_t seed = 0;
  /// "synthetic", or the --data file's name; its size in bytes.
  std::string data = "synthetic";
  int64_t dataBytes = 0;
  /// Each data argument's global shape (batch replicas folded in): the
  /// data order continues exactly only under the same global batch.
  std::vector<std::pair<int64_t, std::vector<int64_t>>> globalData;
  /// The strategy it was saved under: plan.json's mesh, batch axes, roles
  /// and the plan directory (informational).
  plan::json::Value strategy;
  std::vector<TensorEntry> tensors;

  const TensorEntry *find(const std::string &name) const;
};

std::string writeIndex(const Index &index);
/// Parses index.json's `text`; errors start with `file`.
bool readIndex(const std::string &text, const std::string &file, Index &index,
               std::string &error);

/// The global shape of every data argument of `manifest` (dim 0 times the
/// batch replicas).
std::vector<std::pair<int64_t, std::vector<int64_t>>>
globalDataShapes(const plan::Manifest &manifest);
/// The strategy description saved in an index.
plan::json::Value describeStrategy(const plan::Manifest &manifest,
                                   const std::string &planDir);

//===----------------------------------------------------------------------===//
// safetensors
//===----------------------------------------------------------------------===//

/// One tensor of a safetensors file; `begin`/`end` are absolute offsets.
struct StEntry {
  std::string name;
  plan::DType dtype = plan::DType::F64;
  std::vector<int64_t> shape;
  int64_t begin = 0, end = 0;
};

/// "F64", "F32", "I64", "BF16"; false for others.
const char *stDTypeName(plan::DType dtype);
/// The 8-byte length and JSON header of a file holding `entries` (their
/// begin/end relative to the data), padded so the data starts 8-aligned.
std::string
stHeader(const std::vector<StEntry> &entries,
         const std::vector<std::pair<std::string, std::string>> &metadata);
/// Reads a safetensors file's header: entries with absolute offsets.
bool stReadHeader(const std::string &path, std::vector<StEntry> &entries,
                  std::string &error);

//===----------------------------------------------------------------------===//
// Which rank writes which piece
//===----------------------------------------------------------------------===//

struct PlannedPiece {
  int64_t arg = 0;
  int rank = 0;
  Region region;
};

/// Every piece a checkpoint of `manifest` holds, in argument order, then
/// rank order: for each saved argument, the lowest rank holding each
/// distinct region (ranks whose role reads the argument). Every rank
/// computes the same list.
std::vector<PlannedPiece>
planPieces(const plan::Manifest &manifest,
           const std::vector<const plan::Role *> &roleOf);

/// "rank-00003.safetensors"; "step-00000006".
std::string rankFileName(int rank);
std::string stepDirName(int64_t step);

//===----------------------------------------------------------------------===//
// Saving
//===----------------------------------------------------------------------===//

/// What the saver needs of the job's communication: moving int64 values
/// between two ranks (a no-op on the others), as piper_plan_session_move.
struct Comm {
  int rank = 0, size = 1;
  std::function<bool(int64_t *data, size_t count, int from, int to,
                     std::string &error)>
      move;
};

struct SaveOptions {
  std::string dir;
  /// Save after every `every` steps (0: only at the end) and keep the
  /// newest `keep` checkpoints (0: all).
  int64_t every = 0, keep = 0;
  /// Write on a background thread: the next step starts while the disk
  /// works, and the save commits at the end of that step (waiting there for
  /// the disk if the write takes longer than the step).
  bool overlap = true;
  /// Testing: this rank dies (SIGKILL) at `killPoint` of the save of step
  /// `killStep`: "write" (mid-file), "commit" (files on disk, no index).
  int killRank = -1;
  int64_t killStep = 0;
  std::string killPoint;
};

/// Saves a running plan's parameters and optimizer state.
class Saver {
public:
  Saver(const plan::Manifest &manifest,
        const std::vector<const plan::Role *> &roleOf, Comm comm,
        SaveOptions options, Index metadata);
  ~Saver();

  /// At the end of step `step` (`held[i]`: this rank's storage of argument
  /// i, current): commits the save of the step before, and starts one when
  /// due (every `every` steps, and at `last`, which commits at once).
  bool afterStep(int64_t step, bool last, const std::vector<const void *> &held,
                 std::string &error);
  /// Waits for and commits the save in flight.
  bool finish(std::string &error);

  /// Seconds the step loop spent in afterStep (snapshot, commit), and the
  /// writer's seconds and bytes (this rank).
  double loopSeconds = 0, writeSeconds = 0;
  int64_t bytesWritten = 0;

private:
  struct Pending;
  bool start(int64_t step, const std::vector<const void *> &held,
             std::string &error);
  bool commit(std::string &error);
  bool allWritten(std::string &error);
  void prune();

  const plan::Manifest &manifest;
  std::vector<PlannedPiece> pieces;
  Comm comm;
  SaveOptions options;
  Index metadata;
  std::unique_ptr<Pending> pending;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// The checkpoint to resume from: `path` itself if it holds index.json,
/// else its newest complete step-N. Half-written ones newer than it
/// (step-N.tmp, or without an index) are reported in `notes`.
bool findCheckpoint(const std::string &path, std::string &dir,
                    std::vector<std::string> &notes, std::string &error);
/// Reads `dir`/index.json.
bool loadIndex(const std::string &dir, Index &index, std::string &error);
/// An index for a safetensors file of whole tensors (piper-ckpt
/// consolidate's output, or weights from elsewhere): one piece each, no CRC.
bool indexOfSafetensors(const std::string &path, Index &index,
                        std::string &error);

/// Checks that `index` is a checkpoint of `manifest`'s model: the same
/// logical tensors (names, shapes, dtypes). With `weightsOnly`, only the
/// parameters must be present, and float dtypes may differ.
bool checkModel(const Index &index, const plan::Manifest &manifest,
                bool weightsOnly, const std::string &what, std::string &error);

/// Reads into `out` (`region.numel()` elements of `entry.dtype`) the
/// elements of `region` of `entry`, from the pieces in `dir` that overlap
/// it, reading only those byte ranges. Checks each file's size, and the CRC
/// of every piece read in full.
bool readRegion(const std::string &dir, const TensorEntry &entry,
                const Region &region, void *out, std::string &error);

/// Fills this device's storage of every saved argument it reads (`held[i]`,
/// null for arguments it does not hold) from the checkpoint. With
/// `weightsOnly`, parameters only, converted to the plan's float type.
bool restore(const std::string &dir, const Index &index,
             const plan::Manifest &manifest, const plan::Coords &coords,
             const plan::Role &role, const std::vector<void *> &held,
             bool weightsOnly, std::string &error);

/// Reads every piece of every tensor in full and checks its size and CRC;
/// each problem is one line in `problems`.
void verify(const std::string &dir, const Index &index,
            std::vector<std::string> &problems);

/// Writes every tensor of the checkpoint whole into one safetensors file
/// (parameters only with `paramsOnly`).
bool consolidate(const std::string &dir, const Index &index,
                 const std::string &out, bool paramsOnly, std::string &error);

//===----------------------------------------------------------------------===//
// Changing the layout in memory
//===----------------------------------------------------------------------===//

/// Moves the live parameters and optimizer state from plan `from`'s layout
/// (`fromHeld[i]`: this rank's storage of `from`'s argument i) to plan `to`'s
/// (`toHeld`, zeroed, for the arguments this rank's new role reads), over
/// `comm`, without the disk: what a save under `from` and a resume under
/// `to` would do. Both plans run on the same ranks. Collective: every rank
/// calls it.
bool redistribute(const plan::Manifest &from,
                  const std::vector<const plan::Role *> &fromRoles,
                  const std::vector<const void *> &fromHeld,
                  const plan::Manifest &to,
                  const std::vector<const plan::Role *> &toRoles,
                  const std::vector<void *> &toHeld, const Comm &comm,
                  std::string &error);

} // namespace piper::ckpt

#endif // PIPER_RT_CHECKPOINT_H
