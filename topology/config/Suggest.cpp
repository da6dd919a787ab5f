#include "topology/config/Suggest.hpp"

#include <algorithm>
#include <cstdio>

namespace clustersim {

namespace {

/// Length of the UTF-8 sequence starting at s[i] (1-4), or 0 when it is not valid there.
std::size_t utf8_length(const std::string& s, std::size_t i)
{
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned min = 0;
  if (c < 0x80)
    return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size())
    return 0;
  unsigned cp = c & (0x7F >> n);
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
    return 0; // overlong, beyond Unicode, or a surrogate
  return n;
}

} // namespace

std::size_t invalid_utf8_at(const std::string& s)
{
  for (std::size_t i = 0; i < s.size();) {
    std::size_t n = utf8_length(s, i);
    if (n == 0)
      return i;
    i += n;
  }
  return std::string::npos;
}

const char* invisible(const std::string& three)
{
  static const std::pair<const char*, const char*> marks[] = {{"\xEF\xBB\xBF", "<U+FEFF>"}, {"\xE2\x80\x8B", "<U+200B>"},
                                                              {"\xE2\x80\x8C", "<U+200C>"}, {"\xE2\x80\x8D", "<U+200D>"},
                                                              {"\xE2\x81\xA0", "<U+2060>"}};
  for (const auto& [bytes, shown] : marks)
    if (three == bytes)
      return shown;
  return nullptr;
}

std::string without_invisible(const std::string& s)
{
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i + 3 <= s.size() && invisible(s.substr(i, 3))) {
      i += 2;
      continue;
    }
    out += s[i];
  }
  return out;
}

std::string printable(const std::string& s)
{
  std::string out;
  out.reserve(s.size());
  char hex[8];
  for (std::size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = utf8_length(s, i);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (n == 0 || c < 0x20 || c == 0x7F) {
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
      n = 1;
    } else if (n == 3 && invisible(s.substr(i, 3))) {
      out += invisible(s.substr(i, 3)); // a byte order mark or a zero-width space, made visible
    } else {
      out.append(s, i, n);
    }
    i += n == 0 ? 1 : n;
  }
  return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b)
{
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates)
{
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  std::string best;
  std::size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    std::size_t d = edit_distance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& items, const std::string& sep)
{
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i)
      out += sep;
    out += items[i];
  }
  return out;
}

std::string unknown_name(const std::string& kind, const std::string& word, const std::vector<std::string>& candidates,
                         const std::string& context)
{
  std::string msg = "unknown " + kind + " '" + word + "'";
  if (!context.empty())
    msg += " in " + context;
  std::string guess = nearest(word, candidates);
  if (!guess.empty())
    msg += "; did you mean '" + guess + "'?";
  return msg;
}

} // namespace clustersim
