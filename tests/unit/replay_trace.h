/* replay_trace.h — the replay tests' trace scenes (test_replay.c, test_replay_snaps.c): a trace
 * built in memory with the unit tests' encoder (trace_enc.h), code objects and one-frame stacks,
 * allocations and frees on a thread (backward: the autograd engine's), then written and
 * replayed. Include after <cmocka.h>; one test file each (its state is the file's own). */
#ifndef VT_TEST_REPLAY_TRACE_H
#define VT_TEST_REPLAY_TRACE_H

#include "replay.h"
#include "trace_enc.h"

static wbuf g_w; /* the trace being written (trace_enc.h) */

static void rec(uint16_t type, uint16_t flags, const void *p, size_t n, const char *const *strs,
                int ns)
{
    w_rec_strs(&g_w, type, flags, p, n, strs, ns);
}

/* begin / end: a trace in g_w, then written to path. */
static void begin(void)
{
    g_w.n = 0;
    w_header(&g_w, VT_VERSION_MAJOR, VT_VERSION_MINOR);
}

/* begin_file: path (a mkstemp template) made, and a trace begun for it */
static void begin_file(char *path)
{
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    begin();
}

static void end(const char *path)
{
    save_to(&g_w, path);
}

/* replay_ended: the trace in g_w ended by a trailer, written to path and replayed into *r */
static void replay_ended(const char *path, replay_result *r)
{
    vt_rec_trailer t = {200000, 9, 0, 20, 0, 0};
    rec(VT_REC_TRAILER, 0, &t, sizeof t, NULL, 0);
    end(path);
    char err[256];
    assert_int_equal(replay_file(path, r, err, sizeof err), 0);
}

static void code(uint32_t id, const char *file, const char *qual)
{
    vt_rec_code c = {id, 1};
    const char *s[3] = {file, qual, ""};
    rec(VT_REC_CODE, 0, &c, sizeof c, s, 3);
}

static void stack(uint32_t id, uint32_t code_id)
{
    struct {
        vt_rec_stack s;
        uint64_t f;
    } r = {{id, 0, 1}, VT_PYFRAME(code_id, 0)};
    rec(VT_REC_STACK, 0, &r, sizeof r, NULL, 0);
}

static unsigned g_alloc_api = VT_API_cudaMallocAsync, g_free_api = VT_API_cudaFreeAsync;

static void alloc(uint32_t thread, int backward, uint64_t addr, uint64_t size, uint32_t st,
                  int result)
{
    static uint64_t t = 1000;
    vt_rec_alloc a = {
        VT_TT_MAKE(t += 1000, thread), result ? 0 : addr, size, st, 0, (int16_t)result};
    uint16_t fl = VT_EVF_MAKE(g_alloc_api, 0) | (backward ? VT_EVF_BACKWARD : 0) |
                  (result ? VT_EVF_FAILED : 0);
    rec(VT_REC_ALLOC, fl, &a, sizeof a, NULL, 0);
}

static void release(uint32_t thread, int backward, uint64_t addr)
{
    vt_rec_free f = {VT_TT_MAKE(99999, thread), addr};
    rec(VT_REC_FREE, VT_EVF_MAKE(g_free_api, 0) | (backward ? VT_EVF_BACKWARD : 0), &f, sizeof f,
        NULL, 0);
}

#endif
