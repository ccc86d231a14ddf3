#include "json.hpp"

#include <charconv>
#include <cstdlib>

namespace plait::dag {

void reader::fail(const std::string& what) const {
  throw error(what + " at byte " + std::to_string(p_) + (p_ >= s_.size() ? " (the file ends there: truncated?)" : ""));
}

void reader::expect(char c) {
  skip_ws();
  if (p_ >= s_.size() || s_[p_] != c) fail(std::string("expected '") + c + "'");
  ++p_;
}

bool reader::next_element(bool first) {
  skip_ws();
  if (p_ < s_.size() && s_[p_] == ']') {
    ++p_;
    return false;
  }
  if (!first) expect(',');
  return true;
}

bool reader::next_key(bool first, std::string* key) {
  skip_ws();
  if (p_ < s_.size() && s_[p_] == '}') {
    ++p_;
    return false;
  }
  if (!first) expect(',');
  skip_ws();
  if (p_ >= s_.size() || s_[p_] != '"') fail("expected a key");
  *key = parse_string();
  expect(':');
  return true;
}

std::string reader::parse_string() {
  ++p_;  // the opening quote
  std::string out;
  for (;;) {
    if (p_ >= s_.size()) fail("unterminated string");
    char c = s_[p_++];
    if (c == '"') return out;
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (p_ >= s_.size()) fail("unterminated string");
    char e = s_[p_++];
    switch (e) {
      case '"': out.push_back('"'); break;
      case '\\': out.push_back('\\'); break;
      case '/': out.push_back('/'); break;
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        if (p_ + 4 > s_.size()) fail("bad \\u escape");
        unsigned v = 0;
        auto r = std::from_chars(s_.data() + p_, s_.data() + p_ + 4, v, 16);
        if (r.ptr != s_.data() + p_ + 4) fail("bad \\u escape");
        p_ += 4;
        if (v < 0x80) {
          out.push_back(static_cast<char>(v));
        } else if (v < 0x800) {
          out.push_back(static_cast<char>(0xc0 | (v >> 6)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3f)));
        } else {
          out.push_back(static_cast<char>(0xe0 | (v >> 12)));
          out.push_back(static_cast<char>(0x80 | ((v >> 6) & 0x3f)));
          out.push_back(static_cast<char>(0x80 | (v & 0x3f)));
        }
        break;
      }
      default: fail("bad escape");
    }
  }
}

value reader::parse_number() {
  value v;
  v.k = value::kind::number;
  const std::size_t b = p_;
  bool integral = true;
  if (p_ < s_.size() && s_[p_] == '-') ++p_, integral = false;
  while (p_ < s_.size()) {
    char c = s_[p_];
    if (c >= '0' && c <= '9') {
      ++p_;
    } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
      integral = false;
      ++p_;
    } else {
      break;
    }
  }
  if (p_ == b) fail("expected a value");
  const char* first = s_.data() + b;
  const char* last = s_.data() + p_;
  if (integral) {
    auto r = std::from_chars(first, last, v.u);
    if (r.ptr == last && r.ec == std::errc()) {
      v.is_int = true;
      v.num = static_cast<double>(v.u);
      return v;
    }
  }
  std::string tmp(first, last);
  char* end = nullptr;
  v.num = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size()) fail("bad number");
  return v;
}

value reader::parse_value() {
  skip_ws();
  if (p_ >= s_.size()) fail("expected a value");
  if (++depth_ > 200) fail("nested too deeply");
  value v;
  char c = s_[p_];
  if (c == '{') {
    ++p_;
    v.k = value::kind::object;
    std::string key;
    for (bool first = true; next_key(first, &key); first = false) {
      v.keys.push_back(key);
      v.vals.push_back(parse_value());
    }
  } else if (c == '[') {
    ++p_;
    v.k = value::kind::array;
    for (bool first = true; next_element(first); first = false) v.arr.push_back(parse_value());
  } else if (c == '"') {
    v.k = value::kind::string;
    v.str = parse_string();
  } else if (s_.substr(p_, 4) == "true") {
    v.k = value::kind::boolean, v.b = true, p_ += 4;
  } else if (s_.substr(p_, 5) == "false") {
    v.k = value::kind::boolean, p_ += 5;
  } else if (s_.substr(p_, 4) == "null") {
    p_ += 4;
  } else {
    v = parse_number();
  }
  --depth_;
  return v;
}

}  // namespace plait::dag
