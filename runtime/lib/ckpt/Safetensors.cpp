//===- Safetensors.cpp - The safetensors file format ----------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// huggingface/safetensors: an 8-byte little-endian header length N, N bytes
// of JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...,
// "__metadata__": {string: string}}, padded with spaces), then the data,
// offsets relative to its start, contiguous and without holes. Piper pads
// the header so that the data starts 8-byte aligned, as the reference
// writer does, so a reader may map the file and use the data in place.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/checkpoint.h"

#include <cerrno>
#include <cstring>
#include <fstream>

using namespace piper;
using namespace piper::ckpt;
using plan::json::Array;
using plan::json::Object;
using plan::json::Value;

const char *piper::ckpt::stDTypeName(plan::DType dtype) {
  switch (dtype) {
  case plan::DType::F32:
    return "F32";
  case plan::DType::F64:
    return "F64";
  case plan::DType::I64:
    return "I64";
  case plan::DType::BF16:
    return "BF16";
  case plan::DType::Other:
    break;
  }
  return "";
}

std::string piper::ckpt::stHeader(
    const std::vector<StEntry> &entries,
    const std::vector<std::pair<std::string, std::string>> &metadata) {
  Object root;
  if (!metadata.empty()) {
    Object meta;
    for (const auto &[key, value] : metadata)
      meta.push_back({key, value});
    root.push_back({"__metadata__", std::move(meta)});
  }
  for (const StEntry &e : entries) {
    Array shape;
    for (int64_t d : e.shape)
      shape.push_back(d);
    root.push_back({e.name, Object{{"dtype", stDTypeName(e.dtype)},
                                   {"shape", std::move(shape)},
                                   {"data_offsets", Array{e.begin, e.end}}}});
  }
  std::string json = plan::json::print(root);
  while ((8 + json.size()) % 8 != 0)
    json += ' ';
  uint64_t n = json.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>((n >> (8 * i)) & 0xFF);
  return out + json;
}

namespace {

bool parseEntry(const std::string &name, const Value &v, int64_t base,
                StEntry &e, std::string &why) {
  e.name = name;
  const Value *dtype = v.get("dtype"), *shape = v.get("shape"),
              *offsets = v.get("data_offsets");
  if (!dtype || !dtype->getString() || !shape || !shape->getArray() ||
      !offsets || !offsets->getArray() || offsets->getArray()->size() != 2) {
    why = "tensor '" + name + "' lacks dtype, shape or data_offsets";
    return false;
  }
  e.dtype = plan::DType::Other;
  for (plan::DType d : {plan::DType::F32, plan::DType::F64, plan::DType::I64,
                        plan::DType::BF16})
    if (*dtype->getString() == stDTypeName(d))
      e.dtype = d;
  for (const Value &d : *shape->getArray()) {
    int64_t x = 0;
    if (!d.getInteger(x) || x < 0) {
      why = "tensor '" + name + "' has a bad shape";
      return false;
    }
    e.shape.push_back(x);
  }
  int64_t begin = 0, end = 0;
  if (!(*offsets->getArray())[0].getInteger(begin) ||
      !(*offsets->getArray())[1].getInteger(end) || begin < 0 || end < begin) {
    why = "tensor '" + name + "' has bad data_offsets";
    return false;
  }
  e.begin = base + begin;
  e.end = base + end;
  return true;
}

} // namespace

bool piper::ckpt::stReadHeader(const std::string &path,
                               std::vector<StEntry> &entries,
                               std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot read " + path + ": " + std::strerror(errno);
    return false;
  }
  unsigned char size[8] = {};
  in.read(reinterpret_cast<char *>(size), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i)
    n = (n << 8) | size[i];
  // The reference implementation caps headers at 100 MB.
  if (!in || n > (100u << 20)) {
    error = path + ": not a safetensors file (bad header length)";
    return false;
  }
  std::string json(n, '\0');
  in.read(json.data(), static_cast<std::streamsize>(n));
  Value root;
  std::string why;
  if (!in || !plan::json::parse(json, root, why) || !root.getObject()) {
    error = path + ": not a safetensors file (" +
            (why.empty() ? "truncated header" : why) + ")";
    return false;
  }
  entries.clear();
  for (const auto &[name, value] : *root.getObject()) {
    if (name == "__metadata__")
      continue;
    StEntry e;
    if (!parseEntry(name, value, static_cast<int64_t>(8 + n), e, why)) {
      error = path + ": " + why;
      return false;
    }
    entries.push_back(std::move(e));
  }
  return true;
}
