//===- Read.cpp - Finding, checking and reading checkpoints ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A device reads the region it holds under the new plan (regionOf) from the
// saved pieces that overlap it: both are lists of runs of the row-major
// order, in increasing order, so one merge finds every overlap, and each
// overlap is one pread of the piece's file. Nothing else of the file is
// read. A piece read in full also has its CRC checked.
//
//===----------------------------------------------------------------------===//

#include "FileIO.h"
#include "Overlap.h"
#include "piper-rt/checkpoint.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace piper;
using namespace piper::ckpt;
namespace fs = std::filesystem;

bool piper::ckpt::loadIndex(const std::string &dir, Index &index,
                            std::string &error) {
  std::string path = io::join(dir, kIndexFile);
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path + ": " + io::lastError();
    return false;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return readIndex(text.str(), path, index, error);
}

bool piper::ckpt::findCheckpoint(const std::string &path, std::string &dir,
                                 std::vector<std::string> &notes,
                                 std::string &error) {
  std::error_code ec;
  if (fs::exists(io::join(path, kIndexFile), ec)) {
    dir = path;
    return true;
  }
  if (!fs::is_directory(path, ec)) {
    error = "no checkpoint at " + path;
    return false;
  }
  // step-N with a readable index is complete; step-N.tmp, or step-N
  // without one, is a save that did not finish.
  int64_t best = -1;
  std::vector<std::pair<int64_t, std::string>> partial;
  for (const fs::directory_entry &e : fs::directory_iterator(path, ec)) {
    std::string name = e.path().filename().string();
    long long step = 0;
    if (std::sscanf(name.c_str(), "step-%lld", &step) != 1)
      continue;
    bool tmp = name == stepDirName(step) + ".tmp";
    if (!tmp && name != stepDirName(step))
      continue;
    Index index;
    std::string why;
    if (!tmp && loadIndex(e.path().string(), index, why)) {
      if (step > best) {
        best = step;
        dir = e.path().string();
      }
      continue;
    }
    partial.push_back({step, e.path().string()});
  }
  std::sort(partial.begin(), partial.end());
  for (const auto &[step, at] : partial)
    if (step > best)
      notes.push_back("ignoring half-written checkpoint " + at +
                      " (no index.json)");
  if (best >= 0)
    return true;
  error = "no complete checkpoint in " + path;
  for (size_t i = 0; i < partial.size(); ++i)
    error += (i ? ", " : " (half-written: ") +
             fs::path(partial[i].second).filename().string() +
             (i + 1 == partial.size() ? ")" : "");
  return false;
}

bool piper::ckpt::indexOfSafetensors(const std::string &path, Index &index,
                                     std::string &error) {
  std::vector<StEntry> entries;
  if (!stReadHeader(path, entries, error))
    return false;
  index = Index();
  for (const StEntry &e : entries) {
    TensorEntry t;
    t.name = e.name;
    t.kind = e.name.rfind("optimizer.", 0) == 0 ? "state" : "param";
    t.dtype = e.dtype;
    t.shape = e.shape;
    Piece p;
    p.file = path;
    p.offset = e.begin;
    p.bytes = e.end - e.begin;
    p.region.offset.assign(e.shape.size(), 0);
    p.region.shape = e.shape;
    if (e.dtype != plan::DType::Other &&
        p.bytes != t.numel() * int64_t(plan::dtypeSize(e.dtype))) {
      error = path + ": tensor '" + e.name + "' has " +
              std::to_string(p.bytes) + " bytes, its shape needs " +
              std::to_string(t.numel() * int64_t(plan::dtypeSize(e.dtype)));
      return false;
    }
    t.pieces.push_back(std::move(p));
    index.tensors.push_back(std::move(t));
  }
  return true;
}

namespace {

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

bool isFloat(plan::DType d) {
  return d == plan::DType::F32 || d == plan::DType::F64 ||
         d == plan::DType::BF16;
}

} // namespace

bool piper::ckpt::checkModel(const Index &index, const plan::Manifest &manifest,
                             bool weightsOnly, const std::string &what,
                             std::string &error) {
  // In the plan's argument order: the first difference is reported.
  std::map<std::string, const plan::Tensor *> planned;
  std::vector<std::pair<std::string, const plan::Tensor *>> order;
  for (const plan::Tensor &arg : manifest.arguments)
    if (isSaved(arg) && (!weightsOnly || arg.kind == "param")) {
      planned[logicalName(arg)] = &arg;
      order.push_back({logicalName(arg), &arg});
    }
  for (const auto &[name, arg] : order) {
    const TensorEntry *t = index.find(name);
    if (!t) {
      error = what + " has no tensor '" + name +
              "' (a checkpoint of another model?)";
      return false;
    }
    if (t->shape != arg->shape) {
      error = what + ": tensor '" + name + "' has shape " + shapeStr(t->shape) +
              ", the plan's is " + shapeStr(arg->shape);
      return false;
    }
    bool convertible = weightsOnly && isFloat(t->dtype) && isFloat(arg->dtype);
    if (t->dtype != arg->dtype && !convertible) {
      error = what + ": tensor '" + name + "' is " + plan::dtypeName(t->dtype) +
              ", the plan's is " + plan::dtypeName(arg->dtype);
      return false;
    }
  }
  if (weightsOnly)
    return true;
  for (const TensorEntry &t : index.tensors)
    if (!planned.count(t.name)) {
      error = what + " has tensor '" + t.name +
              "', which the plan does not (a checkpoint of another model?)";
      return false;
    }
  return true;
}

namespace {

std::string hex(int64_t crc) {
  char s[16];
  std::snprintf(s, sizeof(s), "0x%08x", static_cast<unsigned>(crc));
  return s;
}

/// Opens a piece's file, checking that it holds the piece's bytes.
int openPiece(const std::string &dir, const TensorEntry &t, const Piece &p,
              std::string &error) {
  std::string path = io::join(dir, p.file);
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    error = "checkpoint " + dir + ": missing " + p.file + " (tensor '" +
            t.name + "')";
    return -1;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < p.offset + p.bytes) {
    error = "checkpoint " + dir + ": " + p.file + " is truncated: tensor '" +
            t.name + "' needs bytes [" + std::to_string(p.offset) + ", " +
            std::to_string(p.offset + p.bytes) + "), the file has " +
            std::to_string(static_cast<int64_t>(st.st_size));
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string crcMismatch(const std::string &dir, const TensorEntry &t,
                        const Piece &p, uint32_t actual) {
  return "checkpoint " + dir + ": checksum mismatch in " + p.file +
         ", tensor '" + t.name + "' " + p.region.str() + " (index " +
         hex(p.crc) + ", data " + hex(actual) + ")";
}

} // namespace

bool piper::ckpt::readRegion(const std::string &dir, const TensorEntry &entry,
                             const Region &region, void *out,
                             std::string &error) {
  const int64_t size = static_cast<int64_t>(plan::dtypeSize(entry.dtype));
  std::vector<Run> dest = localRuns(region, entry.shape);
  char *bytes = static_cast<char *>(out);
  int64_t covered = 0;
  for (const Piece &p : entry.pieces) {
    std::vector<Copy> copies = overlaps(localRuns(p.region, entry.shape), dest);
    if (copies.empty())
      continue;
    int fd = openPiece(dir, entry, p, error);
    if (fd < 0)
      return false;
    int64_t elements = 0;
    uint32_t crc = 0;
    for (const Copy &c : copies) {
      char *to = bytes + c.dst * size;
      size_t n = static_cast<size_t>(c.length * size);
      if (io::readAt(fd, to, n, p.offset + c.src * size) !=
          static_cast<ssize_t>(n)) {
        error = "checkpoint " + dir + ": cannot read " + p.file + ": " +
                io::lastError();
        ::close(fd);
        return false;
      }
      crc = crc32(to, n, crc);
      elements += c.length;
    }
    ::close(fd);
    // Copies run in the piece's order, so a piece read whole has its CRC.
    if (elements == p.region.numel() && p.crc >= 0 &&
        crc != static_cast<uint32_t>(p.crc)) {
      error = crcMismatch(dir, entry, p, crc);
      return false;
    }
    covered += elements;
  }
  if (covered != region.numel()) {
    error = "checkpoint " + dir + ": the pieces of '" + entry.name +
            "' cover " + std::to_string(covered) + " of the " +
            std::to_string(region.numel()) + " elements of " + region.str();
    return false;
  }
  return true;
}

namespace {

/// Converts `n` floats of type `from` to `to` (f32, f64 or bf16 in).
void convert(const void *in, plan::DType from, void *out, plan::DType to,
             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    double v = 0;
    if (from == plan::DType::F64) {
      v = static_cast<const double *>(in)[i];
    } else if (from == plan::DType::F32) {
      v = static_cast<const float *>(in)[i];
    } else {
      uint32_t bits = uint32_t(static_cast<const uint16_t *>(in)[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      v = f;
    }
    if (to == plan::DType::F64)
      static_cast<double *>(out)[i] = v;
    else
      static_cast<float *>(out)[i] = static_cast<float>(v);
  }
}

} // namespace

bool piper::ckpt::restore(const std::string &dir, const Index &index,
                          const plan::Manifest &manifest,
                          const plan::Coords &coords, const plan::Role &role,
                          const std::vector<void *> &held, bool weightsOnly,
                          std::string &error) {
  for (const plan::Tensor &arg : manifest.arguments) {
    if (!isSaved(arg) || (weightsOnly && arg.kind != "param") ||
        !held[arg.index] ||
        std::find(role.inputs.begin(), role.inputs.end(), arg.index) ==
            role.inputs.end())
      continue;
    const TensorEntry *t = index.find(logicalName(arg));
    if (!t) {
      error = "checkpoint " + dir + " has no tensor '" + logicalName(arg) + "'";
      return false;
    }
    Region region = regionOf(arg, manifest.mesh, coords);
    if (t->dtype == arg.dtype) {
      if (!readRegion(dir, *t, region, held[arg.index], error))
        return false;
      continue;
    }
    std::vector<char> staging(static_cast<size_t>(region.numel()) *
                              plan::dtypeSize(t->dtype));
    if (!readRegion(dir, *t, region, staging.data(), error))
      return false;
    convert(staging.data(), t->dtype, held[arg.index], arg.dtype,
            region.numel());
  }
  return true;
}

void piper::ckpt::verify(const std::string &dir, const Index &index,
                         std::vector<std::string> &problems) {
  std::vector<char> buffer(8 << 20);
  // A missing file is reported once, not once per piece it held.
  std::map<std::string, bool> missing;
  for (const TensorEntry &t : index.tensors) {
    int64_t elements = 0;
    for (const Piece &p : t.pieces) {
      elements += p.region.numel();
      std::string error;
      if (missing[p.file])
        continue;
      int fd = openPiece(dir, t, p, error);
      if (fd < 0) {
        missing[p.file] = !fs::exists(io::join(dir, p.file));
        problems.push_back(error);
        continue;
      }
      uint32_t crc = 0;
      for (int64_t at = 0; at < p.bytes;) {
        size_t n = static_cast<size_t>(
            std::min<int64_t>(p.bytes - at, int64_t(buffer.size())));
        if (io::readAt(fd, buffer.data(), n, p.offset + at) !=
            static_cast<ssize_t>(n))
          break;
        crc = crc32(buffer.data(), n, crc);
        at += static_cast<int64_t>(n);
      }
      ::close(fd);
      if (p.crc >= 0 && crc != static_cast<uint32_t>(p.crc))
        problems.push_back(crcMismatch(dir, t, p, crc));
    }
    if (elements != t.numel())
      problems.push_back("checkpoint " + dir + ": the pieces of '" + t.name +
                         "' hold " + std::to_string(elements) + " of its " +
                         std::to_string(t.numel()) + " elements");
  }
}

bool piper::ckpt::consolidate(const std::string &dir, const Index &index,
                              const std::string &out, bool paramsOnly,
                              std::string &error) {
  std::vector<const TensorEntry *> chosen;
  std::vector<StEntry> entries;
  int64_t at = 0;
  for (const TensorEntry &t : index.tensors) {
    if (paramsOnly && t.kind != "param")
      continue;
    StEntry e{t.name, t.dtype, t.shape, at, 0};
    at += t.numel() * static_cast<int64_t>(plan::dtypeSize(t.dtype));
    e.end = at;
    chosen.push_back(&t);
    entries.push_back(std::move(e));
  }
  std::string header = stHeader(
      entries, {{"format", "pt"}, {"piper.step", std::to_string(index.step)}});
  std::string tmp = out + ".tmp";
  int fd = ::open(tmp.c_str(), O_CREAT | O_TRUNC | O_WRONLY, 0644);
  bool ok = fd >= 0 && io::writeAll(fd, header.data(), header.size());
  for (size_t k = 0; ok && k < chosen.size(); ++k) {
    const TensorEntry &t = *chosen[k];
    Region whole;
    whole.offset.assign(t.shape.size(), 0);
    whole.shape = t.shape;
    std::vector<char> data(
        static_cast<size_t>(entries[k].end - entries[k].begin));
    if (!readRegion(dir, t, whole, data.data(), error)) {
      ::close(fd);
      ::unlink(tmp.c_str());
      return false;
    }
    ok = io::writeAll(fd, data.data(), data.size());
  }
  ok = ok && ::fsync(fd) == 0;
  if (fd >= 0)
    ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), out.c_str()) == 0;
  if (!ok)
    error = "cannot write " + out + ": " + io::lastError();
  return ok;
}
