#include "common/timer/node_pool.h"

#include <algorithm>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define CRONWHEEL_POISON(addr, size) ASAN_POISON_MEMORY_REGION(addr, size)
#define CRONWHEEL_UNPOISON(addr, size) ASAN_UNPOISON_MEMORY_REGION(addr, size)
#else
#define CRONWHEEL_POISON(addr, size) ((void)(addr), (void)(size))
#define CRONWHEEL_UNPOISON(addr, size) ((void)(addr), (void)(size))
#endif

namespace cronwheel::common::detail {

namespace {

// Chunks start on a cache line; the header takes the first one.
constexpr std::size_t kChunkAlign = 64;
constexpr std::size_t kChunkHeader = 64;

std::size_t round_up(std::size_t n, std::size_t align) { return (n + align - 1) & ~(align - 1); }

}  // namespace

NodePool::NodePool(std::size_t slot_size, std::size_t slot_align) noexcept
    : slot_size_(round_up(std::max(slot_size, sizeof(FreeSlot)),
                          std::max(slot_align, alignof(FreeSlot)))) {}

NodePool::~NodePool() {
  for (Chunk* chunk = chunks_; chunk != nullptr;) {
    Chunk* next = chunk->next;
    ::operator delete(static_cast<void*>(chunk), std::align_val_t{kChunkAlign});
    chunk = next;
  }
}

void* NodePool::allocate() {
  if (free_ == nullptr) free_ = returned_.exchange(nullptr, std::memory_order_acquire);
  if (free_ != nullptr) {
    FreeSlot* slot = free_;
    CRONWHEEL_UNPOISON(slot, slot_size_);
    free_ = slot->next;
    return slot;
  }
  if (bump_ == bump_end_) grow();
  void* slot = bump_;
  bump_ += slot_size_;
  ++carved_;
  CRONWHEEL_UNPOISON(slot, slot_size_);
  return slot;
}

void NodePool::deallocate(void* p) noexcept {
  auto* slot = static_cast<FreeSlot*>(p);
  // Before publishing it: the link stays readable for allocate(), the rest is off limits
  // until the slot is handed out again.
  CRONWHEEL_POISON(reinterpret_cast<char*>(slot) + sizeof(FreeSlot),
                   slot_size_ - sizeof(FreeSlot));
  slot->next = returned_.load(std::memory_order_relaxed);
  while (!returned_.compare_exchange_weak(slot->next, slot, std::memory_order_acq_rel,
                                          std::memory_order_relaxed)) {
  }
}

void NodePool::grow() {
  const std::size_t bytes = kChunkHeader + next_chunk_slots_ * slot_size_;
  void* memory = ::operator new(bytes, std::align_val_t{kChunkAlign});
  auto* chunk = static_cast<Chunk*>(memory);
  chunk->next = chunks_;
  chunks_ = chunk;
  bump_ = static_cast<char*>(memory) + kChunkHeader;
  bump_end_ = bump_ + next_chunk_slots_ * slot_size_;
  CRONWHEEL_POISON(bump_, bump_end_ - bump_);
  next_chunk_slots_ = std::min(next_chunk_slots_ * 2, kMaxChunkSlots);
}

}  // namespace cronwheel::common::detail
