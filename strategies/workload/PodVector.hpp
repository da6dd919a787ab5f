#pragma once
/// A growable array of trivially copyable values that grows with realloc().
///
/// A step at 16k GPUs holds about 27 M tasks (1.3 GB). std::vector grows by copying into a new
/// block, and the kernel hands each new block out page by page, zeroed on first touch: the
/// build paid for every page two times over and held two copies at the moment it grew. glibc's
/// realloc() moves a block that large by remapping its pages (mremap), without copying or
/// touching them again.

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace clustersim {

template <class T> class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "PodVector moves its values with realloc");

public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = T*;

  PodVector() = default;
  ~PodVector() { std::free(data_); }
  PodVector(const PodVector& o) { copy_from(o); }
  PodVector(PodVector&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0))
  {
  }
  PodVector& operator=(const PodVector& o)
  {
    if (this != &o) {
      size_ = 0;
      copy_from(o);
    }
    return *this;
  }
  PodVector& operator=(PodVector&& o) noexcept
  {
    if (this != &o) {
      std::free(data_);
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      cap_ = std::exchange(o.cap_, 0);
    }
    return *this;
  }

  std::size_t size() const { return size_; }
  std::size_t capacity() const { return cap_; }
  bool empty() const { return size_ == 0; }
  const T* data() const { return data_; }
  T* data() { return data_; }
  const T& operator[](std::size_t i) const { return data_[i]; }
  T& operator[](std::size_t i) { return data_[i]; }
  const T& back() const { return data_[size_ - 1]; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }

  void push_back(const T& v)
  {
    if (size_ == cap_)
      grow(cap_ < 16 ? 16 : cap_ * 2);
    std::memcpy(static_cast<void*>(data_ + size_), &v, sizeof(T));
    ++size_;
  }
  void reserve(std::size_t n)
  {
    if (n > cap_)
      grow(n);
  }
  void clear() { size_ = 0; }

private:
  void grow(std::size_t n)
  {
    void* p = std::realloc(static_cast<void*>(data_), n * sizeof(T));
    if (!p)
      throw std::bad_alloc();
    data_ = static_cast<T*>(p);
    cap_ = n;
  }
  void copy_from(const PodVector& o)
  {
    reserve(o.size_);
    if (o.size_)
      std::memcpy(static_cast<void*>(data_), o.data_, o.size_ * sizeof(T));
    size_ = o.size_;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t cap_ = 0;
};

} // namespace clustersim
