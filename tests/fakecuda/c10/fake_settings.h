// fake_settings.h — the allocator settings of the fake libc10_cuda.so's native allocator
// (fake_c10.cpp), following PyTorch's documented rules; no PyTorch code. Included once, inside
// its namespace. Read from PYTORCH_CUDA_ALLOC_CONF (or PYTORCH_ALLOC_CONF) when the allocator
// is made, "key:value" pairs separated by commas:
//   max_split_size_mb:N  blocks of N MiB or more ("oversize") are never split; a request under
//     N MiB never takes an oversize cached block, a request of N MiB or more takes one only when
//     it is less than 20 MiB larger than the request (the block is then used whole); when
//     cudaMalloc fails, oversize cached segments are released first (the smallest one at least
//     as large as the request, else the largest ones down to N MiB until as much as the request
//     went), and the cudaMalloc tried again before the full release. N must be > 20.
//   garbage_collection_threshold:T  (0 < T < 1; only with a memory limit, FAKE_C10_MEM_FRACTION,
//     as PyTorch's only with set_per_process_memory_fraction): when a request finds no cached
//     block and the reserved bytes are above T x the limit, cached large-pool segments that are
//     one free block are released (cudaFree, SEGMENT_FREE) until reserved is back at the
//     threshold: in rounds, each releasing every such segment at least as old as their average
//     age, a block's age being the number of large-pool lookups since it was cached.
// record_stream: fake_c10_record_stream(ptr, stream) marks a live tensor used on another stream
// (stream 0, the allocation stream, is ignored). Its free then only requests it (FREE_REQUESTED;
// the block bytes leave allocated) and the block stays out of the pool, its requested bytes
// counted, until fake_c10_stream_done(stream) says that stream's work so far completed and the
// next allocation looks (FREE_COMPLETED, as PyTorch's event query), or empty_cache or an OOM
// retry synchronizes every stream.

struct alloc_settings {
    static constexpr size_t MiB = 1u << 20, LARGE_BUFFER = 20 * MiB;
    size_t max_split = SIZE_MAX; // bytes; SIZE_MAX: no limit (PyTorch's default)
    double gc_threshold = 0;

    static std::string lowered(const char *v)
    {
        std::string s;
        for (; v && *v; v++)
            if (*v != ' ')
                s += static_cast<char>(tolower(static_cast<unsigned char>(*v)));
        return s;
    }
    void parse()
    {
        const char *v = getenv("PYTORCH_CUDA_ALLOC_CONF");
        if (!v)
            v = getenv("PYTORCH_ALLOC_CONF");
        std::string s = lowered(v);
        for (size_t at = 0; at < s.size();) {
            size_t end = s.find(',', at);
            if (end == std::string::npos)
                end = s.size();
            std::string kv = s.substr(at, end - at);
            at = end + 1;
            size_t colon = kv.find(':');
            if (colon == std::string::npos)
                continue;
            std::string key = kv.substr(0, colon), val = kv.substr(colon + 1);
            if (key == "max_split_size_mb") {
                unsigned long long mb = strtoull(val.c_str(), nullptr, 10);
                if (mb > LARGE_BUFFER / MiB)
                    max_split = mb * MiB;
                else
                    fprintf(stderr, "fake_c10: max_split_size_mb must be > 20 (ignored)\n");
            } else if (key == "garbage_collection_threshold") {
                double t = strtod(val.c_str(), nullptr);
                if (t > 0 && t < 1)
                    gc_threshold = t;
                else
                    fprintf(stderr, "fake_c10: garbage_collection_threshold must be in (0, 1) "
                                    "(ignored)\n");
            }
        }
    }
    bool oversize(size_t n) const
    {
        return n >= max_split;
    }
    // may_use: a cached block of `block` bytes serves a request of `req` bytes (the smallest
    // cached block that fits was found; when this says no, the request makes a new segment)
    bool may_use(size_t block, size_t req) const
    {
        if (!oversize(req))
            return !oversize(block);
        return block < req + LARGE_BUFFER;
    }
    // may_split: the rest of a block after a request of `req` bytes becomes a free block
    bool may_split(size_t req, size_t rest, bool small) const
    {
        return small ? rest >= 512 : !oversize(req) && rest > MiB;
    }

    struct cached {
        uintptr_t addr;
        size_t size;
        uint64_t age;
    };
    // gc_pick: the cached segments (large pool, one free block each, in the pool's order:
    // size, then address) the garbage collector releases to take back `target` bytes
    static std::vector<uintptr_t> gc_pick(std::vector<cached> c, size_t target)
    {
        std::vector<uintptr_t> out;
        double total_age = 0;
        for (const cached &b : c)
            total_age += static_cast<double>(b.age);
        size_t got = 0, left = c.size();
        std::vector<bool> gone(c.size());
        for (bool freed = true; got < target && freed && left > 0;) {
            double avg = total_age / static_cast<double>(left);
            freed = false;
            for (size_t i = 0; i < c.size(); i++) {
                if (gone[i] || static_cast<double>(c[i].age) < avg)
                    continue;
                gone[i] = freed = true;
                got += c[i].size, total_age -= static_cast<double>(c[i].age), left--;
                out.push_back(c[i].addr);
            }
        }
        return out;
    }
    // oversize_pick: the oversize cached segments (the pool's free blocks, in its order) that
    // are released when cudaMalloc failed for a request of `req` bytes; `enough` says whether
    // they add up to the request (else the full release follows)
    std::vector<uintptr_t> oversize_pick(const std::vector<cached> &c, size_t req,
                                         bool &enough) const
    {
        std::vector<uintptr_t> out;
        enough = false;
        if (max_split == SIZE_MAX)
            return out;
        size_t key = std::max(req, max_split), got = 0;
        for (const cached &b : c)
            if (b.size >= key) { // the smallest one large enough
                out.push_back(b.addr);
                enough = true;
                return out;
            }
        for (size_t i = c.size(); i-- > 0 && got < key && oversize(c[i].size);) {
            out.push_back(c[i].addr);
            got += c[i].size;
        }
        enough = got >= key;
        return out;
    }
};

// The streams that used each live block, and the freed blocks whose streams' work is pending.
struct stream_uses {
    std::map<uintptr_t, std::set<uintptr_t>> used, pending;
    void record(uintptr_t block, uintptr_t stream)
    {
        if (stream) // the allocation stream needs no event
            used[block].insert(stream);
    }
    // defer: at the block's free: true when it waits for other streams (an event on each)
    bool defer(uintptr_t block)
    {
        auto it = used.find(block);
        if (it == used.end())
            return false;
        pending[block] = std::move(it->second);
        used.erase(it);
        return true;
    }
    bool is_pending(uintptr_t block) const
    {
        return pending.count(block) != 0;
    }
    void done(uintptr_t stream) // that stream's work recorded so far completed
    {
        for (auto &p : pending)
            p.second.erase(stream);
    }
    // ready: the pending blocks whose events completed (all of them: a synchronize), taken out
    std::vector<uintptr_t> ready(bool all)
    {
        std::vector<uintptr_t> out;
        for (auto it = pending.begin(); it != pending.end();) {
            if (all || it->second.empty()) {
                out.push_back(it->first);
                it = pending.erase(it);
            } else {
                ++it;
            }
        }
        return out;
    }
};
