/* test_hooks.c — the lists that must agree: every runtime / driver API of the trace format
 * (VT_APIS) is hooked by some function of preload/hooks/hook_table.h and in the layer the
 * format says, and none of the allocator's (layer 3: only preload/torch/ records them); every
 * hook names an API of the format (that part is checked by the compiler); record types are
 * 1..N with VT_REC_MAX_KNOWN = N; the stack mode names of include/vramtrace/env.h are the modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../preload/hooks/hook_table.h"
#include "vramtrace/env.h"
#include "vramtrace/trace_format.h"

typedef struct hook_row {
    const char *name;
    int api, layer;
} hook_row;

static const hook_row g_hooks[] = {
#define RT_ROW(name, api, ret, params) {#name, VT_API_##api, VT_LAYER_RUNTIME},
    VT_RUNTIME_HOOKS(RT_ROW)
#undef RT_ROW
#define DRV_ROW(name, api, ret, params) {#name, VT_API_##api, VT_LAYER_DRIVER},
        VT_DRIVER_FUNCS(DRV_ROW)
#undef DRV_ROW
};
enum { NHOOKS = sizeof g_hooks / sizeof g_hooks[0] };

static void every_api_hooked_in_its_layer(void **state)
{
    (void)state;
#define API_CHECK(api_, id_, layer_, kind_, space_)                                                \
    {                                                                                              \
        int found = 0;                                                                             \
        for (int i = 0; i < NHOOKS; i++)                                                           \
            if (g_hooks[i].api == id_) {                                                           \
                found = 1;                                                                         \
                if (g_hooks[i].layer != layer_)                                                    \
                    fail_msg("%s hooks API %s in layer %d, the format says %d", g_hooks[i].name,   \
                             #api_, g_hooks[i].layer, layer_);                                     \
            }                                                                                      \
        if (!found && layer_ != VT_LAYER_ALLOCATOR)                                                \
            fail_msg("API %s (%d) is in VT_APIS but nothing hooks it", #api_, id_);                \
        if (found && layer_ == VT_LAYER_ALLOCATOR)                                                 \
            fail_msg("API %s (%d) is the allocator tracker's, but a hook records it", #api_, id_); \
    }
    VT_APIS(API_CHECK)
#undef API_CHECK
}

static void hook_api_from_table(void **state)
{
    (void)state;
    assert_int_equal(VT_HOOK_API(cudaMallocAsync_ptsz), VT_API_cudaMallocAsync);
    assert_int_equal(VT_HOOK_API(cuMemAlloc_v2), VT_API_cuMemAlloc);
    assert_int_equal(VT_HOOK_API(cuCtxCreate_v2), VT_API_cuCtxCreate);
    for (int i = 0; i < NHOOKS; i++)
        for (int j = i + 1; j < NHOOKS; j++)
            if (!strcmp(g_hooks[i].name, g_hooks[j].name))
                fail_msg("%s is listed twice", g_hooks[i].name);
}

static void record_types_dense(void **state)
{
    (void)state;
    int seen[VT_REC_MAX_KNOWN + 1] = {0};
#define REC_SEEN(name, value, st, doc) seen[value]++;
    VT_RECORD_TYPES(REC_SEEN)
#undef REC_SEEN
    for (int t = 1; t <= VT_REC_MAX_KNOWN; t++)
        assert_int_equal(seen[t], 1);
    assert_int_equal(VT_REC_MAX_KNOWN, VT_REC_BLOCK);
}

static void stack_mode_names(void **state)
{
    (void)state;
    int n = 0, bits = 0;
#define MODE(name, b) n++, bits |= 1 << (b);
    VT_STACK_MODES(MODE)
#undef MODE
    assert_int_equal(n, 4);
    assert_int_equal(bits, 0xf); /* none, native, python, all: each once */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_api_hooked_in_its_layer),
        cmocka_unit_test(hook_api_from_table),
        cmocka_unit_test(record_types_dense),
        cmocka_unit_test(stack_mode_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
