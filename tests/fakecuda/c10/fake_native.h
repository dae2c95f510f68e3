// fake_native.h — the native caching allocator of the fake libc10_cuda.so (fake_c10.cpp), the
// project's own, following the rules of PyTorch's (segments via cudaMalloc, or mapped chunks
// with FAKE_C10_EXPANDABLE=1, tensors carved inside) under the settings of fake_settings.h.
// Included once, inside its namespace, after fake_settings.h and fake_vmm.h.
namespace Native
{
// The caching allocator's rules (default settings): requests round up to 512 B; those of at
// most 1 MiB come from the small pool's 2 MiB segments, those under 10 MiB from 20 MiB
// segments, larger ones get a segment of their own rounded up to 2 MiB. A free block is found
// best-fit (smallest size, then lowest address) in its pool and split when the rest is at
// least 512 B (small pool) or more than 1 MiB (large pool); freed blocks merge with free
// neighbours. When cudaMalloc fails, every cached segment that is one whole free block is
// released and the cudaMalloc retried once; then an OOM entry and a null result. Settings
// (max_split_size_mb, garbage_collection_threshold) and record_stream: fake_settings.h.
class NativeCachingAllocator final : public CUDAAllocator
{
    struct block {
        size_t size, requested;
        uintptr_t segment;
        bool small, free;
        uint64_t cached_at = 0; // the pool's lookups when it was cached (its age's base)
    };
    std::map<uintptr_t, block> blocks_;             // by address
    std::map<uintptr_t, size_t> segments_;          // base -> size
    std::set<std::pair<size_t, uintptr_t>> pool_[2]; // free blocks (size, address); [1] small
    std::vector<AllocatorTraceTracker> trackers_;
    uint64_t limit_ = 0, lookups_[2] = {0, 0};
    alloc_settings conf_;
    stream_uses streams_;
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
    void cache(uintptr_t a, block &b) // a free block enters its pool
    {
        b.cached_at = lookups_[b.small];
        pool_[b.small].insert({b.size, a});
    }
    void add_block(uintptr_t a, const block &b)
    {
        blocks_[a] = b;
        if (b.free)
            cache(a, blocks_[a]);
    }
    void take(std::map<uintptr_t, block>::iterator it) // a free block leaves its pool
    {
        pool_[it->second.small].erase({it->second.size, it->first});
    }
    // release: the segment at `a` goes back to the device if it is one free block
    bool release(uintptr_t a)
    {
        auto it = segments_.find(a);
        auto b = blocks_.find(a);
        if (it == segments_.end() || b == blocks_.end() || !b->second.free ||
            b->second.size != it->second)
            return false;
        take(b);
        if (expandable()) {
            g_vmm.shrink(it->first, it->second);
            trace(TraceEntry::SEGMENT_UNMAP, it->first, it->second);
        } else {
            cudaFree(reinterpret_cast<void *>(it->first));
            trace(TraceEntry::SEGMENT_FREE, it->first, it->second);
        }
        g_stats.unreserve(it->second);
        blocks_.erase(b);
        segments_.erase(it);
        return true;
    }
    void release_free_segments()
    {
        finish_frees(true); // PyTorch synchronizes the streams' events first
        for (auto it = segments_.begin(); it != segments_.end();)
            release((it++)->first);
    }
    // the large pool's free blocks, in its order, each with its age
    std::vector<alloc_settings::cached> cached_large(bool whole_only)
    {
        std::vector<alloc_settings::cached> c;
        for (const auto &f : pool_[0]) {
            auto s = segments_.find(f.second);
            if (!whole_only || (s != segments_.end() && s->second == f.first))
                c.push_back({f.second, f.first, lookups_[0] - blocks_[f.second].cached_at});
        }
        return c;
    }
    void collect_garbage() // garbage_collection_threshold: before a new segment
    {
        if (!limit_ || conf_.gc_threshold <= 0 || expandable())
            return;
        uint64_t at = static_cast<uint64_t>(conf_.gc_threshold * static_cast<double>(limit_));
        if (g_stats.reserved <= at)
            return;
        for (uintptr_t a : alloc_settings::gc_pick(cached_large(true), g_stats.reserved - at))
            release(a);
    }
    bool release_oversize(size_t size, bool small) // max_split_size_mb: after a failed segment
    {
        if (small || expandable())
            return false;
        bool enough = false;
        for (uintptr_t a : conf_.oversize_pick(cached_large(false), size, enough))
            release(a);
        return enough;
    }
    // finish_frees: the pending frees whose streams' work completed (all: synchronized)
    // return their blocks to the pool
    void finish_frees(bool all)
    {
        for (uintptr_t a : streams_.ready(all))
            free_block(blocks_.find(a));
    }
    void free_block(std::map<uintptr_t, block>::iterator it)
    {
        trace(TraceEntry::FREE_COMPLETED, it->first, it->second.requested);
        g_stats.free_completed(it->second.requested);
        it->second.free = true;
        auto next = std::next(it); // merge with free neighbours of the same segment
        if (next != blocks_.end() && next->second.free &&
            next->second.segment == it->second.segment) {
            take(next);
            it->second.size += next->second.size;
            blocks_.erase(next);
        }
        if (it != blocks_.begin()) {
            auto prev = std::prev(it);
            if (prev->second.free && prev->second.segment == it->second.segment) {
                take(prev);
                prev->second.size += it->second.size;
                blocks_.erase(it);
                it = prev;
            }
        }
        cache(it->first, it->second);
    }
    // new_segment: its address (one free block, in the pool), 0 when the device refused
    uintptr_t new_segment(size_t size, bool small)
    {
        if (limit_ && g_stats.reserved + size > limit_)
            return 0;
        void *p = nullptr;
        if (expandable()) {
            size = round_up(size, vmm::CHUNK);
            p = reinterpret_cast<void *>(g_vmm.grow(size));
            if (!p)
                return 0;
        } else if (cudaMalloc(&p, size) != 0 || !p) {
            cudaGetLastError(); // PyTorch clears the error before it retries or raises
            return 0;
        }
        uintptr_t a = reinterpret_cast<uintptr_t>(p);
        segments_[a] = size;
        add_block(a, block{size, 0, a, small, true});
        g_stats.reserve(size);
        static const bool lie = getenv("FAKE_C10_LIE") && getenv("FAKE_C10_LIE")[0] == '1';
        trace(expandable() ? TraceEntry::SEGMENT_MAP : TraceEntry::SEGMENT_ALLOC, lie ? a + 512 : a,
              size);
        return a;
    }
    // find_free: the smallest cached block that fits, if the settings let it serve (a lookup:
    // the pool's blocks age by one)
    std::map<uintptr_t, block>::iterator find_free(size_t size, bool small)
    {
        lookups_[small]++;
        auto f = pool_[small].lower_bound({size, 0});
        if (f == pool_[small].end() || !conf_.may_use(f->first, size))
            return blocks_.end();
        return blocks_.find(f->second);
    }

  public:
    NativeCachingAllocator()
    {
        const char *f = getenv("FAKE_C10_MEM_FRACTION");
        limit_ = f ? strtoull(f, nullptr, 0) : 0;
        conf_.parse();
    }
    void *raw_alloc(size_t n) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        initialized_ = true;
        size_t size = n < 512 ? 512 : round_up(n, 512);
        bool small = size <= (1u << 20);
        size_t seg = small ? (2u << 20) : size < (10u << 20) ? (20u << 20) : round_up(size, 2u << 20);
        finish_frees(false); // the events that completed (PyTorch's process_events)
        auto it = find_free(size, small);
        if (it == blocks_.end()) {
            collect_garbage();
            uintptr_t a = new_segment(seg, small);
            if (!a && release_oversize(size, small))
                a = new_segment(seg, small);
            if (!a) {
                release_free_segments();
                g_stats.retries++;
                a = new_segment(seg, small);
            }
            if (!a) {
                g_stats.ooms++;
                trace(TraceEntry::OOM, oom_message(seg), size);
                return nullptr;
            }
            it = blocks_.find(a); // the new segment serves the request (no second lookup)
        }
        take(it);
        block &b = it->second;
        size_t rest = b.size - size;
        if (conf_.may_split(size, rest, small)) { // split: the rest stays free
            add_block(it->first + size, block{rest, 0, b.segment, small, true});
            b.size = size;
        }
        b.free = false;
        b.requested = n;
        g_stats.alloc(n, b.size);
        trace(TraceEntry::ALLOC, it->first, n);
        return reinterpret_cast<void *>(it->first);
    }
    void raw_delete(void *p) override
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        auto it = blocks_.find(reinterpret_cast<uintptr_t>(p));
        if (it == blocks_.end() || it->second.free || streams_.is_pending(it->first))
            return;
        trace(TraceEntry::FREE_REQUESTED, it->first, it->second.requested);
        g_stats.free_requested(it->second.size);
        if (!streams_.defer(it->first)) // used on another stream: FREE_COMPLETED comes later
            free_block(it);
    }
    void record_stream(void *p, uintptr_t stream)
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        auto it = blocks_.find(reinterpret_cast<uintptr_t>(p));
        if (it != blocks_.end() && !it->second.free && !streams_.is_pending(it->first))
            streams_.record(it->first, stream);
    }
    void stream_done(uintptr_t stream)
    {
        std::lock_guard<std::recursive_mutex> lock(g_mutex);
        streams_.done(stream);
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
