#pragma once
/// A list that holds up to N values inline and spills to the heap only beyond: for the many
/// short lists of a large simulation (a rank's dependencies while a step is built, a flow's
/// route), where one heap block per list cost an allocation each and a pointer chase on every
/// read.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace clustersim {

template <class T, std::uint32_t N> class InlineVector {
public:
  InlineVector() = default;
  InlineVector(std::initializer_list<T> values)
  {
    for (const T& v : values)
      push_back(v);
  }
  InlineVector(const std::vector<T>& values) { insert(end(), values.data(), values.data() + values.size()); }

  std::size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const T* begin() const { return n_ <= N ? small_ : big_.data(); }
  const T* end() const { return begin() + n_; }
  T* begin() { return n_ <= N ? small_ : big_.data(); }
  T* end() { return begin() + n_; }
  const T* data() const { return begin(); }
  const T& operator[](std::size_t i) const { return begin()[i]; }
  void clear()
  {
    n_ = 0;
    big_.clear();
  }
  void push_back(const T& v)
  {
    if (n_ < N) {
      small_[n_++] = v;
      return;
    }
    if (n_ == N)
      big_.assign(small_, small_ + N);
    big_.push_back(v);
    ++n_;
  }
  /// Appends [first, last); `pos` must be end().
  void insert(const T* /*pos*/, const T* first, const T* last)
  {
    for (; first != last; ++first)
      push_back(*first);
  }
  bool operator==(const InlineVector& o) const { return std::equal(begin(), end(), o.begin(), o.end()); }

private:
  T small_[N] = {};
  std::uint32_t n_ = 0;
  std::vector<T> big_; ///< every value once there are more than N
};

} // namespace clustersim
