//===- Save.cpp - Saving a running plan -----------------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A save is two phases. At the step boundary, every rank copies the pieces
// it writes (planPieces) into one buffer, a memcpy of what it holds, and a
// writer thread writes them to DIR/step-N.tmp/rank-R.safetensors, computes
// their CRCs and fsyncs, while the next step runs. At the end of that step
// every rank waits for its writer (usually done by then), the ranks agree
// through rank 0 that every file is on disk, and rank 0 gathers the CRCs,
// writes index.json (write, fsync, rename), renames the directory to step-N and
// fsyncs DIR: the commit. A crash before the rename leaves step-N.tmp, which a
// resume ignores. Rank 0 then deletes all but the newest `keep` checkpoints.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"
#include "piper-rt/checkpoint.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

using namespace piper;
using namespace piper::ckpt;
namespace fs = std::filesystem;

bool io::writeFileAtomic(const std::string &dir, const std::string &name,
                         const std::string &text, std::string &error) {
  std::string path = join(dir, name), tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  bool ok =
      fd >= 0 && writeAll(fd, text.data(), text.size()) && ::fsync(fd) == 0;
  if (fd >= 0)
    ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), path.c_str()) == 0 && syncDir(dir);
  if (!ok)
    error = "cannot write " + path + ": " + lastError();
  return ok;
}

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// What rank `rank` writes: its entries (offsets relative to the data) and
/// its file's header. Rank 0 computes every rank's to know their offsets.
struct RankFile {
  std::vector<size_t> pieces; // into the planned pieces
  std::vector<StEntry> entries;
  std::string header;
};

RankFile rankFile(const plan::Manifest &manifest,
                  const std::vector<PlannedPiece> &pieces, int rank,
                  int64_t step) {
  RankFile f;
  int64_t at = 0;
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (pieces[i].rank != rank)
      continue;
    const plan::Tensor &arg = manifest.arguments[pieces[i].arg];
    const Region &r = pieces[i].region;
    StEntry e;
    e.name = logicalName(arg);
    e.dtype = arg.dtype;
    e.shape = r.flat ? std::vector<int64_t>{r.numel()} : r.shape;
    e.begin = at;
    at += r.numel() * static_cast<int64_t>(arg.elementSize());
    e.end = at;
    f.pieces.push_back(i);
    f.entries.push_back(std::move(e));
  }
  f.header = stHeader(f.entries, {{"format", "pt"},
                                  {"piper.rank", std::to_string(rank)},
                                  {"piper.step", std::to_string(step)}});
  return f;
}

} // namespace

struct Saver::Pending {
  int64_t step = 0;
  std::string tmpDir, finalDir;
  RankFile file;
  std::vector<char> snapshot;
  std::vector<int64_t> crcs;
  std::thread writer;
  std::string error;
  double seconds = 0;
};

Saver::Saver(const plan::Manifest &manifest,
             const std::vector<const plan::Role *> &roleOf, Comm comm,
             SaveOptions options, Index metadata)
    : manifest(manifest), pieces(planPieces(manifest, roleOf)),
      comm(std::move(comm)), options(std::move(options)),
      metadata(std::move(metadata)) {}

Saver::~Saver() {
  if (pending && pending->writer.joinable())
    pending->writer.join();
}

namespace {

/// Testing (--kill-save-*): this rank dies here, as a crash would.
void maybeDie(const SaveOptions &o, int rank, int64_t step, const char *point) {
  if (o.killRank != rank || o.killStep != step || o.killPoint != point)
    return;
  std::string line = "piper-run: rank " + std::to_string(rank) +
                     ": killed during the save of step " +
                     std::to_string(step) + " (" + point + ")\n";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  std::raise(SIGKILL);
}

} // namespace

bool Saver::start(int64_t step, const std::vector<const void *> &held,
                  std::string &error) {
  auto p = std::make_unique<Pending>();
  p->step = step;
  p->finalDir = io::join(options.dir, stepDirName(step));
  p->tmpDir = p->finalDir + ".tmp";
  // Every rank creates the directories (whoever is first); no rank waits.
  if (!io::makeDir(options.dir) || !io::makeDir(p->tmpDir)) {
    error = "--save: cannot create " + p->tmpDir + ": " + io::lastError();
    return false;
  }
  p->file = rankFile(manifest, pieces, comm.rank, step);
  // The snapshot: what this rank holds of each piece is a prefix of its
  // storage (a chunk's padding and nothing else follows the piece).
  size_t total = 0;
  for (const StEntry &e : p->file.entries)
    total = static_cast<size_t>(e.end);
  p->snapshot.resize(total);
  for (size_t k = 0; k < p->file.pieces.size(); ++k) {
    const StEntry &e = p->file.entries[k];
    std::memcpy(p->snapshot.data() + e.begin,
                held[pieces[p->file.pieces[k]].arg],
                static_cast<size_t>(e.end - e.begin));
  }
  Pending *raw = p.get();
  int rank = comm.rank;
  SaveOptions o = options;
  auto write = [raw, rank, o]() {
    double t0 = now();
    Pending &q = *raw;
    q.crcs.clear();
    for (const StEntry &e : q.file.entries)
      q.crcs.push_back(
          crc32(q.snapshot.data() + e.begin, size_t(e.end - e.begin)));
    if (!q.file.entries.empty()) {
      std::string path = io::join(q.tmpDir, rankFileName(rank));
      int fd = ::open(path.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
      size_t half = q.snapshot.size() / 2;
      bool ok = fd >= 0 &&
                io::writeAll(fd, q.file.header.data(), q.file.header.size()) &&
                io::writeAll(fd, q.snapshot.data(), half);
      if (ok) {
        // fsync so a crash here leaves a truly half-written file.
        if (o.killRank == rank && o.killStep == q.step &&
            o.killPoint == "write")
          ::fsync(fd);
        maybeDie(o, rank, q.step, "write");
      }
      ok = ok &&
           io::writeAll(fd, q.snapshot.data() + half,
                        q.snapshot.size() - half) &&
           ::fsync(fd) == 0;
      if (fd >= 0)
        ok = ::close(fd) == 0 && ok;
      if (!ok)
        q.error = "--save: cannot write " + path + ": " + io::lastError();
    }
    q.seconds = now() - t0;
  };
  pending = std::move(p);
  if (options.overlap)
    pending->writer = std::thread(write);
  else
    write();
  return true;
}

// Every rank's writer has finished; flags: 1 written, 2 failed. Rank 0
// combines them and sends the verdict back, so every rank takes the same
// branch.
bool Saver::allWritten(std::string &error) {
  int64_t flag = pending->error.empty() ? 1 : 2;
  if (comm.size > 1) {
    int64_t verdict = flag;
    for (int r = 1; r < comm.size; ++r) {
      int64_t theirs = flag;
      if (!comm.move(&theirs, 1, r, 0, error))
        return false;
      if (comm.rank == 0)
        verdict = std::max(verdict, theirs);
    }
    for (int r = 1; r < comm.size; ++r) {
      int64_t v = verdict;
      if (!comm.move(&v, 1, 0, r, error))
        return false;
      if (comm.rank == r)
        verdict = v;
    }
    flag = verdict;
  }
  if (flag == 1)
    return true;
  error = !pending->error.empty()
              ? pending->error
              : "--save: another rank could not write its checkpoint file";
  return false;
}

bool Saver::commit(std::string &error) {
  Pending &p = *pending;
  if (p.writer.joinable())
    p.writer.join();
  writeSeconds += p.seconds;
  bytesWritten += static_cast<int64_t>(p.snapshot.size());
  maybeDie(options, comm.rank, p.step, "commit");
  // Every rank's CRCs to rank 0, in planned order.
  std::map<int, std::vector<int64_t>> crcs;
  crcs[comm.rank] = p.crcs;
  for (int r = 1; r < comm.size; ++r) {
    size_t count = 0;
    for (const PlannedPiece &piece : pieces)
      count += piece.rank == r;
    std::vector<int64_t> buffer =
        comm.rank == r ? p.crcs : std::vector<int64_t>(count, 0);
    if (count && !comm.move(buffer.data(), count, r, 0, error))
      return false;
    if (comm.rank == 0)
      crcs[r] = std::move(buffer);
  }
  int64_t ok = 1;
  std::string commitError;
  if (comm.rank == 0) {
    Index index = metadata;
    index.step = p.step;
    std::map<int64_t, size_t> entryOf;
    for (const plan::Tensor &arg : manifest.arguments) {
      if (!isSaved(arg))
        continue;
      entryOf[arg.index] = index.tensors.size();
      TensorEntry t;
      t.name = logicalName(arg);
      t.kind = arg.kind;
      t.param = arg.param.value_or("");
      t.slot = arg.slot.value_or("");
      t.dtype = arg.dtype;
      t.shape = arg.shape;
      index.tensors.push_back(std::move(t));
    }
    std::map<int, RankFile> files;
    std::map<int, size_t> next;
    for (const PlannedPiece &piece : pieces) {
      auto [it, fresh] = files.try_emplace(piece.rank);
      if (fresh)
        it->second = rankFile(manifest, pieces, piece.rank, p.step);
      const RankFile &f = it->second;
      size_t k = next[piece.rank]++;
      Piece out;
      out.file = rankFileName(piece.rank);
      out.offset = static_cast<int64_t>(f.header.size()) + f.entries[k].begin;
      out.bytes = f.entries[k].end - f.entries[k].begin;
      out.region = piece.region;
      out.crc = crcs[piece.rank][k];
      index.tensors[entryOf[piece.arg]].pieces.push_back(std::move(out));
    }
    std::error_code ec;
    bool done = io::writeFileAtomic(p.tmpDir, kIndexFile, writeIndex(index),
                                    commitError);
    if (done && fs::exists(p.finalDir))
      fs::remove_all(p.finalDir, ec);
    done = done && ::rename(p.tmpDir.c_str(), p.finalDir.c_str()) == 0 &&
           io::syncDir(options.dir);
    if (!done && commitError.empty())
      commitError =
          "--save: cannot commit " + p.finalDir + ": " + io::lastError();
    ok = done;
    if (done)
      prune();
  }
  for (int r = 1; r < comm.size; ++r) {
    int64_t v = ok;
    if (!comm.move(&v, 1, 0, r, error))
      return false;
    if (comm.rank == r)
      ok = v;
  }
  pending.reset();
  if (!ok)
    error = comm.rank == 0 ? commitError
                           : "--save: rank 0 could not commit the checkpoint";
  return ok;
}

void Saver::prune() {
  std::error_code ec;
  std::vector<std::pair<int64_t, fs::path>> complete;
  for (const fs::directory_entry &e : fs::directory_iterator(options.dir, ec)) {
    std::string name = e.path().filename().string();
    long long step = 0;
    char rest[8] = {};
    int n = std::sscanf(name.c_str(), "step-%lld%7s", &step, rest);
    if (n == 1 && name == stepDirName(step))
      complete.push_back({step, e.path()});
    // A half-written save older than the one just committed is abandoned.
    else if (n == 2 && std::string(rest) == ".tmp" &&
             name == stepDirName(step) + ".tmp" && pending &&
             step < pending->step)
      fs::remove_all(e.path(), ec);
  }
  if (options.keep <= 0 || complete.size() <= size_t(options.keep))
    return;
  std::sort(complete.begin(), complete.end());
  for (size_t i = 0; i + size_t(options.keep) < complete.size(); ++i)
    fs::remove_all(complete[i].second, ec);
}

bool Saver::afterStep(int64_t step, bool last,
                      const std::vector<const void *> &held,
                      std::string &error) {
  double t0 = now();
  // A save overlaps the one step after it, and commits at that step's end
  // (waiting for the disk only if the write outlasts the step): so a crash
  // loses at most one interval and one step, and the commit point does not
  // depend on timing.
  if (pending && !finish(error))
    return false;
  bool due = last || (options.every > 0 && step % options.every == 0);
  if (due) {
    if (!start(step, held, error))
      return false;
    // A synchronous save commits at once; the last one too.
    if ((last || !options.overlap) && !finish(error))
      return false;
  }
  loopSeconds += now() - t0;
  return true;
}

bool Saver::finish(std::string &error) {
  if (!pending)
    return true;
  if (pending->writer.joinable())
    pending->writer.join();
  return allWritten(error) && commit(error);
}
