#pragma once

// Internals of the timers. Not part of the public API.

#include <cstddef>
#include <utility>
#include <vector>

namespace cronwheel::common::detail {

// A binary min-heap whose elements are told where they are, so that any of them can be
// removed in O(log n) without a search: the hierarchical wheel's delay queue of buckets, and the
// heap of timeouts of the binary-heap timer the benchmarks compare the wheels with (tests/bench).
//
// `Order` provides
//   bool earlier(const T& a, const T& b) const;  // a strict weak order; the front is earliest
//   void placed(const T& item, std::size_t index) const;
// placed() is called whenever an element lands at a position, and with kRemoved when it
// leaves the heap; its element stores the position for remove().
//
// Not thread-safe: its owner serializes every call.
template <class T, class Order>
class IndexedHeap {
 public:
  static constexpr std::size_t kRemoved = static_cast<std::size_t>(-1);

  explicit IndexedHeap(Order order) : order_(std::move(order)) {}

  bool empty() const noexcept { return items_.empty(); }
  std::size_t size() const noexcept { return items_.size(); }
  const T& front() const noexcept { return items_.front(); }
  void reserve(std::size_t n) { items_.reserve(n); }

  // Throws what growing the array throws (nothing once reserve() made room), and then leaves
  // the heap as it was.
  void push(const T& item) {
    items_.push_back(item);
    sift_up(items_.size() - 1);
  }

  // Removes the element at position `i`.
  void remove(std::size_t i) noexcept {
    order_.placed(items_[i], kRemoved);
    const std::size_t last = items_.size() - 1;
    if (i == last) {
      items_.pop_back();
      return;
    }
    items_[i] = items_[last];
    items_.pop_back();
    if (i > 0 && order_.earlier(items_[i], items_[(i - 1) / 2])) {
      sift_up(i);
    } else {
      sift_down(i);
    }
  }

  // Empties the heap and returns its elements in no particular order; placed() is not told.
  std::vector<T> take_all() noexcept { return std::exchange(items_, {}); }
  // Empties the heap, keeping the array's capacity; placed() is not told.
  void clear() noexcept { items_.clear(); }

 private:
  void set(std::size_t i, const T& item) noexcept {
    items_[i] = item;
    order_.placed(item, i);
  }

  void sift_up(std::size_t i) noexcept {
    const T moving = items_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!order_.earlier(moving, items_[parent])) break;
      set(i, items_[parent]);
      i = parent;
    }
    set(i, moving);
  }

  void sift_down(std::size_t i) noexcept {
    const T moving = items_[i];
    const std::size_t n = items_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && order_.earlier(items_[child + 1], items_[child])) ++child;
      if (!order_.earlier(items_[child], moving)) break;
      set(i, items_[child]);
      i = child;
    }
    set(i, moving);
  }

  Order order_;
  std::vector<T> items_;
};

}  // namespace cronwheel::common::detail
