// fake_vmm.h — expandable segments for the fake libc10_cuda.so (fake_c10.cpp): the driver's
// virtual-memory functions fetched through the runtime, one reserved range grown and shrunk in
// 2 MiB physical chunks, as PyTorch's expandable_segments do. Included once, inside its namespace.
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
    // grow: maps size bytes (a multiple of CHUNK) at the range's end. As PyTorch's
    // ExpandableSegment::map: every chunk's handle is created first; when one cannot be, those
    // created so far are released unmapped (never counted as reserved); then all are mapped.
    CUdeviceptr grow(size_t size)
    {
        if (!init())
            return 0;
        CUdeviceptr at = next;
        CUmemAllocationProp prop{};
        prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = 0;
        std::vector<CUmemGenericAllocationHandle> hs;
        for (size_t off = 0; off < size; off += CHUNK) {
            CUmemGenericAllocationHandle h = 0;
            if (create(&h, CHUNK, &prop, 0) != 0) {
                for (CUmemGenericAllocationHandle c : hs)
                    release(c);
                return 0;
            }
            hs.push_back(h);
        }
        for (size_t i = 0; i < hs.size(); i++) {
            CUdeviceptr va = at + i * CHUNK;
            map(va, CHUNK, 0, hs[i], 0);
            CUmemAccessDesc d{};
            d.location = prop.location;
            d.flags = 3;
            set_access(va, CHUNK, &d, 1);
            chunks[va] = hs[i];
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
