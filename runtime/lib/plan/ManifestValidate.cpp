//===- ManifestValidate.cpp - A plan checked before it runs ---------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What a hostile or damaged plan directory could otherwise do to piper-run,
// and the check that stops it here (plan_validate.h):
// - a huge or overflowing shape: std::length_error or bad_alloc when the
//   host buffers are allocated -> element counts bounded, bytes summed
//   against the machine's memory;
// - a duplicated input or output, or an update whose target has another
//   size: the step or the copy after it writes out of bounds -> indices
//   distinct, update targets of the same dtype and held shape;
// - an entry point that is not one ("malloc"): the step calls libc ->
//   entry names checked here, the symbol's object checked at load;
// - a truncated or bit-flipped object: the dynamic loader crashes -> size
//   and checksum verified before dlopen.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_validate.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace piper::plan;

namespace {

std::string at(const char *list, size_t i) {
  return std::string("plan.") + list + "[" + std::to_string(i) + "]";
}

/// Element counts that fit: each dimension and the product bounded.
bool checkShape(const Tensor &t, const std::string &path, std::string &error) {
  int64_t n = 1;
  for (int64_t d : t.shape) {
    if (d > kMaxTensorElements || (d > 0 && n > kMaxTensorElements / d)) {
      error = "more than " + std::to_string(kMaxTensorElements) +
              " elements at " + path + ".shape";
      return false;
    }
    n *= d;
  }
  if (t.shard && (t.shard->chunk > kMaxTensorElements ||
                  t.shard->members > kMaxPlanDevices)) {
    error = "shard chunk or members out of range at " + path + ".shard";
    return false;
  }
  return true;
}

/// The host memory the ranks of one machine could use at most.
uint64_t physicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? uint64_t(pages) * uint64_t(size) : 0;
}

bool checkMesh(const Manifest &m, std::string &error) {
  std::set<std::string> names;
  int64_t devices = 1;
  for (size_t i = 0; i < m.mesh.axes.size(); ++i) {
    const MeshAxis &axis = m.mesh.axes[i];
    std::string path = "plan.mesh.axes[" + std::to_string(i) + "]";
    if (axis.name.empty() || !names.insert(axis.name).second) {
      error = "axis names must be distinct and non-empty at " + path + ".name";
      return false;
    }
    // Sizes are >= 1 (the reader); the product is bounded before it can
    // overflow.
    if (axis.size > kMaxPlanDevices / devices) {
      error = "the mesh has more than " + std::to_string(kMaxPlanDevices) +
              " devices at " + path + ".size";
      return false;
    }
    devices *= axis.size;
  }
  for (size_t k = 0; k < m.roles.size(); ++k)
    for (const auto &[axis, coord] : m.roles[k].role) {
      const MeshAxis *found = nullptr;
      for (const MeshAxis &a : m.mesh.axes)
        if (a.name == axis)
          found = &a;
      if (!found || coord < 0 || coord >= found->size) {
        error = "role coordinate " + axis + " = " + std::to_string(coord) +
                " is not on the mesh at " + at("roles", k) + ".role." + axis;
        return false;
      }
    }
  return true;
}

/// Distinct indices, in range (checkReferences), each listed once.
bool distinct(const std::vector<int64_t> &list, const std::string &path,
              std::string &error) {
  std::set<int64_t> seen;
  for (size_t n = 0; n < list.size(); ++n)
    if (!seen.insert(list[n]).second) {
      error = "index " + std::to_string(list[n]) + " is listed twice at " +
              path + "[" + std::to_string(n) + "]";
      return false;
    }
  return true;
}

/// Every index of `list` is one of `of` (the role's): piper-run holds
/// buffers for the role's arguments and results only.
bool within(const std::vector<int64_t> &list, const std::vector<int64_t> &of,
            const std::string &path, const char *what, std::string &error) {
  for (size_t n = 0; n < list.size(); ++n)
    if (std::find(of.begin(), of.end(), list[n]) == of.end()) {
      error = "index " + std::to_string(list[n]) + " is not one of the " +
              "role's " + what + " at " + path + "[" + std::to_string(n) + "]";
      return false;
    }
  return true;
}

/// The evaluation or sampling entry `e` (at `at`): a plan entry point
/// other than the role's, whose inputs and outputs are the role's, each
/// once.
bool checkEvalEntry(const Role &r, const std::optional<EvalEntry> &entry,
                    const std::string &at, std::string &error) {
  if (!entry)
    return true;
  const EvalEntry &e = *entry;
  if (e.entry.rfind(kEntryPointPrefix, 0) != 0 || e.entry == r.entry) {
    error = "entry '" + e.entry + "' is not a plan entry point (" +
            kEntryPointPrefix + "...) other than the role's at " + at +
            ".entry";
    return false;
  }
  return distinct(e.inputs, at + ".inputs", error) &&
         distinct(e.outputs, at + ".outputs", error) &&
         within(e.inputs, r.inputs, at + ".inputs", "inputs", error) &&
         within(e.outputs, r.outputs, at + ".outputs", "outputs", error);
}

bool checkRole(const Manifest &m, size_t k, std::string &error) {
  const Role &r = m.roles[k];
  std::string path = at("roles", k);
  if (r.entry.rfind(kEntryPointPrefix, 0) != 0) {
    error = "entry '" + r.entry + "' is not a plan entry point (" +
            kEntryPointPrefix + "...) at " + path + ".entry";
    return false;
  }
  // A file of the plan directory, not a path out of it.
  if (r.object.empty() || r.object.find('/') != std::string::npos ||
      r.object == "." || r.object == "..") {
    error =
        "object '" + r.object + "' is not a file name at " + path + ".object";
    return false;
  }
  if (r.objectBytes && *r.objectBytes < 0) {
    error = "negative size at " + path + ".object_bytes";
    return false;
  }
  return distinct(r.inputs, path + ".inputs", error) &&
         distinct(r.outputs, path + ".outputs", error) &&
         checkEvalEntry(r, r.eval, path + ".eval", error) &&
         checkEvalEntry(r, r.sample, path + ".sample", error);
}

} // namespace

/// "cpu" (no architecture) or "cuda" with an `sm_<NN>[a]` architecture.
static bool checkTarget(const Manifest &m, std::string &error) {
  if (m.target == "cpu") {
    if (m.gpuArch.empty())
      return true;
    error = "a cpu plan has no GPU architecture at plan.gpu_arch";
    return false;
  }
  if (m.target != "cuda") {
    error = "unknown target '" + m.target + "' (cpu or cuda) at plan.target";
    return false;
  }
  const std::string &a = m.gpuArch;
  size_t digits = a.size() >= 3 ? a.find_first_not_of("0123456789", 3) : 0;
  if (digits == std::string::npos)
    digits = a.size();
  bool ok =
      a.compare(0, 3, "sm_") == 0 && digits >= 5 &&
      (digits == a.size() || (digits + 1 == a.size() && a[digits] == 'a'));
  if (!ok) {
    error = "GPU architecture '" + a + "' is no sm_<NN> at plan.gpu_arch";
    return false;
  }
  return true;
}

bool piper::plan::checkRunTarget(const Manifest &m,
                                 const std::string &runtimeTarget,
                                 std::string &error) {
  if (m.target == runtimeTarget)
    return true;
  error = "the plan was compiled for --target=" + m.target +
          (m.gpuArch.empty() ? "" : " (" + m.gpuArch + ")") +
          "; this piper-run runs " + runtimeTarget + " plans";
  return false;
}

bool piper::plan::validateManifest(const Manifest &m, std::string &error) {
  if (!checkMesh(m, error) || !checkTarget(m, error))
    return false;
  // Bytes a rank holding every argument and result whole would allocate.
  uint64_t bytes = 0;
  for (const char *list : {"arguments", "results"}) {
    const std::vector<Tensor> &tensors =
        std::string(list) == "arguments" ? m.arguments : m.results;
    for (size_t i = 0; i < tensors.size(); ++i) {
      if (!checkShape(tensors[i], at(list, i), error))
        return false;
      bytes += uint64_t(tensors[i].localNumel()) * tensors[i].elementSize();
    }
  }
  if (uint64_t memory = physicalMemory(); memory && bytes > memory) {
    error = "the plan's arguments and results need " + std::to_string(bytes) +
            " bytes, more than this machine's " + std::to_string(memory) +
            " at plan.arguments";
    return false;
  }
  for (size_t j = 0; j < m.results.size(); ++j) {
    if (m.results[j].index != static_cast<int64_t>(j)) {
      error =
          "results must be listed by index at " + at("results", j) + ".index";
      return false;
    }
    // The update is a byte copy of the result over its argument.
    if (const std::optional<int64_t> &target = m.results[j].updates) {
      const Tensor &arg = m.arguments[*target], &res = m.results[j];
      if (arg.dtype != res.dtype || arg.heldShape() != res.heldShape()) {
        error = "result " + std::to_string(j) + " updates argument " +
                std::to_string(*target) + " of another dtype or shape at " +
                at("results", j) + ".updates";
        return false;
      }
    }
  }
  // Result 0 is the loss piper-run reads.
  if (m.results.empty() || m.results[0].numel() < 1 ||
      m.results[0].dtype == DType::I64) {
    error = "result 0 must be the floating-point loss at plan.results";
    return false;
  }
  for (size_t k = 0; k < m.roles.size(); ++k)
    if (!checkRole(m, k, error))
      return false;
  return true;
}

std::string piper::plan::checksum(const void *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= static_cast<const unsigned char *>(data)[i];
    hash *= 0x100000001b3ull;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx",
                static_cast<unsigned long long>(hash));
  return text;
}

bool piper::plan::verifyRoleObject(const std::string &directory,
                                   const Role &role, std::string &error) {
  std::string path = directory;
  if (!path.empty() && path.back() != '/')
    path += '/';
  path += role.object;
  if (!role.objectBytes || !role.objectChecksum) {
    error = "the plan records no size and checksum for " + path +
            " (written by an older piper-compile; recompile the plan)";
    return false;
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
    error = "cannot load " + path + ": not a readable file";
    return false;
  }
  if (info.st_size != *role.objectBytes) {
    error = path + " has " + std::to_string(info.st_size) +
            " bytes; the plan recorded " + std::to_string(*role.objectBytes) +
            " (truncated or replaced; recompile the plan)";
    return false;
  }
  std::ifstream in(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)),
                    std::istreambuf_iterator<char>());
  std::string sum = checksum(bytes.data(), bytes.size());
  if (!in.good() && !in.eof()) {
    error = "cannot read " + path;
    return false;
  }
  if (sum != *role.objectChecksum) {
    error = path + " has checksum " + sum + "; the plan recorded " +
            *role.objectChecksum + " (corrupted; recompile the plan)";
    return false;
  }
  return true;
}

std::string piper::plan::roleSignature(const Manifest &m, const Role &role) {
  auto tensor = [](const Tensor &t) {
    std::string s = std::to_string(t.index) + ":" + dtypeName(t.dtype) + "[";
    std::vector<int64_t> held = t.heldShape();
    for (size_t d = 0; d < held.size(); ++d)
      s += (d ? "," : "") + std::to_string(held[d]);
    return s + "]";
  };
  std::string s = role.entry + "(";
  for (size_t n = 0; n < role.inputs.size(); ++n)
    s += (n ? " " : "") + tensor(m.arguments[role.inputs[n]]);
  s += ") -> (";
  for (size_t n = 0; n < role.outputs.size(); ++n)
    s += (n ? " " : "") + tensor(m.results[role.outputs[n]]);
  s += ")";
  // The evaluation and sampling entries live in the same object: one
  // signature covers all three.
  for (const std::optional<EvalEntry> &e : {role.eval, role.sample}) {
    if (!e)
      continue;
    s += " " + e->entry + "(";
    for (size_t n = 0; n < e->inputs.size(); ++n)
      s += (n ? " " : "") + tensor(m.arguments[e->inputs[n]]);
    s += ") -> (";
    for (size_t n = 0; n < e->outputs.size(); ++n)
      s += (n ? " " : "") + tensor(m.results[e->outputs[n]]);
    if (!e->logitsShape.empty()) {
      s += std::string(e->outputs.empty() ? "" : " ") +
           "logits:" + dtypeName(e->logitsDtype) + "[";
      for (size_t d = 0; d < e->logitsShape.size(); ++d)
        s += (d ? "," : "") + std::to_string(e->logitsShape[d]);
      s += "]";
    }
    s += ")";
  }
  return s;
}

namespace {
/// The signature's words: the entry, then "in"/"out" markers and one word
/// per tensor.
std::vector<std::string> words(const std::string &signature) {
  std::vector<std::string> out;
  std::string word;
  for (char c : signature) {
    if (c == '(' || c == ')' || c == ' ') {
      if (!word.empty())
        out.push_back(word == "->" ? "outputs" : word);
      word.clear();
      continue;
    }
    word += c;
  }
  if (!word.empty())
    out.push_back(word);
  return out;
}
} // namespace

std::string piper::plan::signatureDifference(const std::string &compiled,
                                             const std::string &described) {
  std::vector<std::string> a = words(compiled), b = words(described);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i])
    ++i;
  std::string side = "input";
  for (size_t k = 0; k < i && k < a.size(); ++k)
    if (a[k] == "outputs")
      side = "output";
  auto word = [&](const std::vector<std::string> &w) {
    return i < w.size() ? (w[i] == "outputs" ? "the end of the inputs" : w[i])
                        : std::string("the end of the outputs");
  };
  if (i == 0)
    return "was compiled for entry " + a.front() + ", not " + b.front();
  return "was compiled for " + side + " " + word(a) +
         " where the plan describes " + word(b) +
         " (plan.json was edited; recompile the plan)";
}
