/* bridge.cpp — the only C++ in the preload: builds the std::function that PyTorch's
 * attachAllocatorTraceTracker takes and calls the method found by torchalloc.c. Built with
 * -fno-exceptions -fno-rtti and needs nothing from libstdc++.so (a capture-less lambda is
 * stored inside the std::function: no allocation, no type info). */
#include <functional>

extern "C" {
#include "torchalloc.h"
}

namespace
{
/* Our stand-in for PyTorch's TraceEntry: only ever seen through a reference (a pointer), so
 * std::function<void(const entry_ref&)> has the layout and calling convention of PyTorch's
 * std::function<void(const TraceEntry&)>. */
struct entry_ref {
    vt__torch_entry prefix;
};
using tracker_fn = std::function<void(const entry_ref &)>;
using attach_fn = void (*)(void *self, tracker_fn *tracker);
} // namespace

/* the C side of the callback (vt__torch_on_entry), set before the first attach; a
 * capture-less lambda calls it through this pointer */
static void (*g_on_entry)(const vt__torch_entry *e);

extern "C" void vt__torch_bridge_attach(void *self, void *method,
                                        void (*on_entry)(const vt__torch_entry *e))
{
    __atomic_store_n(&g_on_entry, on_entry, __ATOMIC_RELEASE);
    tracker_fn f = [](const entry_ref &e) {
        __atomic_load_n(&g_on_entry, __ATOMIC_ACQUIRE)(&e.prefix);
    };
    /* a member function taking a class type with a non-trivial copy constructor by value:
     * the caller makes the temporary and passes its address, then destroys it after the call */
    reinterpret_cast<attach_fn>(method)(self, &f);
}
