// A small JSON reader for trace files: values as a tree, except that the caller can stream the
// elements of one big array (a trace's traceEvents) one at a time instead of holding them all.
// Errors throw dag::error with the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace plait::dag {

struct error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct value {
  enum class kind { null, boolean, number, string, array, object } k = kind::null;
  bool b = false;
  double num = 0;
  bool is_int = false;   // an integer literal: exact in u
  std::uint64_t u = 0;
  std::string str;
  std::vector<value> arr;
  std::vector<std::string> keys;  // an object: keys[i] -> vals[i] (a vector of pairs would need
  std::vector<value> vals;        // value complete here)

  const value* get(std::string_view key) const {
    if (k != kind::object) return nullptr;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == key) return &vals[i];
    return nullptr;
  }
  bool is_number() const { return k == kind::number; }
};

class reader {
 public:
  explicit reader(std::string_view text) : s_(text) {}

  value parse_value();
  // Streaming: after '[' of an array, next_element returns false at its ']'.
  void expect(char c);
  bool next_element(bool first);
  // Object streaming: reads the next key (false at '}').
  bool next_key(bool first, std::string* key);
  void skip_ws() {
    while (p_ < s_.size() && (s_[p_] == ' ' || s_[p_] == '\n' || s_[p_] == '\r' || s_[p_] == '\t')) ++p_;
  }
  bool at_end() {
    skip_ws();
    return p_ == s_.size();
  }
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::string parse_string();
  value parse_number();
  std::string_view s_;
  std::size_t p_ = 0;
  int depth_ = 0;
};

}  // namespace plait::dag
