// fake_c10.cpp — a fake libc10_cuda.so for tests and the simulation without PyTorch: the
// project's own caching allocator on the fake cudart, following the rules of PyTorch's
// (segments via cudaMalloc, tensors carved inside; fake_native.h), reachable the way
// PyTorch's is (the exported `allocator` atomic, a NativeCachingAllocator class with an
// attachAllocatorTraceTracker virtual) and calling its trackers for each action.
// Written from the public description of the mechanism; no PyTorch code. One build per layout:
//   FAKE_C10_LAYOUT_cda  TraceEntry in c10::CachingDeviceAllocator (PyTorch 2.10/2.11+ naming)
//   FAKE_C10_LAYOUT_cca  TraceEntry in c10::cuda::CUDACachingAllocator (2.1 to 2.9 naming)
//   FAKE_C10_LAYOUT_odd  TraceEntry in a namespace no release uses (must be refused)
//   FAKE_C10_LAYOUT_noinit  cda without the initialized() virtual
// Environment: FAKE_C10_BACKEND=async (the allocator object is another class: per-tensor
// cudaMalloc), PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (another class: per-tensor
// cudaMallocAsync, like PyTorch's backend), FAKE_C10_LIE=1 (SEGMENT_ALLOC reports an
// address 512 bytes off), FAKE_C10_MEM_FRACTION=BYTES (an allocator-level limit: OOM with no
// failed CUDA call), FAKE_C10_EXPANDABLE=1 (segments are 2 MiB physical chunks mapped one
// by one into one reserved range, reported as SEGMENT_MAP / SEGMENT_UNMAP, like expandable
// segments; the driver functions come from cudaGetDriverEntryPointByVersion),
// PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) with max_split_size_mb:N and / or
// garbage_collection_threshold:T (PyTorch's rules, fake_settings.h; the threshold acts only
// with FAKE_C10_MEM_FRACTION, the fake's set_per_process_memory_fraction). record_stream:
// fake_c10_record_stream(ptr, stream), and fake_c10_stream_done(stream), which lets the frees
// that stream held back complete.
#include <atomic>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

extern "C" {
#include "../../../preload/cuda_abi.h"
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaMallocAsync(void **p, size_t n, void *stream);
int cudaFreeAsync(void *p, void *stream);
int cudaMemGetInfo(size_t *free_b, size_t *total_b);
int cudaGetLastError(void);
int cudaDeviceSynchronize(void);
int cudaGetDriverEntryPointByVersion(const char *sym, void **fn, unsigned version,
                                     unsigned long long flags, int *status);
}

#define FAKE_API __attribute__((visibility("default")))

namespace fake_detail
{
// The entry every layout shares: the field order the preload's mirror expects.
template <class Device, class Addr> struct entry_fields {
    enum Action {
        ALLOC,
        FREE_REQUESTED,
        FREE_COMPLETED,
        SEGMENT_ALLOC,
        SEGMENT_FREE,
        SEGMENT_MAP,
        SEGMENT_UNMAP,
        SNAPSHOT,
        OOM
    };
    Action action_;
    Device device_;
    Addr addr_;
    std::shared_ptr<void> context_;
    void *stream_;
    Addr size_;
    std::pair<unsigned long long, unsigned long long> mempool_;
    uint64_t time_;
    std::string compile_context_;
    std::string user_metadata_;
};
} // namespace fake_detail

#if defined(FAKE_C10_LAYOUT_noinit) // cda without initialized(): the preload must attach at once
#define FAKE_C10_LAYOUT_cda
#define FAKE_C10_NO_INITIALIZED
#endif

#if defined(FAKE_C10_LAYOUT_cda)
namespace c10::CachingDeviceAllocator
{
struct TraceEntry : fake_detail::entry_fields<int8_t, size_t> {
};
} // namespace c10::CachingDeviceAllocator
namespace c10::cuda::CUDACachingAllocator
{
using TraceEntry = c10::CachingDeviceAllocator::TraceEntry;
}
#elif defined(FAKE_C10_LAYOUT_cca)
namespace c10::cuda::CUDACachingAllocator
{
struct TraceEntry : fake_detail::entry_fields<int, int64_t> {
};
} // namespace c10::cuda::CUDACachingAllocator
#elif defined(FAKE_C10_LAYOUT_odd)
namespace c10::SomeOtherAllocator
{
struct TraceEntry : fake_detail::entry_fields<int8_t, size_t> {
};
} // namespace c10::SomeOtherAllocator
namespace c10::cuda::CUDACachingAllocator
{
using TraceEntry = c10::SomeOtherAllocator::TraceEntry;
}
#else
#error "define FAKE_C10_LAYOUT_cda, _cca or _odd"
#endif

namespace c10::cuda::CUDACachingAllocator
{
using AllocatorTraceTracker = std::function<void(const TraceEntry &)>;

class CUDAAllocator
{
  public:
    virtual ~CUDAAllocator() = default;
    virtual void *raw_alloc(size_t nbytes) = 0;
    virtual void raw_delete(void *ptr) = 0;
    virtual void emptyCache() = 0;
    virtual void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) = 0;
#ifndef FAKE_C10_NO_INITIALIZED
    virtual bool initialized() = 0;
#endif
    virtual const char *name() = 0;
};

FAKE_API std::atomic<CUDAAllocator *> allocator;

// The figures PyTorch's memory_stats() reports, kept the same way: requested bytes (what the
// callers asked for), allocated bytes (the blocks: rounded, with any unsplit rest), reserved
// bytes (segments), device calls, retries after freeing the cache, and out-of-memory errors.
struct counters {
    uint64_t requested = 0, peak_requested = 0, allocated = 0, peak_allocated = 0, reserved = 0,
             peak_reserved = 0, allocs = 0, frees = 0, device_allocs = 0, device_frees = 0,
             retries = 0, ooms = 0;
    void alloc(uint64_t req, uint64_t blk)
    {
        requested += req, allocated += blk, allocs++;
        peak_requested = std::max(peak_requested, requested);
        peak_allocated = std::max(peak_allocated, allocated);
    }
    void free(uint64_t req, uint64_t blk)
    {
        free_requested(blk), free_completed(req);
    }
    // apart under record_stream, as PyTorch's: block bytes at the free request, requested
    // bytes when the block returns to the pool
    void free_requested(uint64_t blk)
    {
        allocated -= blk;
    }
    void free_completed(uint64_t req)
    {
        requested -= req, frees++;
    }
    void reserve(uint64_t n)
    {
        reserved += n, device_allocs++, peak_reserved = std::max(peak_reserved, reserved);
    }
    void unreserve(uint64_t n)
    {
        reserved -= n, device_frees++;
    }
};
static counters g_stats;
static std::recursive_mutex g_mutex;
static char g_oom_message[640];

// format_size: bytes as PyTorch's messages print them ("1.50 GiB", "20.00 MiB", "512 bytes")
static std::string format_size(uint64_t n)
{
    char b[64];
    if (n <= 1024)
        snprintf(b, sizeof b, "%llu bytes", (unsigned long long)n);
    else if (n <= (1ull << 20))
        snprintf(b, sizeof b, "%.2f KiB", n / 1024.0);
    else if (n <= (1ull << 30))
        snprintf(b, sizeof b, "%.2f MiB", n / 1048576.0);
    else
        snprintf(b, sizeof b, "%.2f GiB", n / 1073741824.0);
    return b;
}

// oom_message: the OutOfMemoryError text, in PyTorch's words (marked SIMULATED); returns the
// free bytes the device reported (the OOM trace entry's address field, as in PyTorch).
static uint64_t oom_message(uint64_t tried)
{
    size_t fr = 0, tot = 0;
    cudaMemGetInfo(&fr, &tot);
    cudaGetLastError();
    snprintf(g_oom_message, sizeof g_oom_message,
             "CUDA out of memory (SIMULATED). Tried to allocate %s. GPU 0 has a total capacity of "
             "%s of which %s is free. Including non-PyTorch memory, this process has %s memory "
             "in use. Of the allocated memory %s is allocated by PyTorch, and %s is reserved by "
             "PyTorch but unallocated.",
             format_size(tried).c_str(), format_size(tot).c_str(), format_size(fr).c_str(),
             format_size(tot - fr).c_str(), format_size(g_stats.allocated).c_str(),
             format_size(g_stats.reserved - g_stats.allocated).c_str());
    return fr;
}

#include "fake_settings.h"
#include "fake_vmm.h"
static vmm g_vmm;
static bool expandable()
{
    return getenv("FAKE_C10_EXPANDABLE") && getenv("FAKE_C10_EXPANDABLE")[0] == '1';
}

#include "fake_native.h"

// Another backend: one cudaMalloc per tensor (FAKE_C10_BACKEND=async), or one cudaMallocAsync
// per tensor, retried once after a device synchronize, as PyTorch's cudaMallocAsync backend
// (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync). Its own class: never the native vtable.
class PerTensorAllocator final : public CUDAAllocator
{
    std::map<uintptr_t, size_t> live_;
    std::vector<AllocatorTraceTracker> trackers_;
    bool async_;

  public:
    explicit PerTensorAllocator(bool stream_ordered) : async_(stream_ordered) {}
    void *raw_alloc(size_t n) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        void *p = nullptr;
        size_t sz = n ? n : 1;
        if (!async_) {
            if (cudaMalloc(&p, sz) != 0)
                return nullptr;
        } else if (cudaMallocAsync(&p, sz, nullptr) != 0) {
            cudaGetLastError();
            cudaDeviceSynchronize();
            g_stats.retries++;
            if (cudaMallocAsync(&p, sz, nullptr) != 0) {
                cudaGetLastError();
                g_stats.ooms++;
                oom_message(n);
                return nullptr;
            }
        }
        live_[reinterpret_cast<uintptr_t>(p)] = n;
        g_stats.alloc(n, n);
        g_stats.reserve(n);
        if (async_)
            g_stats.device_allocs--; // not a cudaMalloc: num_device_alloc stays 0
        return p;
    }
    void raw_delete(void *p) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        auto it = live_.find(reinterpret_cast<uintptr_t>(p));
        if (it == live_.end())
            return;
        g_stats.free(it->second, it->second);
        g_stats.unreserve(it->second);
        if (async_) {
            g_stats.device_frees--;
            cudaFreeAsync(p, nullptr);
        } else {
            cudaFree(p);
        }
        live_.erase(it);
    }
    void emptyCache() override {}
    void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        trackers_.push_back(std::move(tracker));
    }
#ifndef FAKE_C10_NO_INITIALIZED
    bool initialized() override
    {
        return true;
    }
#endif
    const char *name() override
    {
        return async_ ? "cudaMallocAsync" : "per-tensor";
    }
};

// conf_says_async: PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF names backend:cudaMallocAsync
// (case and spaces ignored), as PyTorch reads it when its allocator is created.
static bool conf_says_async()
{
    for (const char *var : {"PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF"}) {
        const char *v = getenv(var);
        std::string s;
        for (; v && *v; v++)
            if (*v != ' ')
                s += static_cast<char>(tolower(static_cast<unsigned char>(*v)));
        if (s.find("backend:cudamallocasync") != std::string::npos)
            return true;
    }
    return false;
}

// Chosen when the library loads, like PyTorch's backend initializer.
static Native::NativeCachingAllocator *g_native; // null with another backend
static struct backend_init {
    backend_init()
    {
        const char *b = getenv("FAKE_C10_BACKEND");
        if (b && std::string(b) == "async")
            allocator.store(new PerTensorAllocator(false));
        else if (conf_says_async())
            allocator.store(new PerTensorAllocator(true));
        else
            allocator.store(g_native = new Native::NativeCachingAllocator());
    }
} g_backend_init;
} // namespace c10::cuda::CUDACachingAllocator

// The C face for test programs and the simulation (PyTorch's inline wrappers do the same:
// allocator.load()->method()).
namespace cca = c10::cuda::CUDACachingAllocator;
extern "C" FAKE_API void *fake_c10_malloc(size_t n)
{
    return cca::allocator.load()->raw_alloc(n);
}
extern "C" FAKE_API void fake_c10_free(void *p)
{
    cca::allocator.load()->raw_delete(p);
}
extern "C" FAKE_API void fake_c10_empty_cache(void)
{
    cca::allocator.load()->emptyCache();
}
// fake_c10_record_stream: the tensor at p is used on `stream` (Tensor.record_stream; native
// backend only); fake_c10_stream_done: that stream's work so far completed (fake_settings.h)
extern "C" FAKE_API void fake_c10_record_stream(void *p, uintptr_t stream)
{
    if (cca::g_native)
        cca::g_native->record_stream(p, stream);
}
extern "C" FAKE_API void fake_c10_stream_done(uintptr_t stream)
{
    if (cca::g_native)
        cca::g_native->stream_done(stream);
}
// fake_c10_stats: allocated, peak allocated (requested bytes), reserved, peak reserved, allocs,
// frees.
extern "C" FAKE_API void fake_c10_stats(uint64_t out[6])
{
    std::lock_guard<std::recursive_mutex> lock(cca::g_mutex);
    const cca::counters &c = cca::g_stats;
    uint64_t v[6] = {c.requested, c.peak_requested, c.reserved, c.peak_reserved, c.allocs, c.frees};
    for (int i = 0; i < 6; i++)
        out[i] = v[i];
}
// fake_c10_memory_stats: out[12] = requested bytes current, peak; allocated (block) bytes
// current, peak; reserved bytes current, peak; num_device_alloc, num_device_free,
// num_alloc_retries, num_ooms, allocations, frees. Returns the backend's name.
extern "C" FAKE_API const char *fake_c10_memory_stats(uint64_t out[12])
{
    std::lock_guard<std::recursive_mutex> lock(cca::g_mutex);
    const cca::counters &c = cca::g_stats;
    uint64_t v[12] = {c.requested,     c.peak_requested, c.allocated,    c.peak_allocated,
                      c.reserved,      c.peak_reserved,  c.device_allocs, c.device_frees,
                      c.retries,       c.ooms,           c.allocs,        c.frees};
    for (int i = 0; i < 12; i++)
        out[i] = v[i];
    return cca::allocator.load()->name();
}
// fake_c10_oom_message: the last out-of-memory error's text ("" before any).
extern "C" FAKE_API const char *fake_c10_oom_message(void)
{
    return cca::g_oom_message;
}
