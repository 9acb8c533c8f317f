//===- piper-ckpt.cpp - Inspect, verify and consolidate checkpoints -------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
//   piper-ckpt inspect PATH
//   piper-ckpt verify PATH
//   piper-ckpt consolidate PATH -o FILE.safetensors [--params-only]
//
// PATH is a checkpoint (a directory with index.json), a --save directory
// (its newest complete checkpoint), or, for inspect, a safetensors file.
// consolidate writes every logical tensor whole into one safetensors file,
// which piper-run --init-from reads under any plan, and any safetensors
// reader (Python's safetensors, torch) opens. See docs/Checkpoints.md.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace piper;

namespace {

const char *kUsage =
    "usage: piper-ckpt inspect PATH\n"
    "       piper-ckpt verify PATH\n"
    "       piper-ckpt consolidate PATH -o FILE [--params-only]\n"
    "PATH: a checkpoint directory, a piper-run --save directory (its newest\n"
    "complete checkpoint) or, for inspect, a safetensors file.\n";

int fail(const std::string &message) {
  std::fprintf(stderr, "piper-ckpt: %s\n", message.c_str());
  return 1;
}

bool isFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string shapeStr(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

/// The checkpoint at `path` and its index; notes about ignored half-written
/// saves go to stderr.
bool open(const std::string &path, bool allowFile, std::string &dir,
          ckpt::Index &index, std::string &error) {
  if (allowFile && isFile(path)) {
    dir.clear();
    return ckpt::indexOfSafetensors(path, index, error);
  }
  std::vector<std::string> notes;
  if (!ckpt::findCheckpoint(path, dir, notes, error))
    return false;
  for (const std::string &note : notes)
    std::fprintf(stderr, "piper-ckpt: %s\n", note.c_str());
  return ckpt::loadIndex(dir, index, error);
}

int inspect(const std::string &path) {
  std::string dir, error;
  ckpt::Index index;
  if (!open(path, true, dir, index, error))
    return fail(error);
  int64_t bytes = 0, pieces = 0, params = 0;
  std::set<std::string> files;
  for (const ckpt::TensorEntry &t : index.tensors) {
    params += t.kind == "param";
    for (const ckpt::Piece &p : t.pieces) {
      bytes += p.bytes;
      ++pieces;
      files.insert(p.file);
    }
  }
  if (dir.empty()) {
    std::printf("safetensors %s\n", path.c_str());
  } else {
    std::printf("checkpoint %s\n", dir.c_str());
    std::printf(
        "step %lld, seed %llu, data %s\n", static_cast<long long>(index.step),
        static_cast<unsigned long long>(index.seed), index.data.c_str());
    std::string mesh;
    if (const plan::json::Value *m = index.strategy.get("mesh"))
      if (const plan::json::Value *axes = m->get("axes");
          axes && axes->getArray())
        for (const plan::json::Value &a : *axes->getArray()) {
          int64_t size = 0;
          const plan::json::Value *name = a.get("name"), *sz = a.get("size");
          if (name && name->getString() && sz && sz->getInteger(size))
            mesh += (mesh.empty() ? "" : ",") + *name->getString() + "=" +
                    std::to_string(size);
        }
    const plan::json::Value *roles = index.strategy.get("roles");
    const plan::json::Value *plan = index.strategy.get("plan");
    std::printf("strategy: mesh %s, %zu role(s), plan %s\n",
                mesh.empty() ? "(one device)" : mesh.c_str(),
                roles && roles->getArray() ? roles->getArray()->size() : 0,
                plan && plan->getString() ? plan->getString()->c_str() : "?");
  }
  std::printf("%zu tensors (%lld parameters), %lld pieces in %zu files, "
              "%lld bytes\n",
              index.tensors.size(), static_cast<long long>(params),
              static_cast<long long>(pieces), files.size(),
              static_cast<long long>(bytes));
  for (const ckpt::TensorEntry &t : index.tensors) {
    std::printf("%s %s %s\n", t.name.c_str(), plan::dtypeName(t.dtype),
                shapeStr(t.shape).c_str());
    for (const ckpt::Piece &p : t.pieces) {
      std::string crc = "-";
      if (p.crc >= 0) {
        char s[16];
        std::snprintf(s, sizeof(s), "0x%08x", static_cast<unsigned>(p.crc));
        crc = s;
      }
      std::printf("  %s %s %lld bytes at %lld crc32 %s\n", p.file.c_str(),
                  p.region.str().c_str(), static_cast<long long>(p.bytes),
                  static_cast<long long>(p.offset), crc.c_str());
    }
  }
  return 0;
}

int verify(const std::string &path) {
  std::string dir, error;
  ckpt::Index index;
  if (!open(path, false, dir, index, error))
    return fail(error);
  std::vector<std::string> problems;
  ckpt::verify(dir, index, problems);
  for (const std::string &p : problems)
    std::fprintf(stderr, "piper-ckpt: %s\n", p.c_str());
  if (!problems.empty())
    return fail("checkpoint " + dir + ": " + std::to_string(problems.size()) +
                " problem" + (problems.size() == 1 ? "" : "s"));
  size_t pieces = 0;
  int64_t bytes = 0;
  for (const ckpt::TensorEntry &t : index.tensors)
    for (const ckpt::Piece &p : t.pieces) {
      ++pieces;
      bytes += p.bytes;
    }
  std::printf("checkpoint %s: OK (%zu tensors, %zu pieces, %lld bytes)\n",
              dir.c_str(), index.tensors.size(), pieces,
              static_cast<long long>(bytes));
  return 0;
}

int consolidate(const std::string &path, const std::string &out,
                bool paramsOnly) {
  std::string dir, error;
  ckpt::Index index;
  if (!open(path, false, dir, index, error) ||
      !ckpt::consolidate(dir, index, out, paramsOnly, error))
    return fail(error);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 1 : 0;
  }
  std::string command = args[0], path, out;
  bool paramsOnly = false;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (a == "-o" && i + 1 < args.size())
      out = args[++i];
    else if (a.rfind("-o=", 0) == 0 || a.rfind("--out=", 0) == 0)
      out = a.substr(a.find('=') + 1);
    else if (a == "--params-only")
      paramsOnly = true;
    else if (!a.empty() && a[0] == '-')
      return fail("unknown option '" + a + "'\n" + kUsage);
    else if (path.empty())
      path = a;
    else
      return fail("unexpected argument '" + a + "'");
  }
  if (path.empty())
    return fail(std::string("missing PATH\n") + kUsage);
  if (command == "inspect")
    return inspect(path);
  if (command == "verify")
    return verify(path);
  if (command == "consolidate") {
    if (out.empty())
      return fail("consolidate needs -o FILE");
    return consolidate(path, out, paramsOnly);
  }
  return fail("unknown command '" + command + "'\n" + kUsage);
}
