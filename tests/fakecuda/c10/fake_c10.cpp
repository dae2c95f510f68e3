// fake_c10.cpp — a fake libc10_cuda.so for tests without PyTorch: the project's own tiny
// caching allocator on the fake cudart (segments via cudaMalloc, tensors carved inside),
// reachable the way PyTorch's is (the exported `allocator` atomic, a NativeCachingAllocator
// class with an attachAllocatorTraceTracker virtual) and calling its trackers for each action.
// Written from the public description of the mechanism; no PyTorch code. One build per layout:
//   FAKE_C10_LAYOUT_cda  TraceEntry in c10::CachingDeviceAllocator (PyTorch 2.10/2.11+ naming)
//   FAKE_C10_LAYOUT_cca  TraceEntry in c10::cuda::CUDACachingAllocator (2.1 to 2.9 naming)
//   FAKE_C10_LAYOUT_odd  TraceEntry in a namespace no release uses (must be refused)
//   FAKE_C10_LAYOUT_noinit  cda without the initialized() virtual
// Environment: FAKE_C10_BACKEND=async (the allocator object is another class: per-tensor
// cudaMalloc, like the cudaMallocAsync backend), FAKE_C10_LIE=1 (SEGMENT_ALLOC reports an
// address 512 bytes off), FAKE_C10_MEM_FRACTION=BYTES (an allocator-level limit: OOM with no
// failed CUDA call), FAKE_C10_EXPANDABLE=1 (segments are 2 MiB physical chunks mapped one
// by one into one reserved range, reported as SEGMENT_MAP / SEGMENT_UNMAP, like expandable
// segments; the driver functions come from cudaGetDriverEntryPointByVersion).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

extern "C" {
#include "../../../preload/cuda_abi.h"
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
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

struct counters {
    uint64_t allocated = 0, peak_allocated = 0, reserved = 0, peak_reserved = 0, allocs = 0,
             frees = 0;
    void alloc(uint64_t n)
    {
        allocated += n, allocs++, peak_allocated = std::max(peak_allocated, allocated);
    }
    void free(uint64_t n)
    {
        allocated -= n, frees++;
    }
    void reserve(uint64_t n)
    {
        reserved += n, peak_reserved = std::max(peak_reserved, reserved);
    }
};
static counters g_stats;
static std::recursive_mutex g_mutex;

// The driver's VMM functions, fetched the way PyTorch 2.8+ does (through the runtime).
struct vmm {
    CUresult (*reserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long) = nullptr;
    CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                       unsigned long long) = nullptr;
    CUresult (*map)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
                    unsigned long long) = nullptr;
    CUresult (*set_access)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t) = nullptr;
    CUresult (*unmap)(CUdeviceptr, size_t) = nullptr;
    CUresult (*release)(CUmemGenericAllocationHandle) = nullptr;
    CUdeviceptr base = 0, next = 0;
    std::map<CUdeviceptr, CUmemGenericAllocationHandle> chunks; // mapped 2 MiB chunks
    template <class F> bool get(const char *name, F &f)
    {
        void *p = nullptr;
        int st = 1;
        if (cudaGetDriverEntryPointByVersion(name, &p, 12000, 0, &st) != 0 || st != 0 || !p)
            return false;
        f = reinterpret_cast<F>(p);
        return true;
    }
    bool init()
    {
        if (base)
            return true;
        cudaFree(nullptr); // the context
        if (!get("cuMemAddressReserve", reserve) || !get("cuMemCreate", create) ||
            !get("cuMemMap", map) || !get("cuMemSetAccess", set_access) ||
            !get("cuMemUnmap", unmap) || !get("cuMemRelease", release))
            return false;
        if (reserve(&base, 64ull << 30, 2u << 20, 0, 0) != 0)
            return false;
        next = base;
        return true;
    }
    static constexpr size_t CHUNK = 2u << 20;
    // grow: maps size bytes (a multiple of CHUNK) at the range's end, chunk by chunk
    CUdeviceptr grow(size_t size)
    {
        if (!init())
            return 0;
        CUdeviceptr at = next;
        for (size_t off = 0; off < size; off += CHUNK) {
            CUmemAllocationProp prop{};
            prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
            prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
            prop.location.id = 0;
            CUmemGenericAllocationHandle h = 0;
            if (create(&h, CHUNK, &prop, 0) != 0) {
                shrink(at, off);
                return 0;
            }
            map(at + off, CHUNK, 0, h, 0);
            CUmemAccessDesc d{};
            d.location = prop.location;
            d.flags = 3;
            set_access(at + off, CHUNK, &d, 1);
            chunks[at + off] = h;
        }
        next = at + size;
        return at;
    }
    void shrink(CUdeviceptr at, size_t size)
    {
        for (size_t off = 0; off < size; off += CHUNK) {
            auto it = chunks.find(at + off);
            if (it == chunks.end())
                continue;
            unmap(at + off, CHUNK);
            release(it->second);
            chunks.erase(it);
        }
    }
};
static vmm g_vmm;
static bool expandable()
{
    return getenv("FAKE_C10_EXPANDABLE") && getenv("FAKE_C10_EXPANDABLE")[0] == '1';
}

namespace Native
{
// Tensors live in blocks; a segment is one cudaMalloc, split into blocks. Requests round up to
// 512 B; <= 1 MiB use 2 MiB segments, < 10 MiB 20 MiB ones, larger their own (2 MiB multiple).
class NativeCachingAllocator final : public CUDAAllocator
{
    struct block {
        size_t size, requested;
        uintptr_t segment;
        bool small, free;
    };
    std::map<uintptr_t, block> blocks_;    // by address
    std::map<uintptr_t, size_t> segments_; // base -> size
    std::vector<AllocatorTraceTracker> trackers_;
    uint64_t limit_ = 0;
    bool initialized_ = false; // like PyTorch's device allocators, made lazily at the first use

    void trace(TraceEntry::Action a, uint64_t addr, uint64_t size)
    {
        TraceEntry te;
        te.action_ = a;
        te.device_ = 0;
        te.addr_ = static_cast<decltype(te.addr_)>(addr);
        te.stream_ = nullptr;
        te.size_ = static_cast<decltype(te.size_)>(size);
        te.mempool_ = {0, 0};
        te.time_ = 0;
        te.compile_context_ = "N/A";
        for (auto &t : trackers_) // callbacks must not call back into the allocator
            t(te);
    }
    static size_t round_up(size_t n, size_t m)
    {
        return (n + m - 1) / m * m;
    }
    bool release_free_segments()
    {
        bool any = false;
        for (auto it = segments_.begin(); it != segments_.end();) {
            auto b = blocks_.find(it->first);
            if (b != blocks_.end() && b->second.free && b->second.size == it->second) {
                if (expandable()) {
                    g_vmm.shrink(it->first, it->second);
                    trace(TraceEntry::SEGMENT_UNMAP, it->first, it->second);
                } else {
                    cudaFree(reinterpret_cast<void *>(it->first));
                    trace(TraceEntry::SEGMENT_FREE, it->first, it->second);
                }
                g_stats.reserved -= it->second;
                blocks_.erase(b);
                it = segments_.erase(it);
                any = true;
            } else {
                ++it;
            }
        }
        return any;
    }
    bool new_segment(size_t size, bool small)
    {
        if (limit_ && g_stats.reserved + size > limit_)
            return false;
        void *p = nullptr;
        if (expandable()) {
            size = round_up(size, vmm::CHUNK);
            p = reinterpret_cast<void *>(g_vmm.grow(size));
            if (!p)
                return false;
        } else if (cudaMalloc(&p, size) != 0 || !p) {
            return false;
        }
        uintptr_t a = reinterpret_cast<uintptr_t>(p);
        segments_[a] = size;
        blocks_[a] = block{size, 0, a, small, true};
        g_stats.reserve(size);
        static const bool lie = getenv("FAKE_C10_LIE") && getenv("FAKE_C10_LIE")[0] == '1';
        trace(expandable() ? TraceEntry::SEGMENT_MAP : TraceEntry::SEGMENT_ALLOC, lie ? a + 512 : a,
              size);
        return true;
    }
    std::map<uintptr_t, block>::iterator find_free(size_t size, bool small)
    {
        auto best = blocks_.end();
        for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
            if (it->second.free && it->second.small == small && it->second.size >= size &&
                (best == blocks_.end() || it->second.size < best->second.size))
                best = it;
        return best;
    }

  public:
    NativeCachingAllocator()
    {
        const char *f = getenv("FAKE_C10_MEM_FRACTION");
        limit_ = f ? strtoull(f, nullptr, 0) : 0;
    }
    void *raw_alloc(size_t n) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        initialized_ = true;
        size_t size = round_up(n ? n : 1, 512);
        bool small = size <= (1u << 20);
        auto it = find_free(size, small);
        if (it == blocks_.end()) {
            size_t seg = small                ? (2u << 20)
                         : size < (10u << 20) ? (20u << 20)
                                              : round_up(size, 2u << 20);
            if (!new_segment(seg, small) && !(release_free_segments() && new_segment(seg, small))) {
                trace(TraceEntry::OOM, 0, size);
                return nullptr;
            }
            it = find_free(size, small);
        }
        block &b = it->second;
        if (b.size - size >= 512) { // split: the rest stays free
            blocks_[it->first + size] = block{b.size - size, 0, b.segment, small, true};
            b.size = size;
        }
        b.free = false;
        b.requested = n;
        g_stats.alloc(n);
        trace(TraceEntry::ALLOC, it->first, n);
        return reinterpret_cast<void *>(it->first);
    }
    void raw_delete(void *p) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        auto it = blocks_.find(reinterpret_cast<uintptr_t>(p));
        if (it == blocks_.end() || it->second.free)
            return;
        trace(TraceEntry::FREE_REQUESTED, it->first, it->second.requested);
        trace(TraceEntry::FREE_COMPLETED, it->first, it->second.requested);
        g_stats.free(it->second.requested);
        it->second.free = true;
        auto next = std::next(it); // merge with free neighbours of the same segment
        if (next != blocks_.end() && next->second.free &&
            next->second.segment == it->second.segment) {
            it->second.size += next->second.size;
            blocks_.erase(next);
        }
        if (it != blocks_.begin()) {
            auto prev = std::prev(it);
            if (prev->second.free && prev->second.segment == it->second.segment) {
                prev->second.size += it->second.size;
                blocks_.erase(it);
            }
        }
    }
    void emptyCache() override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        release_free_segments();
    }
    void attachAllocatorTraceTracker(AllocatorTraceTracker tracker) override
    {
        // recursive: safe from a cudaMalloc hook of this allocator
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        if (initialized_) // before: no device allocator to hold it, lost (as in PyTorch)
            trackers_.push_back(std::move(tracker));
    }
#ifndef FAKE_C10_NO_INITIALIZED
    bool initialized() override
    {
        return initialized_;
    }
#endif
    const char *name() override
    {
        return "native";
    }
};
} // namespace Native

// The other backend: one cudaMalloc per tensor, its own tracker list (never the native vtable).
class PerTensorAllocator final : public CUDAAllocator
{
    std::map<uintptr_t, size_t> live_;
    std::vector<AllocatorTraceTracker> trackers_;

  public:
    void *raw_alloc(size_t n) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        void *p = nullptr;
        if (cudaMalloc(&p, n ? n : 1) != 0)
            return nullptr;
        live_[reinterpret_cast<uintptr_t>(p)] = n;
        g_stats.alloc(n);
        g_stats.reserve(n);
        return p;
    }
    void raw_delete(void *p) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        auto it = live_.find(reinterpret_cast<uintptr_t>(p));
        if (it == live_.end())
            return;
        g_stats.free(it->second);
        g_stats.reserved -= it->second;
        live_.erase(it);
        cudaFree(p);
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
        return "per-tensor";
    }
};

// Chosen when the library loads, like PyTorch's backend initializer.
static struct backend_init {
    backend_init()
    {
        const char *b = getenv("FAKE_C10_BACKEND");
        if (b && std::string(b) == "async")
            allocator.store(new PerTensorAllocator());
        else
            allocator.store(new Native::NativeCachingAllocator());
    }
} g_backend_init;
} // namespace c10::cuda::CUDACachingAllocator

// The test program's face (PyTorch's inline wrappers do the same: allocator.load()->method()).
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
// fake_c10_stats: allocated, peak allocated (requested bytes), reserved, peak reserved, allocs,
// frees.
extern "C" FAKE_API void fake_c10_stats(uint64_t out[6])
{
    std::lock_guard<std::recursive_mutex> lock(cca::g_mutex);
    const cca::counters &c = cca::g_stats;
    uint64_t v[6] = {c.allocated, c.peak_allocated, c.reserved, c.peak_reserved, c.allocs, c.frees};
    for (int i = 0; i < 6; i++)
        out[i] = v[i];
}
