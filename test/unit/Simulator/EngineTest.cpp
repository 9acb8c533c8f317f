//===- EngineTest.cpp - The simulation engine on hand-built programs ------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The engine's rules one at a time, on programs small enough to time by
// hand: streams in order, events, rendezvous, overlapped pairs (and one that
// starts alone), SM shares,
// communication slowed by the SMs left to it, interference, deadlock.
//
//===----------------------------------------------------------------------===//

#include "piper/Simulator/Engine.h"

#include "gtest/gtest.h"

using namespace piper::sim;

namespace {

Instr compute(std::string name, double work, double share = 0) {
  Instr i;
  i.kind = Instr::Kind::Launch;
  i.name = i.category = std::move(name);
  Segment s;
  s.work = work;
  s.share = share;
  i.segments.push_back(s);
  return i;
}

Instr comm(std::string name, double fixed, double work, double share,
           int rendezvous = -1) {
  Instr i;
  i.kind = Instr::Kind::Comm;
  i.name = i.category = std::move(name);
  i.rendezvous = rendezvous;
  if (fixed > 0 || work > 0) {
    Segment s;
    s.kind = SegmentKind::Comm;
    s.fixed = fixed;
    s.work = work;
    s.share = share;
    i.segments.push_back(s);
  }
  return i;
}

Instr event(Instr::Kind kind, long e) {
  Instr i;
  i.kind = kind;
  i.event = e;
  return i;
}

/// Makes `a` (at `aAt` on stream `aStream`) and `b` an overlapped pair.
void pair(Instr &a, int aStream, int aAt, Instr &b, int bStream, int bAt) {
  a.partnerStream = bStream;
  a.partnerInstr = bAt;
  b.partnerStream = aStream;
  b.partnerInstr = aAt;
}

double endOf(const Trace &t, const std::string &name) {
  for (const Span &s : t.spans)
    if (!s.isSegment && s.name == name)
      return s.end;
  ADD_FAILURE() << "no span " << name;
  return -1;
}

TEST(Engine, StreamsRunInOrderAndEventsOrderThem) {
  Problem p;
  p.programs.push_back(
      {"a",
       {{"compute",
         {compute("x", 2), event(Instr::Kind::Record, 0), compute("y", 1)}},
        {"side", {event(Instr::Kind::Wait, 0), comm("c", 0, 3, 0)}}}});
  Trace t = simulate(p);
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_EQ(endOf(t, "x"), 2);
  // c needs a tenth of the SMs (its floor); y gets the rest while both run.
  EXPECT_DOUBLE_EQ(endOf(t, "c"), 5);
  EXPECT_GT(endOf(t, "y"), 3);
}

TEST(Engine, SendWaitsForItsReceive) {
  Problem p;
  p.rendezvous = {2};
  p.programs.push_back({"a", {{"s", {comm("send", 1, 2, 0.1, 0)}}}});
  p.programs.push_back(
      {"b", {{"s", {compute("late", 5), comm("recv", 0, 0, 0, 0)}}}});
  Trace t = simulate(p);
  ASSERT_TRUE(t.error.empty()) << t.error;
  // b computes on another... no: one stream, so the receive is posted at 5.
  EXPECT_DOUBLE_EQ(endOf(t, "send"), 8);
  EXPECT_DOUBLE_EQ(endOf(t, "recv"), 8);
}

TEST(Engine, OverlappedPairStartsTogetherAndSharesTheDevice) {
  Problem p;
  Instr f = compute("F", 1), b = compute("BI", 1);
  pair(f, 0, 0, b, 1, 1);
  p.programs.push_back(
      {"a", {{"overlap", {f}}, {"compute", {compute("W0", 2), b}}}});
  Trace t = simulate(p);
  ASSERT_TRUE(t.error.empty()) << t.error;
  // F waits for BI's stream to reach it at 2; both then run at half speed.
  EXPECT_EQ(endOf(t, "F"), 4);
  EXPECT_EQ(endOf(t, "BI"), 4);
}

TEST(Engine, APairWhosePartnerCannotStartFirstStartsAlone) {
  // BI (compute, paired with F) must start before W, and F waits for an
  // event recorded after W: F cannot start before BI. BI starts alone at 0,
  // W runs 1-3, F alone 3-4.
  Problem p;
  Instr f = compute("F", 1), b = compute("BI", 1);
  pair(f, 0, 1, b, 1, 0);
  p.programs.push_back(
      {"a",
       {{"overlap", {event(Instr::Kind::Wait, 0), f}},
        {"compute", {b, compute("W", 2), event(Instr::Kind::Record, 0)}}}});
  Trace t = simulate(p);
  ASSERT_TRUE(t.error.empty()) << t.error;
  EXPECT_EQ(endOf(t, "BI"), 1);
  EXPECT_EQ(endOf(t, "W"), 3);
  EXPECT_EQ(endOf(t, "F"), 4);
}

TEST(Engine, SMSharesRunSideBySide) {
  Problem p;
  p.programs.push_back(
      {"a", {{"x", {compute("F", 1, 0.5)}}, {"y", {compute("B", 1, 0.25)}}}});
  Trace t = simulate(p);
  EXPECT_EQ(endOf(t, "F"), 2);
  EXPECT_EQ(endOf(t, "B"), 4);
}

TEST(Engine, CommunicationSlowsWithTheSMsLeftToIt) {
  // Reservations of 0.9 leave 0.1 of the device to a collective that needs
  // 0.2 for full bandwidth: half speed.
  Problem p;
  p.programs.push_back(
      {"a", {{"x", {compute("F", 10, 0.9)}}, {"c", {comm("ar", 0, 1, 0.2)}}}});
  Trace t = simulate(p);
  EXPECT_DOUBLE_EQ(endOf(t, "ar"), 2);
}

TEST(Engine, InterferenceSlowsUnreservedCompute) {
  Problem p;
  p.interference = 0.5;
  p.programs.push_back(
      {"a", {{"x", {compute("F", 1)}}, {"c", {comm("ar", 0, 10, 0.0)}}}});
  Trace t = simulate(p);
  // F gets 1 - 0.02 (the collective's floor) at half speed.
  EXPECT_NEAR(endOf(t, "F"), 1 / (0.98 * 0.5), 1e-12);
}

TEST(Engine, ReportsADeadlock) {
  Problem p;
  p.programs.push_back({"a", {{"s", {event(Instr::Kind::Wait, 3)}}}});
  Trace t = simulate(p);
  EXPECT_EQ(t.error, "deadlock: stream \"s\" of @a never gets past ''");
}

TEST(Engine, UnionAndOverlap) {
  EXPECT_EQ(unionLength({{0, 2}, {1, 3}, {5, 6}}), 4);
  EXPECT_EQ(overlapLength({{0, 2}, {4, 6}}, {{1, 5}}), 2);
}

} // namespace
