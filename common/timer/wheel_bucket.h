#pragma once

// Internals of the wheels. Not part of the public API.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "common/timer/timeout_node.h"
#include "common/timer/timer.h"

namespace cronwheel::common::detail {

// How many entries ahead of the one being processed a bucket walk prefetches the timeout of.
// Far enough to cover a memory access with the work of the entries in between, near enough
// that the prefetched lines are still in L1 when their turn comes.
inline constexpr std::size_t kPrefetchDistance = 16;

// One bucket of a wheel: the entries of its timeouts, an array in placement order. `Entry` is
// TimeoutNode* (the hierarchical wheel) or a struct whose `node` member is one (the hashed
// wheel keeps its round count beside it). Each entry holds the bucket's reference to its
// timeout, and the timeout's wheel_slot says where the entry is. Owned by the wheel's worker.
//
// A cancelled timeout's entry becomes a tombstone (node null) rather than being swapped out:
// the walk skips it without touching a timeout, and the other entries keep their order.
// Tombstones at the end go at once; the others when they outnumber the live entries (at most
// two moves per tombstone), so a bucket never holds more than twice its live entries.
//
// Memory: an array keeps its capacity from one visit to the next unless it is over 4x the most
// it held meanwhile (and over 64 entries): the memory of a burst goes back at the visit after.
template <class Entry>
struct WheelBucket {
  static constexpr std::size_t kMinRetainedEntries = 64;
  static constexpr std::size_t kShrinkRatio = 4;
  // Positions fit in WheelSlot::index.
  static constexpr std::size_t kMaxEntries = std::numeric_limits<std::uint32_t>::max();

  static TimeoutNode* node_of(const Entry& entry) noexcept {
    if constexpr (std::is_same_v<Entry, TimeoutNode*>) {
      return entry;
    } else {
      return entry.node;
    }
  }

  // Appends `entry`, whose timeout is pending and in no bucket, and records in the timeout
  // that it sits here, in bucket `id`. False, and nothing changed, when the array cannot grow.
  bool add(const Entry& entry, std::uint32_t id) noexcept {
    if (entries.size() >= kMaxEntries) return false;
    try {
      entries.push_back(entry);
    } catch (...) {
      return false;
    }
    const auto size = static_cast<std::uint32_t>(entries.size());
    peak = std::max(peak, size);
    node_of(entry)->wheel_slot = WheelSlot{id, size - 1};
    return true;
  }

  // Starts fetching what remove() will touch for the entry at `index`.
  void prefetch(std::uint32_t index) const noexcept {
    __builtin_prefetch(entries.data() + index, 1, 3);
    __builtin_prefetch(entries.data() + entries.size() - 1, 0, 3);
  }

  // Turns the entry of the cancelled `node`, which sits here, into a tombstone. The bucket's
  // reference becomes the caller's.
  void remove(TimeoutNode& node) noexcept {
    tombstone(entries[node.wheel_slot.index]);
    node.wheel_slot.bucket = WheelSlot::kNoBucket;
    ++tombstones;
    while (!entries.empty() && node_of(entries.back()) == nullptr) {
      entries.pop_back();
      --tombstones;
    }
    if (2 * std::size_t{tombstones} > entries.size()) compact();
  }

  // Drops the tombstones, keeping the order of the rest.
  void compact() noexcept {
    Entry* data = entries.data();
    const std::size_t n = entries.size();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (i + kPrefetchDistance < n && kept != i) {
        if (const TimeoutNode* ahead = node_of(data[i + kPrefetchDistance])) prefetch_whole(ahead);
      }
      const Entry entry = data[i];
      TimeoutNode* node = node_of(entry);
      if (node == nullptr) continue;
      if (kept != i) {
        node->wheel_slot.index = static_cast<std::uint32_t>(kept);
        data[kept] = entry;
      }
      ++kept;
    }
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(kept), entries.end());
    tombstones = 0;
  }

  // Ends a visit that kept the first `kept` entries (moved down over the tombstones and the
  // expired ones) and took the rest: drops the rest and gives back the memory of a burst.
  void finish_visit(std::size_t kept) noexcept {
    entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(kept), entries.end());
    tombstones = 0;
    if (entries.capacity() > kMinRetainedEntries &&
        entries.capacity() > kShrinkRatio * std::size_t{peak}) {
      if (entries.empty()) {
        std::vector<Entry>().swap(entries);
      } else {
        try {
          entries.shrink_to_fit();
        } catch (...) {
          // Keeping the larger array is fine.
        }
      }
    }
    peak = static_cast<std::uint32_t>(kept);
  }

  // For stop(), after the worker is gone: empties the bucket; every timeout still pending goes
  // into `unprocessed`.
  void surrender(std::vector<TimerHandle>& unprocessed) {
    for (const Entry& entry : entries) {
      TimeoutNode* node = node_of(entry);
      if (node == nullptr) continue;
      node->wheel_slot.bucket = WheelSlot::kNoBucket;
      keep_if_pending(node, unprocessed);
    }
    entries.clear();
    tombstones = 0;
  }

  std::size_t live() const noexcept { return entries.size() - tombstones; }

  std::vector<Entry> entries;
  std::uint32_t tombstones = 0;  // entries whose node is null
  std::uint32_t peak = 0;        // largest size since the last visit

 private:
  static void tombstone(Entry& entry) noexcept {
    if constexpr (std::is_same_v<Entry, TimeoutNode*>) {
      entry = nullptr;
    } else {
      entry.node = nullptr;
    }
  }
};

// Consumes a cancellation list taken from a WheelCore (linked through cancel_next, each entry
// holding a reference). A timeout still in a bucket (`bucket_of(id)` finds it) leaves a
// tombstone there, `removed(bucket)` is told, and both the bucket's and the list's references
// go. A timeout not in a bucket (still in the backlog) loses the list's reference only: the
// backlog drops it when it reaches the front. The entries are scattered over the buckets, so
// those a few cancellations ahead are fetched first and the misses overlap instead of queueing
// behind each release.
template <class BucketOf, class Removed>
void retire_cancelled(TimeoutNode* head, BucketOf&& bucket_of, Removed&& removed) noexcept {
  auto prefetch = [&](const TimeoutNode& node) {
    if (node.wheel_slot.bucket == WheelSlot::kNoBucket) return;
    bucket_of(node.wheel_slot.bucket).prefetch(node.wheel_slot.index);
  };
  TimeoutNode* ahead = head;
  for (std::size_t k = 0; k < kPrefetchDistance && ahead != nullptr; ++k) {
    prefetch(*ahead);
    ahead = ahead->cancel_next;
  }
  for (TimeoutNode* node = head; node != nullptr;) {
    TimeoutNode* next = node->cancel_next;
    if (ahead != nullptr) {
      prefetch(*ahead);
      ahead = ahead->cancel_next;
    }
    if (node->wheel_slot.bucket != WheelSlot::kNoBucket) {
      auto& bucket = bucket_of(node->wheel_slot.bucket);
      bucket.remove(*node);
      removed(bucket);
      node->release(2);  // the bucket's reference and the cancellation list's
    } else {
      node->release();  // the cancellation list's reference
    }
    node = next;
  }
}

}  // namespace cronwheel::common::detail
