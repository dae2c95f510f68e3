/* infer_run.h — a run's tensor events made by hand for the inference pass's unit tests
 * (test_infer.c, test_infer_forwards.c): each tensor at an address of its own, fed to the pass
 * as the replay would, and the values it infers. */
#ifndef VT_TEST_INFER_RUN_H
#define VT_TEST_INFER_RUN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "infer.h"
#include "reader.h"

/* A run's events, fed to the pass as the replay would: every tensor at an address of its own. */
typedef struct run {
    infer_pass *ip;
    uint64_t event, addr;
} run;

static inline void run_begin(run *r)
{
    r->ip = infer_pass_new();
    assert_non_null(r->ip);
    r->event = 0;
    r->addr = 0x7f0000000000ull;
}

static inline void feed(run *r, int is_alloc, unsigned api, int backward, int failed, uint64_t addr,
                        uint64_t size)
{
    reader_event ev;
    memset(&ev, 0, sizeof ev);
    ev.api = (uint8_t)api;
    ev.backward = backward;
    ev.failed = failed;
    ev.addr = addr;
    ev.size = size;
    infer_pass_event(r->ip, ++r->event, is_alloc, &ev, 0);
}

/* t: a tensor of size bytes (backward: made in the backward); its address */
static inline uint64_t t(run *r, uint64_t size, int backward)
{
    r->addr += (size + 511) / 512 * 512 + 512;
    feed(r, 1, VT_API_torchAlloc, backward, 0, r->addr, size);
    return r->addr;
}

static inline void die(run *r, uint64_t addr)
{
    feed(r, 0, VT_API_torchFree, 0, 0, addr, 0);
}

static inline void oom(run *r)
{
    feed(r, 1, VT_API_torchOom, 0, 1, 0, 1ull << 34);
}

static inline void run_end(run *r, infer_result *out)
{
    assert_int_equal(infer_finish(r->ip, out), 0);
    infer_pass_free(r->ip);
}

static inline int64_t val(const infer_result *out, infer_key k)
{
    assert_true(out->v[k].known);
    return out->v[k].value;
}

#endif
