#pragma once

// Internals of the timers. Not part of the public API.

#include <atomic>
#include <cstddef>

namespace cronwheel::common::detail {

// Fixed-size slots for one timer's timeouts, carved from a few large chunks and recycled
// through a free list.
//
// Why not plain new/delete: expiry frees timeouts in bulk, and glibc's free() of a small
// chunk reads the allocator headers next to it, which for a timeout that was just expired
// are cold lines that nothing prefetched: at 1M pending that alone cost ~60 ns per expired
// timeout. A slot is freed by writing one pointer into the slot itself, which is already in
// cache. The slots are also denser (no per-allocation header), and a freshly freed slot is
// the next one handed out, still warm.
//
// Threads: allocate() is not thread-safe; its callers serialize it (the timer's mutex).
// deallocate() may run on any thread at any time (the last reference to a timeout can be
// dropped anywhere) and never blocks: it pushes onto a lock-free stack that allocate() takes
// whole when its private list runs dry, so no element is ever popped concurrently (no ABA).
//
// Memory: the pool keeps every chunk it carved until it is destroyed, that is until the timer
// and the last handle to any of its timeouts are gone: after a burst, the slots wait for the
// next one instead of going back to malloc. Chunks grow geometrically from 64 slots to
// kMaxChunkSlots, so the pool holds at most its peak number of live timeouts plus one chunk.
class NodePool {
 public:
  // Slots of `slot_size` bytes aligned to `slot_align` (a power of two, at most 64).
  NodePool(std::size_t slot_size, std::size_t slot_align) noexcept;
  // Every slot must have been returned.
  ~NodePool();
  NodePool(const NodePool&) = delete;
  NodePool& operator=(const NodePool&) = delete;

  // Uninitialized memory for one object. Throws std::bad_alloc. Callers serialize.
  void* allocate();
  // Gives back a slot from allocate() whose object is destroyed. Any thread, lock-free.
  void deallocate(void* slot) noexcept;

  // Slots carved from chunks so far (in use or free). Callers serialize, as for allocate().
  std::size_t capacity() const noexcept { return carved_; }

  static constexpr std::size_t kFirstChunkSlots = 64;
  static constexpr std::size_t kMaxChunkSlots = 16384;

 private:
  struct FreeSlot {
    FreeSlot* next;
  };
  struct Chunk {
    Chunk* next;
  };

  void grow();

  const std::size_t slot_size_;
  // Freed by any thread since allocate() last took them.
  std::atomic<FreeSlot*> returned_{nullptr};
  // Owned by the (serialized) allocating side.
  FreeSlot* free_ = nullptr;
  char* bump_ = nullptr;  // the uncarved rest of the newest chunk
  char* bump_end_ = nullptr;
  Chunk* chunks_ = nullptr;
  std::size_t next_chunk_slots_ = kFirstChunkSlots;
  std::size_t carved_ = 0;
};

}  // namespace cronwheel::common::detail
