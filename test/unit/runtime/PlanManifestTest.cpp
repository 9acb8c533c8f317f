//===- PlanManifestTest.cpp - plan.json: schema, writer, reader, layout ---===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_manifest.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

using namespace piper::plan;

namespace {

/// A plan on mesh (dp=2, ep=2): a whole parameter, a ZeRO-sharded one with
/// its state, an expert weight split over ep, data, and their results.
Manifest sample() {
  Manifest m;
  m.function = "step";
  m.source = "moe.mlir";
  m.mesh = {"mesh", {{"dp", 2}, {"ep", 2}}};
  m.optimizer = Optimizer{"adamw", 0.001};
  m.batchAxes = {"dp", "ep"};
  m.communicators = {{{"dp"}, "grad"}, {{"dp", "ep"}, "grad"}};
  Tensor w;
  w.index = 0;
  w.kind = "param";
  w.dtype = DType::F32;
  w.shape = {3, 5};
  w.name = "w";
  w.init = "normal";
  w.std = 0.02;
  Tensor z = w;
  z.index = 1;
  z.name = "z";
  z.init = "zeros";
  z.std.reset();
  z.shape = {7};
  z.shard = Shard{{"dp", "ep"}, 4, 2};
  Tensor m1 = z;
  m1.index = 2;
  m1.kind = "state";
  m1.name.reset();
  m1.param = "z";
  m1.slot = "m";
  Tensor e = w;
  e.index = 3;
  e.name = "experts";
  e.shape = {4, 2, 3};
  e.split = {Split{0, {"ep"}, 2}};
  Tensor x;
  x.index = 4;
  x.kind = "data";
  x.dtype = DType::I64;
  x.shape = {2, 8};
  x.bound = 256;
  m.arguments = {w, z, m1, e, x};
  Tensor loss;
  loss.index = 0;
  loss.kind = "loss";
  loss.dtype = DType::F32;
  Tensor zNew = z;
  zNew.index = 1;
  zNew.name.reset();
  zNew.init.reset();
  zNew.updates = 1;
  m.results = {loss, zNew};
  Role r;
  r.program = "device";
  r.object = "device.so";
  r.entry = "piper_entry_device";
  r.inputs = {0, 1, 2, 3, 4};
  r.outputs = {0, 1};
  r.launches = {"fwd", "bwd"};
  r.streams = {"compute", "grad"};
  m.roles = {r};
  return m;
}

llvm::json::Array llvmStrings(const std::vector<std::string> &list) {
  llvm::json::Array a;
  for (const std::string &s : list)
    a.push_back(s);
  return a;
}

/// The sample as piper-compile's buildManifest wrote it with llvm::json.
std::string llvmText(const Manifest &m) {
  auto tensor = [](const Tensor &t) {
    llvm::json::Array shape;
    for (int64_t d : t.shape)
      shape.push_back(d);
    llvm::json::Object o{{"index", t.index},
                         {"kind", t.kind},
                         {"dtype", dtypeName(t.dtype)},
                         {"shape", std::move(shape)}};
    if (t.name)
      o["name"] = *t.name;
    if (t.init)
      o["init"] = *t.init;
    if (t.std)
      o["std"] = *t.std;
    if (t.param)
      o["param"] = *t.param;
    if (t.slot)
      o["slot"] = *t.slot;
    if (t.bound)
      o["bound"] = *t.bound;
    if (t.updates)
      o["updates"] = *t.updates;
    if (t.shard)
      o["shard"] = llvm::json::Object{{"axes", llvmStrings(t.shard->axes)},
                                      {"members", t.shard->members},
                                      {"chunk", t.shard->chunk}};
    if (!t.split.empty()) {
      llvm::json::Array dims;
      for (const Split &s : t.split)
        dims.push_back(llvm::json::Object{
            {"dim", s.dim}, {"axes", llvmStrings(s.axes)}, {"parts", s.parts}});
      o["split"] = std::move(dims);
    }
    return o;
  };
  llvm::json::Object o{{"format", "piper-plan"},
                       {"version", 1},
                       {"function", m.function},
                       {"source", m.source}};
  llvm::json::Array axes, comms, args, results, roles;
  for (const MeshAxis &a : m.mesh.axes)
    axes.push_back(llvm::json::Object{{"name", a.name}, {"size", a.size}});
  o["mesh"] =
      llvm::json::Object{{"name", m.mesh.name}, {"axes", std::move(axes)}};
  o["batch_axes"] = llvmStrings(m.batchAxes);
  for (const Communicator &c : m.communicators)
    comms.push_back(llvm::json::Object{{"axes", llvmStrings(c.axes)},
                                       {"stream", c.stream}});
  o["communicators"] = std::move(comms);
  o["optimizer"] =
      llvm::json::Object{{"kind", m.optimizer->kind}, {"lr", m.optimizer->lr}};
  for (const Tensor &t : m.arguments)
    args.push_back(tensor(t));
  for (const Tensor &t : m.results)
    results.push_back(tensor(t));
  o["arguments"] = std::move(args);
  o["results"] = std::move(results);
  for (const Role &r : m.roles) {
    llvm::json::Object coords;
    for (const auto &[axis, c] : r.role)
      coords[axis] = c;
    llvm::json::Array in, out;
    for (int64_t i : r.inputs)
      in.push_back(i);
    for (int64_t j : r.outputs)
      out.push_back(j);
    roles.push_back(llvm::json::Object{{"program", r.program},
                                       {"role", std::move(coords)},
                                       {"object", r.object},
                                       {"entry", r.entry},
                                       {"inputs", std::move(in)},
                                       {"outputs", std::move(out)},
                                       {"launches", llvmStrings(r.launches)},
                                       {"streams", llvmStrings(r.streams)}});
  }
  o["roles"] = std::move(roles);
  return llvm::formatv("{0:2}", llvm::json::Value(std::move(o))).str() + "\n";
}

std::string readError(const std::string &text) {
  Manifest m;
  std::string error;
  EXPECT_FALSE(readManifest(text, "P/plan.json", m, error)) << text;
  return error;
}

/// The sample's text with `from` replaced by `to` (once).
std::string edited(const std::string &from, const std::string &to) {
  std::string text = writeManifest(sample());
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

TEST(PlanManifest, WritesWhatPiperCompileWrote) {
  Manifest m = sample();
  m.roles[0].role = {{"dp", 0}};
  EXPECT_EQ(writeManifest(m), llvmText(m));
}

TEST(PlanManifest, RoundTrips) {
  Manifest m = sample(), back;
  m.roles[0].role = {{"ep", 1}};
  std::string error;
  ASSERT_TRUE(readManifest(writeManifest(m), "plan.json", back, error))
      << error;
  EXPECT_EQ(back, m);
  EXPECT_EQ(writeManifest(back), writeManifest(m));
  // A change anywhere is seen.
  back.arguments[1].shard->chunk = 3;
  EXPECT_FALSE(back == m);
}

TEST(PlanManifest, LoadsFromADirectory) {
  std::string dir = ::testing::TempDir() + "piper-plan-XXXXXX";
  ASSERT_NE(mkdtemp(dir.data()), nullptr);
  std::ofstream(dir + "/plan.json") << writeManifest(sample());
  Manifest m;
  std::string error;
  ASSERT_TRUE(loadManifest(dir, m, error)) << error;
  EXPECT_EQ(m, sample());
  EXPECT_FALSE(loadManifest(dir + "/missing", m, error));
  EXPECT_EQ(error, "cannot read plan " + dir +
                       "/missing/plan.json: No such file or directory");
}

TEST(PlanManifest, ReaderErrorsNameFileAndField) {
  EXPECT_EQ(readError("{\"format\": \"piper-plan\"\n"),
            "P/plan.json: [2:0, byte=24]: Expected , or } after object "
            "property");
  EXPECT_EQ(readError(R"({"format": "x", "version": 3})"),
            "P/plan.json: not a version 1 piper plan (format 'x', version 3)");
  EXPECT_EQ(readError("[]"), "P/plan.json: bad manifest: expected object at "
                             "plan");
  EXPECT_EQ(readError(R"({"version": 1})"),
            "P/plan.json: bad manifest: missing value at plan.format");
  EXPECT_EQ(readError(edited("\"kind\": \"data\",", "")),
            "P/plan.json: bad manifest: missing value at "
            "plan.arguments[4].kind");
  EXPECT_EQ(readError(edited("\"index\": 3", "\"index\": \"3\"")),
            "P/plan.json: bad manifest: expected integer at "
            "plan.arguments[3].index");
  EXPECT_EQ(readError(edited("\"std\": 0.02", "\"std\": [0.02]")),
            "P/plan.json: bad manifest: expected number at "
            "plan.arguments[0].std");
  EXPECT_EQ(readError(edited("\"chunk\": 2", "\"chunk\": 1")),
            "P/plan.json: bad manifest: chunks do not cover the tensor at "
            "plan.arguments[1].shard");
  EXPECT_EQ(readError(edited("\"parts\": 2", "\"parts\": 3")),
            "P/plan.json: bad manifest: parts do not divide the dimension at "
            "plan.arguments[3].split[0]");
  EXPECT_EQ(readError(edited("\"dtype\": \"i64\"", "\"dtype\": \"q8\"")),
            "P/plan.json: bad manifest: unsupported dtype (f32, f64 or i64) "
            "at plan.arguments[4].dtype");
  EXPECT_EQ(readError(edited("\"roles\": [", "\"roles\": 3, \"x\": [")),
            "P/plan.json: bad manifest: expected an array at plan.roles");
  EXPECT_EQ(readError(edited("\"index\": 4", "\"index\": 9")),
            "P/plan.json: bad manifest: arguments must be listed by index at "
            "plan.arguments[4].index");
  EXPECT_EQ(readError(edited("\"outputs\": [\n        0,",
                             "\"outputs\": [\n        5,")),
            "P/plan.json: bad manifest: role output 5 is not a result at "
            "plan.roles[0].outputs[0]");
  EXPECT_EQ(readError(edited("\"size\": 2", "\"size\": 0")),
            "P/plan.json: bad manifest: an axis has at least one device at "
            "plan.mesh.axes[0].size");
}

// The SM shares of overlapped streams: written only when set, read back,
// and checked (a stream of the role, each in (0, 1], at most 1 together).
TEST(PlanManifest, SmShares) {
  Manifest m = sample(), back;
  EXPECT_EQ(writeManifest(m).find("sm_shares"), std::string::npos);
  m.roles[0].smShares = {{"compute", 0.5}, {"grad", 0.375}};
  std::string text = writeManifest(m), error;
  EXPECT_NE(text.find("\"sm_shares\": {\n        \"compute\": 0.5,\n"
                      "        \"grad\": 0.375\n      }"),
            std::string::npos)
      << text;
  ASSERT_TRUE(readManifest(text, "plan.json", back, error)) << error;
  EXPECT_EQ(back, m);
  back.roles[0].smShares["grad"] = 0.5;
  EXPECT_FALSE(back == m);

  auto withShares = [&](const std::string &shares) {
    std::string t = writeManifest(sample());
    std::string key = "\"streams\": [";
    return t.replace(t.find(key), 0, "\"sm_shares\": " + shares + ",\n");
  };
  EXPECT_TRUE(readManifest(withShares(R"({"compute": 0.5, "grad": 0.5})"),
                           "plan.json", back, error))
      << error;
  EXPECT_EQ(readError(withShares(R"({"compute_overlap": 0.5})")),
            "P/plan.json: bad manifest: 'compute_overlap' is not a stream of "
            "the role at plan.roles[0].sm_shares.compute_overlap");
  EXPECT_EQ(readError(withShares(R"({"compute": 0})")),
            "P/plan.json: bad manifest: an SM share is in (0, 1], not 0 at "
            "plan.roles[0].sm_shares.compute");
  EXPECT_EQ(readError(withShares(R"({"compute": 1.5})")),
            "P/plan.json: bad manifest: an SM share is in (0, 1], not 1.5 at "
            "plan.roles[0].sm_shares.compute");
  EXPECT_EQ(readError(withShares(R"({"compute": 0.75, "grad": 0.5})")),
            "P/plan.json: bad manifest: SM shares sum to 1.25, more than the "
            "device at plan.roles[0].sm_shares");
  EXPECT_EQ(readError(withShares(R"({"compute": "half"})")),
            "P/plan.json: bad manifest: expected number at "
            "plan.roles[0].sm_shares.compute");
  EXPECT_EQ(readError(withShares("[0.5]")),
            "P/plan.json: bad manifest: expected object at "
            "plan.roles[0].sm_shares");
}

TEST(PlanManifest, MeshCoordinatesAndGroups) {
  Mesh mesh = {"m", {{"pp", 2}, {"dp", 3}, {"tp", 2}}};
  EXPECT_EQ(mesh.numDevices(), 12);
  EXPECT_EQ(mesh.coords(0), (Coords{0, 0, 0}));
  EXPECT_EQ(mesh.coords(7), (Coords{1, 0, 1}));
  EXPECT_EQ(mesh.coords(11), (Coords{1, 2, 1}));
  // Mesh order, whatever order the axes are named in.
  EXPECT_EQ(mesh.indexAlong({1, 2, 1}, {"tp", "dp"}),
            (std::pair<int64_t, int64_t>{5, 6}));
  EXPECT_EQ(mesh.indexAlong({1, 2, 1}, {}),
            (std::pair<int64_t, int64_t>{0, 1}));
  EXPECT_TRUE(mesh.sameOutside({1, 2, 1}, {1, 0, 0}, {"dp", "tp"}));
  EXPECT_FALSE(mesh.sameOutside({1, 2, 1}, {0, 2, 1}, {"dp", "tp"}));
}

TEST(PlanManifest, ShardLayout) {
  Manifest m = sample();
  const Tensor &z = m.arguments[1]; // 7 elements in 4 chunks of 2
  EXPECT_EQ(z.heldShape(), std::vector<int64_t>{2});
  EXPECT_EQ(z.localNumel(), 2);
  // Rank 3 = (dp 1, ep 1): member 3 holds elements 6 and the padding.
  Coords c = m.mesh.coords(3);
  EXPECT_EQ(z.globalIndex(m.mesh, c, 0), 6);
  EXPECT_EQ(z.globalIndex(m.mesh, c, 1), -1);
  EXPECT_EQ(z.globalIndex(m.mesh, m.mesh.coords(1), 1), 3);
}

TEST(PlanManifest, SplitLayout) {
  Manifest m = sample();
  const Tensor &e = m.arguments[3]; // [4, 2, 3], dim 0 in 2 parts over ep
  EXPECT_EQ(e.localShape(), (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(e.localNumel(), 12);
  Coords c = m.mesh.coords(1); // dp 0, ep 1
  EXPECT_EQ(e.parts(m.mesh, c), std::vector<int64_t>{1});
  // Local [0, 0, 0] is global [2, 0, 0]; local [1, 1, 2] is global [3, 1, 2].
  EXPECT_EQ(e.globalIndex(m.mesh, c, 0), 12);
  EXPECT_EQ(e.globalIndex(m.mesh, c, 11), 23);
  EXPECT_EQ(e.globalIndexOfPart({0}, 11), 11);
  // Every element is held by exactly one part.
  std::vector<int> seen(e.numel(), 0);
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t i = 0; i < e.localNumel(); ++i)
      ++seen[e.globalIndexOfPart({p}, i)];
  EXPECT_EQ(seen, std::vector<int>(e.numel(), 1));
  // A whole tensor: local is global.
  EXPECT_EQ(m.arguments[0].globalIndex(m.mesh, c, 14), 14);
}

TEST(PlanManifest, SplitAndShardLayout) {
  // Megatron's distributed optimizer: [4, 2, 3] split on dim 0 over ep, and
  // the part (12 elements) ZeRO-sharded over dp in 2 chunks of 6.
  Manifest m = sample();
  Tensor e = m.arguments[3];
  e.shard = Shard{{"dp"}, 2, 6};
  EXPECT_EQ(e.heldShape(), std::vector<int64_t>{6});
  // Rank 3 = (dp 1, ep 1): part 1 (global rows 2 and 3), its second chunk:
  // local elements 6 .. 11 of the part, global [3, 0, 0] .. [3, 1, 2].
  Coords c = m.mesh.coords(3);
  EXPECT_EQ(e.globalIndex(m.mesh, c, 0), 18);
  EXPECT_EQ(e.globalIndex(m.mesh, c, 5), 23);
  // Every element is held by exactly one (part, chunk).
  std::vector<int> seen(e.numel(), 0);
  for (int64_t r = 0; r < m.mesh.numDevices(); ++r)
    for (int64_t i = 0; i < e.localNumel(); ++i)
      if (int64_t at = e.globalIndex(m.mesh, m.mesh.coords(r), i); at >= 0)
        ++seen[at];
  EXPECT_EQ(seen, std::vector<int>(e.numel(), 1));
  // The reader checks that the chunks cover the part, not the whole tensor.
  m.arguments[3] = e;
  Manifest back;
  std::string error;
  ASSERT_TRUE(readManifest(writeManifest(m), "plan.json", back, error))
      << error;
  EXPECT_EQ(back.arguments[3], e);
  m.arguments[3].shard->chunk = 5;
  EXPECT_FALSE(readManifest(writeManifest(m), "P/plan.json", back, error));
  EXPECT_EQ(error, "P/plan.json: bad manifest: chunks do not cover the "
                   "tensor at plan.arguments[3].shard");
}

TEST(PlanManifest, RolesAndLossRanks) {
  Manifest m = sample();
  m.mesh = {"m", {{"pp", 2}, {"dp", 2}, {"tp", 2}}};
  m.batchAxes = {"dp"};
  Role first = m.roles[0], last = m.roles[0];
  first.program = "stage0";
  first.role = {{"pp", 0}};
  first.outputs = {1};
  last.program = "stage1";
  last.role = {{"pp", 1}};
  m.roles = {first, last};
  std::vector<const Role *> roleOf;
  std::string error;
  ASSERT_TRUE(m.rolesOfRanks(roleOf, error)) << error;
  ASSERT_EQ(roleOf.size(), 8u);
  EXPECT_EQ(roleOf[3]->program, "stage0");
  EXPECT_EQ(roleOf[4]->program, "stage1");
  // The loss of stage 1, one per dp replica (tp copies are skipped).
  EXPECT_EQ(m.lossRanks(roleOf), (std::vector<int>{4, 6}));
  m.roles[1].role.clear();
  EXPECT_FALSE(m.rolesOfRanks(roleOf, error));
  EXPECT_EQ(error, "rank 0 matches roles stage0 and stage1");
  m.roles.pop_back();
  EXPECT_FALSE(m.rolesOfRanks(roleOf, error));
  EXPECT_EQ(error, "rank 4 has no role");
}

} // namespace
