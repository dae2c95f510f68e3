/* torchalloc.h — attaching to PyTorch's CUDA caching allocator trace hooks from the preload:
 * find the live allocator in libc10_cuda.so (ELF .symtab of the loaded file), check it, call
 * its attachAllocatorTraceTracker through bridge.cpp, self-check the first segment, and turn
 * each callback into one ALLOC / FREE record (layer "allocator"). See docs/torch-allocator.md. */
#ifndef VT_PRELOAD_TORCHALLOC_H
#define VT_PRELOAD_TORCHALLOC_H

#include <stddef.h>
#include <stdint.h>

/* ---- what a segment hook calls ----------------------------------------------------------
 * vt__torch_segment: a device segment was just recorded by a runtime / driver hook on this
 * thread (cudaMalloc: addr/size of the result; cuMemMap: the mapped range, map = 1). The first
 * call tries to attach (once per process); every call remembers (addr, size) for the
 * self-check of the tracker's first segment event. Cheap after the first call. */
void vt__torch_segment(uint64_t addr, uint64_t size, int map);
/* vt__torch_loaded_hint: set to 1 by every dlsym call (hooks/hook_dlsym.c): a library may have
 * just been loaded, so a tracker not attached yet looks for PyTorch's at the next segment. */
extern int vt__torch_loaded_hint;

/* ---- layouts: the TraceEntry types this build understands -------------------------------
 * X(ID, mangled parameter type of attachAllocatorTraceTracker, namespace, releases).
 * Every listed layout begins with the same 48 bytes (vt__torch_entry below). */
#define VT_TORCH_LAYOUTS(X)                                                                        \
    X(CDA, "St8functionIFvRKNS_22CachingDeviceAllocator10TraceEntryEEE",                           \
      "c10::CachingDeviceAllocator::TraceEntry", "2.10 or 2.11 and later")                         \
    X(CCA, "St8functionIFvRKNS1_10TraceEntryEEE", "c10::cuda::CUDACachingAllocator::TraceEntry",   \
      "2.1 to 2.9")

enum vt__torch_layout {
    VT_TORCH_LAYOUT_NONE = 0,
#define VT_TORCH_LAYOUT_ENUM(id, mangled, ns, rel) VT_TORCH_LAYOUT_##id,
    VT_TORCH_LAYOUTS(VT_TORCH_LAYOUT_ENUM)
#undef VT_TORCH_LAYOUT_ENUM
};

/* The prefix of TraceEntry common to every known layout (our own mirror; x86-64 / aarch64
 * Itanium ABI): action_ (an enum: int), device_ (int8 c10::DeviceIndex by 2.3, int before: the
 * low byte is read), addr_ (int64 / size_t; OOM: free bytes), context_ (shared_ptr, unread),
 * stream_ (cudaStream_t / void*), size_. */
typedef struct vt__torch_entry {
    int32_t action;
    int8_t device;
    uint8_t pad_[3];
    uint64_t addr;
    void *context_[2];
    uint64_t stream;
    uint64_t size;
} vt__torch_entry;
#ifndef __cplusplus
_Static_assert(sizeof(vt__torch_entry) == 48, "TraceEntry prefix is 48 bytes");
#endif

/* TraceEntry::Action values (the same in every known layout). */
/* clang-format off */
#define VT_TORCH_ACTIONS(X)                                                                        \
    X(ALLOC, 0)                                                                                    \
    X(FREE_REQUESTED, 1)                                                                           \
    X(FREE_COMPLETED, 2)                                                                           \
    X(SEGMENT_ALLOC, 3)                                                                            \
    X(SEGMENT_FREE, 4)                                                                             \
    X(SEGMENT_MAP, 5)                                                                              \
    X(SEGMENT_UNMAP, 6)                                                                            \
    X(SNAPSHOT, 7)                                                                                 \
    X(OOM, 8)
/* clang-format on */
enum vt__torch_action {
#define VT_TORCH_ACTION_ENUM(name, v) VT_TORCH_##name = v,
    VT_TORCH_ACTIONS(VT_TORCH_ACTION_ENUM)
#undef VT_TORCH_ACTION_ENUM
};

/* Names in libc10_cuda.so's .symtab (mangled). */
#define VT_TORCH_SYM_ALLOCATOR "_ZN3c104cuda20CUDACachingAllocator9allocatorE"
#define VT_TORCH_SYM_VTABLE "_ZTVN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocatorE"
/* bool NativeCachingAllocator::initialized(): true once the per-device allocators exist (an
 * attach before that reaches no device and is lost). Optional: without it, attach at once. */
#define VT_TORCH_SYM_INITIALIZED                                                                   \
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator11initializedEv"
#define VT_TORCH_SYM_ATTACH_PREFIX                                                                 \
    "_ZN3c104cuda20CUDACachingAllocator6Native22NativeCachingAllocator27attachAllocatorTraceTrack" \
    "erE"

/* ---- the steps, exposed for unit tests ----------------------------------------------------
 * vt__torch_layout_of: the layout named by the attach method's mangled symbol, or NONE when the
 * name is not the attach method or its parameter type is not a known layout. */
int vt__torch_layout_of(const char *mangled);
const char *vt__torch_layout_name(int layout);

/* What the ELF reader found (addresses are run-time: load base + st_value). */
typedef struct vt__torch_syms {
    uint64_t allocator;    /* &allocator (std::atomic<CUDAAllocator*>) */
    uint64_t vtable;       /* the NativeCachingAllocator vtable symbol's start */
    uint64_t vtable_size;  /* its st_size */
    uint64_t attach;       /* the attach method */
    uint64_t initialized;  /* NativeCachingAllocator::initialized(), 0 if absent */
    int layout;            /* VT_TORCH_LAYOUT_* of the attach method's parameter */
    char attach_name[512]; /* its mangled name, for messages */
} vt__torch_syms;

/* vt__torch_read_symtab: reads the .symtab of the ELF file at path (loaded at base) into *out.
 * Returns 0, or -1 with a reason in why (no file, not ELF, stripped, a symbol missing). */
int vt__torch_read_symtab(const char *path, uint64_t base, vt__torch_syms *out, char *why,
                          size_t whylen);

/* vt__torch_find_slot: the vtable slot index (from the address point, vtable + 16) of the
 * method `fn` in a vtable of `size` bytes at `vtable`, checking that the object's vptr `vptr`
 * is that address point. Returns the index, or -1 with a reason in why. */
long vt__torch_find_slot(const uint64_t *vtable, uint64_t size, uint64_t vptr, uint64_t fn,
                         char *why, size_t whylen);

/* The self-check. State machine: IDLE -> (attach) CHECKING -> ACTIVE | REFUSED.
 * vt__torch_check: called with each segment event (SEGMENT_ALLOC / SEGMENT_MAP) the tracker
 * reports while CHECKING, against the segment the hook last recorded on the thread
 * (expect_addr/size; map: a SEGMENT_MAP range must contain the last mapped chunk and end with
 * it). Returns 1 (match), 0 (mismatch, reason in why). */
int vt__torch_check(int action, uint64_t addr, uint64_t size, uint64_t expect_addr,
                    uint64_t expect_size, int expect_map, char *why, size_t whylen);

enum vt__torch_state { VT_TORCH_IDLE, VT_TORCH_CHECKING, VT_TORCH_ACTIVE, VT_TORCH_REFUSED };
/* vt__torch_state: the current state; vt__torch_reason: why REFUSED ("" otherwise). */
int vt__torch_state(void);
const char *vt__torch_reason(void);

/* vt__torch_on_entry: the tracker callback's C side: one TraceEntry (prefix) from PyTorch. */
void vt__torch_on_entry(const vt__torch_entry *e);

/* vt__torch_reset: back to IDLE (fork child, tests). */
void vt__torch_reset(void);

/* ---- bridge.cpp ------------------------------------------------------------------------------
 * vt__torch_bridge_attach: builds a std::function whose call hands the entry to on_entry
 * (vt__torch_on_entry: passed in, so bridge.cpp calls nothing of torchalloc.c by name) and
 * calls method(self, &function) (the member function's Itanium ABI: a std::function argument
 * is passed by address of a caller-owned temporary). */
void vt__torch_bridge_attach(void *self, void *method, void (*on_entry)(const vt__torch_entry *e));

#endif
