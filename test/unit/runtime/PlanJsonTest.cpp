//===- PlanJsonTest.cpp - The runtime's small JSON ------------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The parser and printer against hand-written expectations and against
// llvm::json itself (which piper-compile and piper-run used before): the same
// text must print to the same bytes and fail with the same message.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_json.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include "gtest/gtest.h"

using namespace piper::plan;

namespace {

std::string parseError(const std::string &text) {
  json::Value v;
  std::string error;
  EXPECT_FALSE(json::parse(text, v, error)) << text;
  return error;
}

std::string llvmParseError(const std::string &text) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
  EXPECT_FALSE(static_cast<bool>(v)) << text;
  return v ? std::string() : llvm::toString(v.takeError());
}

std::string reprint(const std::string &text, unsigned indent) {
  json::Value v;
  std::string error;
  EXPECT_TRUE(json::parse(text, v, error)) << error;
  return json::print(v, indent);
}

std::string llvmReprint(const std::string &text, unsigned indent) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(text);
  EXPECT_TRUE(static_cast<bool>(v));
  if (!v) {
    llvm::consumeError(v.takeError());
    return "";
  }
  return indent ? llvm::formatv("{0:2}", *v).str()
                : llvm::formatv("{0}", *v).str();
}

TEST(PlanJson, ScalarsKeepTheirKind) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(
      json::parse("[3, -7, 3.0, 0.1, 1e300, true, null, \"s\"]", v, error))
      << error;
  const json::Array &a = *v.getArray();
  ASSERT_EQ(a.size(), 8u);
  EXPECT_EQ(a[0].kind(), json::Value::Kind::Integer);
  EXPECT_EQ(a[1].kind(), json::Value::Kind::Integer);
  EXPECT_EQ(a[2].kind(), json::Value::Kind::Double);
  int64_t i = 0;
  // An integral double reads as an integer; 0.1 does not.
  EXPECT_TRUE(a[2].getInteger(i));
  EXPECT_EQ(i, 3);
  EXPECT_FALSE(a[3].getInteger(i));
  double d = 0;
  EXPECT_TRUE(a[1].getNumber(d));
  EXPECT_EQ(d, -7.0);
  EXPECT_TRUE(a[4].getNumber(d));
  EXPECT_EQ(d, 1e300);
  EXPECT_TRUE(*a[5].getBool());
  EXPECT_TRUE(a[6].isNull());
  EXPECT_EQ(*a[7].getString(), "s");
  EXPECT_FALSE(a[7].getNumber(d));
}

TEST(PlanJson, StringEscapesDecode) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(json::parse(R"("a\"b\\c\/d\n\t\r\b\f\u00e9\ud83d\ude00\u0001")",
                          v, error))
      << error;
  EXPECT_EQ(*v.getString(), "a\"b\\c/d\n\t\r\b\f\xc3\xa9\xf0\x9f\x98\x80\x01");
  // Printed back as llvm::json prints it.
  EXPECT_EQ(json::print(v), R"("a\"b\\c/d\n\t\r\u0008\u000c)"
                            "\xc3\xa9\xf0\x9f\x98\x80"
                            R"(\u0001")");
}

TEST(PlanJson, PrintsLikeLLVM) {
  const char *docs[] = {
      R"({"z": [1, 2, {"b": [], "a": {}}], "a": 0.1, "m": "x\ny", "e": [[]],
          "n": null, "t": true, "d": 2.5e-8, "big": 12345678901234, "neg": -3,
          "w": 1.0, "q": "\u00e9"})",
      "[]", "{}", "3", "[1.5, [2, [3]], {\"k\": [{}]}]"};
  for (const char *doc : docs) {
    EXPECT_EQ(reprint(doc, 2), llvmReprint(doc, 2)) << doc;
    EXPECT_EQ(reprint(doc, 0), llvmReprint(doc, 0)) << doc;
  }
}

TEST(PlanJson, ErrorsSayWhereAsLLVMDoes) {
  // piper-run's run-errors.mlir test: an object cut off at a newline.
  EXPECT_EQ(parseError("{\"format\": \"piper-plan\", \"version\": 1, "
                       "\"function\": \"step\"\n"),
            "[2:0, byte=58]: Expected , or } after object property");
  const char *bad[] = {
      "",    "[1, 2", "[1 2]", "{\"a\" 1}", "{a: 1}",        "tru",
      "nul", "fals",  "\"abc", "\"\\q\"",   "\"\\u12\"",     "\"a\x01\"",
      "-",   "1.2.3", "1 2",   "{\"a\": }", "[1,\n 2,\n x]", "\xff"};
  for (const char *text : bad)
    EXPECT_EQ(parseError(text), llvmParseError(text)) << text;
}

TEST(PlanJson, RepeatedKeyKeepsTheLast) {
  json::Value v;
  std::string error;
  ASSERT_TRUE(json::parse(R"({"a": 1, "a": 2})", v, error));
  int64_t a = 0;
  ASSERT_TRUE(v.get("a")->getInteger(a));
  EXPECT_EQ(a, 2);
  EXPECT_EQ(v.getObject()->size(), 1u);
}

TEST(PlanJson, EqualityIgnoresKeyOrder) {
  json::Value a, b, c;
  std::string error;
  ASSERT_TRUE(json::parse(R"({"x": [1, 2.5], "y": {"z": "s"}})", a, error));
  ASSERT_TRUE(json::parse(R"({"y": {"z": "s"}, "x": [1, 2.5]})", b, error));
  ASSERT_TRUE(json::parse(R"({"y": {"z": "t"}, "x": [1, 2.5]})", c, error));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  // 1 and 1.0 are different values to the schema (integer vs number).
  EXPECT_NE(json::Value(int64_t(1)), json::Value(1.0));
}

} // namespace
