// Raw buffers from nx's per-thread pools (ops/storage.cpp), for memory that
// is not a tensor's but must not be allocated per call either (the VM's
// register files of large frames).
#pragma once

#include <cstddef>

namespace nx::detail {

// At least `bytes`, 64-byte aligned; given back with the same `bytes`.
void* pooled_bytes(std::size_t bytes);
void give_back_pooled_bytes(void* p, std::size_t bytes) noexcept;

}  // namespace nx::detail
