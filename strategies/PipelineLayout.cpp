#include "strategies/PipelineLayout.hpp"

#include <cctype>
#include <stdexcept>

namespace clustersim {
namespace {

/// Megatron's layout language expanded to a flat string of E, t, m, L and '|'.
class LayoutParser {
public:
  explicit LayoutParser(const std::string& text) : s_(text) {}

  std::string expand()
  {
    std::string out = sequence(0);
    if (pos_ != s_.size())
      fail("unexpected '" + std::string(1, s_[pos_]) + "'");
    return out;
  }

private:
  static constexpr std::size_t kMaxSymbols = 1 << 20;

  [[noreturn]] void fail(const std::string& what) const
  {
    throw std::invalid_argument("pipeline_layout '" + s_ + "': " + what + " at character " + std::to_string(pos_ + 1));
  }

  void skip_space()
  {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_])))
      ++pos_;
  }

  /// `*n` after an element, 1 without.
  std::size_t repeat()
  {
    skip_space();
    if (pos_ >= s_.size() || s_[pos_] != '*')
      return 1;
    ++pos_;
    skip_space();
    std::size_t n = 0;
    const std::size_t start = pos_;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_])) && n <= kMaxSymbols)
      n = n * 10 + static_cast<std::size_t>(s_[pos_++] - '0');
    if (pos_ == start)
      fail("'*' needs a count");
    if (n == 0 || n > kMaxSymbols)
      fail("a repeat count from 1 to " + std::to_string(kMaxSymbols));
    return n;
  }

  std::string sequence(int depth)
  {
    if (depth > 16)
      fail("groups nested deeper than 16");
    std::string out;
    for (;;) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] == ')')
        return out;
      std::string element;
      const char c = s_[pos_];
      if (c == '(') {
        ++pos_;
        element = sequence(depth + 1);
        if (pos_ >= s_.size() || s_[pos_] != ')')
          fail("'(' without ')'");
        ++pos_;
      } else if (c == 'E' || c == 't' || c == 'm' || c == 'L' || c == '|') {
        element = std::string(1, c);
        ++pos_;
      } else {
        fail("unknown symbol '" + std::string(1, c) + "' (valid: E, t, m, L, |, *n, (...))");
      }
      const std::size_t n = repeat();
      if (out.size() + element.size() * n > kMaxSymbols)
        fail("more than " + std::to_string(kMaxSymbols) + " symbols");
      for (std::size_t i = 0; i < n; ++i)
        out += element;
    }
  }

  const std::string& s_;
  std::size_t pos_ = 0;
};

std::vector<VirtualStage> from_text(const std::string& text)
{
  const std::string flat = LayoutParser(text).expand();
  std::vector<VirtualStage> out(1);
  for (char c : flat) {
    VirtualStage& v = out.back();
    switch (c) {
    case '|':
      out.emplace_back();
      break;
    case 'E':
      v.embedding = true;
      break;
    case 't':
      ++v.layers;
      break;
    case 'm':
      ++v.mtp;
      break;
    default:
      v.loss = true;
      break;
    }
  }
  // a trailing '|' closes the last stage rather than opening an empty one
  if (out.size() > 1 && !out.back().embedding && out.back().layers == 0 && out.back().mtp == 0 && !out.back().loss)
    out.pop_back();
  return out;
}

/// `count` slots over `n` stages, the remainder to the middle ones (first and last lightest).
std::vector<int> split(int count, int n)
{
  std::vector<int> out(static_cast<std::size_t>(n), count / n);
  int rest = count % n;
  for (int i = 0; rest > 0; ++i, --rest)
    ++out[static_cast<std::size_t>(n <= 2 ? i % n : 1 + i % (n - 2))];
  return out;
}

std::vector<VirtualStage> build(const ModelSpec& m, const TrainingSpec& t, std::string* problem)
{
  const int V = t.pp * t.vpp;
  auto bad = [&](const std::string& why) {
    if (problem)
      *problem = why;
    return std::vector<VirtualStage>{};
  };
  std::vector<VirtualStage> v;
  if (!t.pipeline_layout.empty()) {
    try {
      v = from_text(t.pipeline_layout);
    } catch (const std::invalid_argument& e) {
      return bad(e.what());
    }
    if (static_cast<int>(v.size()) != V)
      return bad("pipeline_layout has " + std::to_string(v.size()) + " stages for pp*vpp = " + std::to_string(V));
    int layers = 0, mtp = 0, emb = 0, loss = 0;
    for (const auto& s : v) {
      layers += s.layers;
      mtp += s.mtp;
      emb += s.embedding ? 1 : 0;
      loss += s.loss ? 1 : 0;
    }
    if (layers != m.layers)
      return bad("pipeline_layout places " + std::to_string(layers) + " transformer layers of the model's " +
                 std::to_string(m.layers));
    if (mtp != m.mtp_layers)
      return bad("pipeline_layout places " + std::to_string(mtp) + " MTP modules of the model's " +
                 std::to_string(m.mtp_layers));
    if (emb != 1 || !v.front().embedding)
      return bad("pipeline_layout needs the embedding E once, in the first stage");
    if (loss != 1 || !v.back().loss)
      return bad("pipeline_layout needs the loss L once, in the last stage");
  } else {
    const int slots = m.layers + (t.embedding_slot ? 1 : 0) + (t.loss_slot ? 1 : 0);
    if (V > slots)
      return bad("pp*vpp = " + std::to_string(V) + " stages exceed the " + std::to_string(slots) +
                 " layer slots (layers" + std::string(t.embedding_slot ? " + embedding" : "") +
                 (t.loss_slot ? " + loss" : "") + ")");
    std::vector<int> per = split(slots, V);
    v.resize(static_cast<std::size_t>(V));
    if (v.empty()) // pp and vpp are at least 1 (TrainingSpec); this keeps front() and back() defined
      return bad("pp*vpp = " + std::to_string(V) + " leaves no stage to place the layers in");
    for (int g = 0; g < V; ++g)
      v[static_cast<std::size_t>(g)].layers = per[static_cast<std::size_t>(g)];
    v.front().embedding = true;
    v.back().loss = true;
    v.back().mtp = m.mtp_layers;
    if (t.embedding_slot)
      --v.front().layers;
    if (t.loss_slot)
      --v.back().layers;
  }
  int first = 0;
  for (auto& s : v) {
    s.first_layer = first;
    first += s.layers;
    if (!s.embedding && s.layers == 0 && s.mtp == 0 && !s.loss)
      return bad("a pipeline stage holds nothing (no layer, embedding, MTP module or loss)");
  }
  return v;
}

} // namespace

std::vector<VirtualStage> pipeline_layout(const ModelSpec& m, const TrainingSpec& t)
{
  std::string problem;
  std::vector<VirtualStage> v = build(m, t, &problem);
  if (!problem.empty())
    throw std::invalid_argument(problem);
  return v;
}

std::optional<std::string> layout_problem(const ModelSpec& m, const TrainingSpec& t)
{
  std::string problem;
  build(m, t, &problem);
  if (problem.empty())
    return std::nullopt;
  return problem;
}

std::vector<int> layers_per_rank(const std::vector<VirtualStage>& v, int pp)
{
  std::vector<int> out(static_cast<std::size_t>(pp), 0);
  for (std::size_t g = 0; g < v.size(); ++g)
    out[g % static_cast<std::size_t>(pp)] += v[g].layers;
  return out;
}

std::string describe_pipeline(const std::vector<VirtualStage>& v, int pp)
{
  std::vector<int> per = layers_per_rank(v, pp);
  std::string out;
  for (int s = 0; s < pp; ++s) {
    if (s)
      out += " | ";
    bool emb = false, loss = false;
    int mtp = 0;
    for (std::size_t g = static_cast<std::size_t>(s); g < v.size(); g += static_cast<std::size_t>(pp)) {
      emb = emb || v[g].embedding;
      loss = loss || v[g].loss;
      mtp += v[g].mtp;
    }
    out += (emb ? "E " : "") + std::to_string(per[static_cast<std::size_t>(s)]) + (mtp ? " m" + std::to_string(mtp) : "") +
           (loss ? " L" : "");
  }
  return out;
}

} // namespace clustersim
