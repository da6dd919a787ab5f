#include "Suggest.hpp"

#include <algorithm>

namespace clustersim {

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
