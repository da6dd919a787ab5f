#pragma once
/// A growable array of trivially copyable values for the step's per-task arrays.
///
/// A step at 16k GPUs holds about 40 M tasks (1.6 GB). std::vector grows by copying into a new
/// block of 4 KiB pages, each a fault on first touch: in this virtual machine the faults alone
/// were a tenth of a contended 16k-GPU step. Small arrays grow with realloc(); past
/// kMappedBytes an array lives in its own mapping advised to transparent huge pages (a fault per
/// 2 MiB) and grows by copying into a larger one. (Advising realloc's blocks instead was slower:
/// glibc moves them with mremap, which splits the huge pages it moves to unaligned addresses.)

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace clustersim {

/// Asks the kernel to back [p, p + bytes) with transparent huge pages where it is at least one
/// huge page long (Linux's default policy, `madvise`, gives them only where asked). A step at
/// 16k GPUs touches about 3 GB of task arrays once each: in 4 KiB pages that was a fault per
/// page and an eighth of the run in the kernel; in 2 MiB pages it is 512 times fewer faults.
/// Only advice: where the kernel refuses, nothing changes but the speed.
inline void advise_huge_pages(const void* p, std::size_t bytes)
{
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  if (bytes < 2 * kHuge)
    return;
  const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (end > begin)
    ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

/// v = n copies of `value`, its block advised huge before it is first touched.
template <class V> void assign_huge(V& v, std::size_t n, const typename V::value_type& value)
{
  V().swap(v);
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(typename V::value_type));
  v.assign(n, value);
}

template <class T> class PodVector {
  static_assert(std::is_trivially_copyable_v<T>, "PodVector moves its values with realloc");

public:
  using value_type = T;
  using const_iterator = const T*;
  using iterator = T*;

  PodVector() = default;
  ~PodVector() { release(); }
  PodVector(const PodVector& o) { copy_from(o); }
  PodVector(PodVector&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), cap_(std::exchange(o.cap_, 0)),
        mapped_(std::exchange(o.mapped_, 0))
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
      release();
      data_ = std::exchange(o.data_, nullptr);
      size_ = std::exchange(o.size_, 0);
      cap_ = std::exchange(o.cap_, 0);
      mapped_ = std::exchange(o.mapped_, 0);
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
  /// Arrays at least this large get their own huge-page mapping.
  static constexpr std::size_t kMappedBytes = std::size_t{64} << 20;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  void grow(std::size_t n)
  {
    if (n > static_cast<std::size_t>(-1) / sizeof(T))
      throw std::bad_alloc();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kMappedBytes) {
      void* p = std::realloc(static_cast<void*>(data_), bytes);
      if (!p)
        throw std::bad_alloc();
      data_ = static_cast<T*>(p);
      cap_ = n;
      return;
    }
    // a mapping's pages are zeroed when first written, not when mapped: eight times the
    // capacity costs address space only, and the copies an array is zeroed and written into
    // on its way to n elements fall from twice n (doubling) to 8/7 n
    const std::size_t want = cap_ <= (static_cast<std::size_t>(-1) / sizeof(T)) / 8 ? std::max(bytes, cap_ * sizeof(T) * 8) : bytes;
    std::size_t length = (want + kHugePage - 1) / kHugePage * kHugePage;
    void* p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED && want > bytes) {
      length = (bytes + kHugePage - 1) / kHugePage * kHugePage;
      p = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    }
    if (p == MAP_FAILED)
      throw std::bad_alloc();
    advise_huge_pages(p, length);
    if (size_)
      std::memcpy(p, static_cast<const void*>(data_), size_ * sizeof(T));
    release();
    data_ = static_cast<T*>(p);
    mapped_ = length;
    cap_ = length / sizeof(T);
  }
  void release()
  {
    if (mapped_)
      ::munmap(static_cast<void*>(data_), mapped_);
    else
      std::free(data_);
    data_ = nullptr;
    mapped_ = 0;
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
  std::size_t mapped_ = 0; ///< bytes of data_'s own mapping; 0: data_ is malloc's
};

} // namespace clustersim
