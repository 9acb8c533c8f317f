//===- Json.cpp - The small JSON of the plan manifest ---------------------===//
//
// Part of the Piper project, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// The parser follows llvm::json's grammar and error reporting step by step
// (where the cursor stands when an error is reported, and its wording), so
// that piper-run's messages for a broken plan.json did not change when the
// runtime took over reading it. The printer follows llvm::json::OStream.
//
//===----------------------------------------------------------------------===//

#include "piper-rt/plan_json.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

using namespace piper::plan::json;

bool Value::getInteger(int64_t &out) const {
  if (kind_ == Kind::Integer) {
    out = int_;
    return true;
  }
  // An integral double in range, as llvm::json::Value::getAsInteger.
  double whole = 0;
  if (kind_ == Kind::Double && std::modf(double_, &whole) == 0.0 &&
      whole >= static_cast<double>(std::numeric_limits<int64_t>::min()) &&
      whole <= static_cast<double>(std::numeric_limits<int64_t>::max())) {
    out = static_cast<int64_t>(whole);
    return true;
  }
  return false;
}

bool Value::getNumber(double &out) const {
  if (kind_ == Kind::Double)
    out = double_;
  else if (kind_ == Kind::Integer)
    out = static_cast<double>(int_);
  else
    return false;
  return true;
}

const Value *Value::get(std::string_view key) const {
  if (kind_ != Kind::Object)
    return nullptr;
  for (const auto &[name, value] : object_)
    if (name == key)
      return &value;
  return nullptr;
}

bool Value::operator==(const Value &other) const {
  if (kind_ != other.kind_)
    return false;
  switch (kind_) {
  case Kind::Null:
    return true;
  case Kind::Bool:
    return bool_ == other.bool_;
  case Kind::Integer:
    return int_ == other.int_;
  case Kind::Double:
    return double_ == other.double_;
  case Kind::String:
    return string_ == other.string_;
  case Kind::Array:
    return array_ == other.array_;
  case Kind::Object: {
    // Members compare as sets: the order of keys carries no meaning.
    if (object_.size() != other.object_.size())
      return false;
    for (const auto &[key, value] : object_) {
      const Value *theirs = other.get(key);
      if (!theirs || *theirs != value)
        return false;
    }
    return true;
  }
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {

class Parser {
public:
  explicit Parser(std::string_view text)
      : start(text.data()), p(text.data()), end(text.data() + text.size()) {}

  bool parseDocument(Value &out) {
    if (!checkUTF8() || !parseValue(out))
      return false;
    eatWhitespace();
    return p == end || fail("Text after end of document");
  }
  const std::string &error() const { return message; }

private:
  const char *start, *p, *end;
  std::string message;
  /// Arrays and objects open around the cursor. Parsing recurses once per
  /// level, so a hostile file nested 50,000 deep would overflow the stack:
  /// deeper than kMaxDepth is an error (plan.json nests 5 levels).
  int depth = 0;

  /// The next character, consumed; 0 at the end (which does not move).
  char next() { return p == end ? 0 : *p++; }
  char peek() const { return p == end ? 0 : *p; }
  void eatWhitespace() {
    while (p != end && (*p == ' ' || *p == '\r' || *p == '\n' || *p == '\t'))
      ++p;
  }
  static bool isNumberChar(char c) {
    return (c >= '0' && c <= '9') || c == 'e' || c == 'E' || c == '+' ||
           c == '-' || c == '.';
  }

  /// Records `what` at the cursor: line from 1, column from 0.
  bool fail(const char *what) {
    int line = 1;
    const char *lineStart = start;
    for (const char *x = start; x < p; ++x)
      if (*x == '\n') {
        ++line;
        lineStart = x + 1;
      }
    message = "[" + std::to_string(line) + ":" + std::to_string(p - lineStart) +
              ", byte=" + std::to_string(p - start) + "]: " + what;
    return false;
  }

  bool checkUTF8();
  bool parseValue(Value &out);
  bool parseArray(Value &out);
  bool parseObject(Value &out);
  bool parseString(std::string &out);
  bool parseUnicode(std::string &out);
  bool parseNumber(char first, Value &out);
  bool parseLiteral(const char *rest, Value value, const char *what,
                    Value &out);
};

/// Rejects text that is not UTF-8, at the first bad byte.
bool Parser::checkUTF8() {
  for (const char *x = start; x < end;) {
    unsigned char c = static_cast<unsigned char>(*x);
    int extra = c < 0x80         ? 0
                : (c >> 5) == 6  ? 1
                : (c >> 4) == 14 ? 2
                : (c >> 3) == 30 ? 3
                                 : -1;
    bool ok = extra >= 0 && end - x > extra;
    for (int k = 1; ok && k <= extra; ++k)
      ok = (static_cast<unsigned char>(x[k]) >> 6) == 2;
    if (!ok) {
      p = x;
      return fail("Invalid UTF-8 sequence");
    }
    x += extra + 1;
  }
  return true;
}

bool Parser::parseLiteral(const char *rest, Value value, const char *what,
                          Value &out) {
  for (const char *c = rest; *c; ++c)
    if (next() != *c)
      return fail(what);
  out = std::move(value);
  return true;
}

bool Parser::parseValue(Value &out) {
  eatWhitespace();
  if (p == end)
    return fail("Unexpected EOF");
  switch (char c = next()) {
  case 'n':
    return parseLiteral("ull", Value(), "Invalid JSON value (null?)", out);
  case 't':
    return parseLiteral("rue", Value(true), "Invalid JSON value (true?)", out);
  case 'f':
    return parseLiteral("alse", Value(false), "Invalid JSON value (false?)",
                        out);
  case '"': {
    std::string s;
    if (!parseString(s))
      return false;
    out = Value(std::move(s));
    return true;
  }
  case '[':
  case '{': {
    if (depth == kMaxDepth) {
      --p;
      return fail("Nesting deeper than 256 levels");
    }
    ++depth;
    bool ok = c == '[' ? parseArray(out) : parseObject(out);
    --depth;
    return ok;
  }
  default:
    if (isNumberChar(c))
      return parseNumber(c, out);
    return fail("Invalid JSON value");
  }
}

bool Parser::parseArray(Value &out) {
  out = Value(Array{});
  Array &array = *out.getArray();
  eatWhitespace();
  if (peek() == ']') {
    ++p;
    return true;
  }
  for (;;) {
    array.emplace_back();
    if (!parseValue(array.back()))
      return false;
    eatWhitespace();
    switch (next()) {
    case ',':
      eatWhitespace();
      continue;
    case ']':
      return true;
    default:
      return fail("Expected , or ] after array element");
    }
  }
}

bool Parser::parseObject(Value &out) {
  out = Value(Object{});
  Object &object = *out.getObject();
  eatWhitespace();
  if (peek() == '}') {
    ++p;
    return true;
  }
  for (;;) {
    if (next() != '"')
      return fail("Expected object key");
    std::string key;
    if (!parseString(key))
      return false;
    eatWhitespace();
    if (next() != ':')
      return fail("Expected : after object key");
    eatWhitespace();
    // A repeated key replaces the earlier value, as in llvm::json.
    auto it = std::find_if(object.begin(), object.end(),
                           [&](const auto &m) { return m.first == key; });
    if (it == object.end())
      it = object.insert(object.end(), {std::move(key), Value()});
    if (!parseValue(it->second))
      return false;
    eatWhitespace();
    switch (next()) {
    case ',':
      eatWhitespace();
      continue;
    case '}':
      return true;
    default:
      return fail("Expected , or } after object property");
    }
  }
}

/// The string after its opening quote.
bool Parser::parseString(std::string &out) {
  for (char c = next(); c != '"'; c = next()) {
    if (p == end)
      return fail("Unterminated string");
    if ((c & 0x1f) == c)
      return fail("Control character in string");
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    switch (c = next()) {
    case '"':
    case '\\':
    case '/':
      out.push_back(c);
      break;
    case 'b':
      out.push_back('\b');
      break;
    case 'f':
      out.push_back('\f');
      break;
    case 'n':
      out.push_back('\n');
      break;
    case 'r':
      out.push_back('\r');
      break;
    case 't':
      out.push_back('\t');
      break;
    case 'u':
      if (!parseUnicode(out))
        return false;
      break;
    default:
      return fail("Invalid escape sequence");
    }
  }
  return true;
}

void appendUTF8(uint32_t code, std::string &out) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

/// \uXXXX after the "\u", with UTF-16 surrogate pairs; a lone surrogate
/// becomes U+FFFD, as in llvm::json.
bool Parser::parseUnicode(std::string &out) {
  auto hex4 = [&](uint32_t &value) {
    value = 0;
    for (int k = 0; k < 4; ++k) {
      char c = next();
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= c - '0';
      else if (c >= 'a' && c <= 'f')
        value |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        value |= c - 'A' + 10;
      else
        return false;
    }
    return true;
  };
  uint32_t first = 0;
  if (!hex4(first))
    return fail("Invalid \\u escape sequence");
  for (;;) {
    if (first < 0xD800 || first >= 0xE000) {
      appendUTF8(first, out);
      return true;
    }
    if (first >= 0xDC00 || end - p < 6 || p[0] != '\\' || p[1] != 'u') {
      appendUTF8(0xFFFD, out); // a lone surrogate
      return true;
    }
    p += 2;
    uint32_t second = 0;
    if (!hex4(second))
      return fail("Invalid \\u escape sequence");
    if (second < 0xDC00 || second >= 0xE000) {
      appendUTF8(0xFFFD, out);
      first = second; // the second escape still needs to be decoded
      continue;
    }
    appendUTF8(0x10000 | ((first - 0xD800) << 10) | (second - 0xDC00), out);
    return true;
  }
}

bool Parser::parseNumber(char first, Value &out) {
  std::string s(1, first);
  while (isNumberChar(peek()))
    s.push_back(next());
  char *stop = nullptr;
  errno = 0;
  long long integer = std::strtoll(s.c_str(), &stop, 10);
  if (stop == s.c_str() + s.size() && errno != ERANGE) {
    out = Value(static_cast<int64_t>(integer));
    return true;
  }
  double d = std::strtod(s.c_str(), &stop);
  if (stop != s.c_str() + s.size())
    return fail("Invalid JSON value (number?)");
  out = Value(d);
  return true;
}

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

void quote(const std::string &s, std::string &out) {
  out.push_back('"');
  for (unsigned char c : s) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    if (c >= 0x20) {
      out.push_back(static_cast<char>(c));
      continue;
    }
    out.push_back('\\');
    if (c == '\t') {
      out.push_back('t');
    } else if (c == '\n') {
      out.push_back('n');
    } else if (c == '\r') {
      out.push_back('r');
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "u%04x", c);
      out += hex;
    }
  }
  out.push_back('"');
}

void printValue(const Value &value, unsigned indent, unsigned depth,
                std::string &out) {
  auto newline = [&](unsigned level) {
    if (!indent)
      return;
    out.push_back('\n');
    out.append(static_cast<size_t>(indent) * level, ' ');
  };
  switch (value.kind()) {
  case Value::Kind::Null:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += *value.getBool() ? "true" : "false";
    return;
  case Value::Kind::Integer: {
    int64_t i = 0;
    value.getInteger(i);
    out += std::to_string(i);
    return;
  }
  case Value::Kind::Double: {
    double d = 0;
    value.getNumber(d);
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", d);
    out += text;
    return;
  }
  case Value::Kind::String:
    quote(*value.getString(), out);
    return;
  case Value::Kind::Array: {
    const Array &array = *value.getArray();
    out.push_back('[');
    for (size_t i = 0; i < array.size(); ++i) {
      if (i)
        out.push_back(',');
      newline(depth + 1);
      printValue(array[i], indent, depth + 1, out);
    }
    if (!array.empty())
      newline(depth);
    out.push_back(']');
    return;
  }
  case Value::Kind::Object: {
    std::vector<const Object::value_type *> members;
    for (const auto &member : *value.getObject())
      members.push_back(&member);
    std::sort(members.begin(), members.end(),
              [](const auto *a, const auto *b) { return a->first < b->first; });
    out.push_back('{');
    for (size_t i = 0; i < members.size(); ++i) {
      if (i)
        out.push_back(',');
      newline(depth + 1);
      quote(members[i]->first, out);
      out += indent ? ": " : ":";
      printValue(members[i]->second, indent, depth + 1, out);
    }
    if (!members.empty())
      newline(depth);
    out.push_back('}');
    return;
  }
  }
}

} // namespace

bool piper::plan::json::parse(std::string_view text, Value &out,
                              std::string &error) {
  Parser parser(text);
  if (parser.parseDocument(out))
    return true;
  error = parser.error();
  return false;
}

std::string piper::plan::json::print(const Value &value, unsigned indent) {
  std::string out;
  printValue(value, indent, 0, out);
  return out;
}
