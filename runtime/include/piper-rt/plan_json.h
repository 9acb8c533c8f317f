//===- plan_json.h - The small JSON of the plan manifest ---------*- C++
//-*-===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// A compact JSON value, parser and printer for plan.json, so that the runtime
// reads its manifest without LLVM (llvm::json would make every training job
// carry LLVMSupport). It is written to agree byte for byte with llvm::json,
// which piper-compile used before: the same parse error messages and
// positions ("[2:0, byte=58]: Expected , or } after object property"),
// integers kept apart from doubles, doubles printed with %.17g, object keys
// printed sorted, and the same indented layout.
//
//===----------------------------------------------------------------------===//

#ifndef PIPER_RT_PLAN_JSON_H
#define PIPER_RT_PLAN_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace piper::plan::json {

class Value;
/// Members in insertion order (printed sorted by key).
using Object = std::vector<std::pair<std::string, Value>>;
using Array = std::vector<Value>;

/// One JSON value. Numbers keep whether they were written as integers.
class Value {
public:
  enum class Kind { Null, Bool, Integer, Double, String, Array, Object };

  Value() = default;
  Value(std::nullptr_t) {}
  Value(bool b) : kind_(Kind::Bool), bool_(b) {}
  Value(int v) : Value(static_cast<int64_t>(v)) {}
  Value(int64_t v) : kind_(Kind::Integer), int_(v) {}
  Value(double v) : kind_(Kind::Double), double_(v) {}
  Value(const char *s) : kind_(Kind::String), string_(s) {}
  Value(std::string s) : kind_(Kind::String), string_(std::move(s)) {}
  Value(json::Array a) : kind_(Kind::Array), array_(std::move(a)) {}
  Value(json::Object o) : kind_(Kind::Object), object_(std::move(o)) {}

  Kind kind() const { return kind_; }
  bool isNull() const { return kind_ == Kind::Null; }
  bool isNumber() const {
    return kind_ == Kind::Integer || kind_ == Kind::Double;
  }

  /// The value if it has that type (an integer also reads as a double, and
  /// an integral double in range as an integer, as llvm::json does).
  const bool *getBool() const { return kind_ == Kind::Bool ? &bool_ : nullptr; }
  bool getInteger(int64_t &out) const;
  bool getNumber(double &out) const;
  const std::string *getString() const {
    return kind_ == Kind::String ? &string_ : nullptr;
  }
  const json::Array *getArray() const {
    return kind_ == Kind::Array ? &array_ : nullptr;
  }
  json::Array *getArray() { return kind_ == Kind::Array ? &array_ : nullptr; }
  const json::Object *getObject() const {
    return kind_ == Kind::Object ? &object_ : nullptr;
  }
  json::Object *getObject() {
    return kind_ == Kind::Object ? &object_ : nullptr;
  }
  /// The member `key` of an object, or null.
  const Value *get(std::string_view key) const;

  bool operator==(const Value &other) const;
  bool operator!=(const Value &other) const { return !(*this == other); }

private:
  Kind kind_ = Kind::Null;
  bool bool_ = false;
  int64_t int_ = 0;
  double double_ = 0;
  std::string string_;
  json::Array array_;
  json::Object object_;
};

/// The deepest nesting of arrays and objects parse accepts
/// (docs/Limits.md); deeper documents are rejected before they can exhaust
/// the stack.
inline constexpr int kMaxDepth = 256;

/// Parses `text` (one JSON document, UTF-8). On failure returns false with
/// `error` as "[line:column, byte=offset]: message" (line from 1, column
/// from 0), llvm::json's wording.
bool parse(std::string_view text, Value &out, std::string &error);

/// Prints `value`; `indent` > 0 puts each member and element on its own line
/// indented by that many spaces per level (llvm::json's "{0:2}").
std::string print(const Value &value, unsigned indent = 0);

} // namespace piper::plan::json

#endif // PIPER_RT_PLAN_JSON_H
