//===- ParamsFile.h - Initial parameter values from a file ------*- C++ -*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// `--params-in=FILE` of piper-interp and piper-run: every parameter's initial
// values read from a text in the format `--params-out` writes (one line per
// parameter: its name, then its values in row-major order, separated by
// blanks). The Python front end (python/piper) exports a module's own
// weights this way, so the first step starts from them instead of from the
// seeded initialisers of Init.h.
//
// Header-only and free of MLIR, like ByteCorpus.h, so the runtime side can
// use it.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_INTERPRETER_PARAMSFILE_H
#define PIPER_INTERPRETER_PARAMSFILE_H

#include "piper/Reference/Tensor.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace piper::ref {

struct ParamsFile {
  std::string path;
  /// Values by parameter name.
  std::map<std::string, std::vector<double>> values;

  /// Reads `path`; fails with the file and line on a malformed line or a
  /// name given twice.
  static Status load(const std::string &path, ParamsFile &out) {
    std::ifstream in(path);
    if (!in)
      return Status::error("cannot read the parameter file '" + path + "'");
    out.path = path;
    out.values.clear();
    std::string line;
    for (int lineNo = 1; std::getline(in, line); ++lineNo) {
      std::istringstream fields(line);
      std::string name, word;
      if (!(fields >> name))
        continue;
      std::vector<double> values;
      while (fields >> word) {
        char *end = nullptr;
        double v = std::strtod(word.c_str(), &end);
        if (end == word.c_str() || *end != '\0')
          return Status::error(path + ":" + std::to_string(lineNo) +
                               ": parameter '" + name + "' has the value '" +
                               word + "', which is not a number");
        values.push_back(v);
      }
      if (!out.values.emplace(name, std::move(values)).second)
        return Status::error(path + ":" + std::to_string(lineNo) +
                             ": parameter '" + name + "' is given twice");
    }
    return Status::success();
  }

  /// The values of parameter `name` of `shape`; fails if the file lacks it
  /// or holds another number of values.
  Status lookup(const std::string &name, const Shape &shape,
                Tensor &out) const {
    auto it = values.find(name);
    if (it == values.end())
      return Status::error("the parameter file '" + path +
                           "' has no values for parameter '" + name + "'");
    int64_t numel = numelOf(shape);
    if (static_cast<int64_t>(it->second.size()) != numel)
      return Status::error("the parameter file '" + path + "' has " +
                           std::to_string(it->second.size()) +
                           " values for parameter '" + name + "' of shape " +
                           shapeToString(shape) + " (" + std::to_string(numel) +
                           " elements)");
    Tensor t = Tensor::zeros(shape);
    t.data = it->second;
    out = std::move(t);
    return Status::success();
  }

  /// Fails if the file names a parameter that is not in `known`: a file
  /// written for another model must not half-apply.
  template <typename Names> Status checkAllKnown(const Names &known) const {
    for (const auto &entry : values)
      if (std::find(known.begin(), known.end(), entry.first) == known.end())
        return Status::error("the parameter file '" + path +
                             "' has values for '" + entry.first +
                             "', which is not a parameter of the model");
    return Status::success();
  }
};

} // namespace piper::ref

#endif // PIPER_INTERPRETER_PARAMSFILE_H
