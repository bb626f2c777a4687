// Small bounded scanner for ibnetdiscover lines (internal to the parser). Never reads past the
// end pointer; every accessor reports failure instead of throwing.
#pragma once

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>

namespace loom::topo::ibnet {

class Cursor {
 public:
  Cursor(const char* b, const char* e) : p_(b), e_(e) {}
  bool done() const { return p_ >= e_; }
  char peek() const { return done() ? '\0' : *p_; }
  void skip(int n) { p_ = (e_ - p_ < n) ? e_ : p_ + n; }
  void ws() {
    while (!done() && (*p_ == ' ' || *p_ == '\t')) ++p_;
  }
  bool lit(char c) {
    if (peek() != c) return false;
    ++p_;
    return true;
  }
  std::string word() {
    const char* b = p_;
    while (!done() && *p_ != ' ' && *p_ != '\t') ++p_;
    return std::string(b, p_);
  }
  bool integer(int* out) {
    const char* b = p_;
    long v = 0;
    while (!done() && std::isdigit(static_cast<unsigned char>(*p_)) && p_ - b < 9) {
      v = v * 10 + (*p_++ - '0');
    }
    if (p_ == b) return false;
    *out = static_cast<int>(v);
    return true;
  }
  // [0x]<1..16 hex digits>
  bool hex(uint64_t* out) {
    if (e_ - p_ >= 2 && p_[0] == '0' && (p_[1] == 'x' || p_[1] == 'X')) p_ += 2;
    const char* b = p_;
    uint64_t v = 0;
    while (!done() && std::isxdigit(static_cast<unsigned char>(*p_))) {
      if (p_ - b >= 16) return false;
      char c = *p_++;
      v = v * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (c | 0x20) - 'a' + 10);
    }
    if (p_ == b) return false;
    *out = v;
    return true;
  }
  bool quoted(std::string* out, char q = '"') {
    if (!lit(q)) return false;
    const char* b = p_;
    while (!done() && *p_ != q) ++p_;
    if (done()) return false;
    *out = std::string(b, p_);
    ++p_;
    return true;
  }
  // After a port: optional "(<portguid>)" and optional "[ext N]" tags (chassis output).
  void skipGuidAndExt() {
    for (;;) {
      if (peek() == '(') {
        while (!done() && *p_ != ')') ++p_;
        lit(')');
      } else if (e_ - p_ >= 4 && p_[0] == '[' && !std::isdigit(static_cast<unsigned char>(p_[1]))) {
        while (!done() && *p_ != ']') ++p_;
        lit(']');
      } else {
        return;
      }
    }
  }
  // Next whitespace-separated token; a token starting with a quote runs to the closing quote.
  bool token(std::string_view* out) {
    ws();
    if (done()) return false;
    const char* b = p_;
    if (*p_ == '"') {
      ++p_;
      while (!done() && *p_ != '"') ++p_;
      if (!done()) ++p_;
    } else {
      while (!done() && *p_ != ' ' && *p_ != '\t') ++p_;
    }
    *out = std::string_view(b, p_ - b);
    return true;
  }
  // Scans the rest of the line for "lid <n>" (outside quotes); takes the first one.
  bool findLid(int* lid) {
    std::string_view t;
    while (token(&t)) {
      if (t == "lid") {
        ws();
        return integer(lid);
      }
    }
    return false;
  }
  // Scans the rest of the line for the last "<w>x<SPEED>" token, e.g. 4xHDR, 2xNDR, 4x???.
  void findRate(int* width, std::string* speed) {
    std::string_view t;
    while (token(&t)) {
      size_t i = 0;
      while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
      if (i == 0 || i > 2 || i + 1 >= t.size() || t[i] != 'x') continue;
      std::string_view sp = t.substr(i + 1);
      bool ok = true;
      for (char c : sp) {
        ok = ok && (std::isupper(static_cast<unsigned char>(c)) ||
                    std::isdigit(static_cast<unsigned char>(c)) || c == '?');
      }
      if (!ok) continue;
      *width = i == 1 ? t[0] - '0' : (t[0] - '0') * 10 + (t[1] - '0');
      speed->assign(sp.data(), sp.size());
    }
  }

 private:
  const char* p_;
  const char* e_;
};

// "S-0c42a10300b00003" -> 0x0c42a10300b00003 (also H-, R-); false for other ids.
inline bool guidFromId(const std::string& id, uint64_t* out) {
  if (id.size() < 3 || id[1] != '-' || (id[0] != 'S' && id[0] != 'H' && id[0] != 'R')) {
    return false;
  }
  Cursor c(id.data() + 2, id.data() + id.size());
  return c.hex(out) && c.done();
}

inline bool parseInt(const std::string& s, int* out) {
  Cursor c(s.data(), s.data() + s.size());
  return c.integer(out) && c.done();
}

// The -p form's lines start with SW, CA or RT and a LID.
inline bool looksLikePortForm(const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t e = text.find('\n', pos);
    if (e == std::string::npos) e = text.size();
    Cursor c(text.data() + pos, text.data() + e);
    c.ws();
    if (!c.done() && c.peek() != '#') {
      std::string w = c.word();
      c.ws();
      return (w == "SW" || w == "CA" || w == "RT") &&
             std::isdigit(static_cast<unsigned char>(c.peek()));
    }
    pos = e + 1;
  }
  return false;
}

}  // namespace loom::topo::ibnet
