/* trace_enc.h — the one test-trace encoder of the unit tests: a tiny writer independent of
 * preload/writer.c that builds trace files record by record (header, any record with strings,
 * alloc / free / trailer shorthands), to a temp file. Include after <cmocka.h>. */
#ifndef VT_TEST_TRACE_ENC_H
#define VT_TEST_TRACE_ENC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vramtrace/trace_format.h"

typedef struct wbuf {
    unsigned char *p;
    size_t n, cap;
} wbuf;

static inline void w_bytes(wbuf *w, const void *p, size_t n)
{
    if (w->n + n > w->cap) {
        w->cap = (w->n + n) * 2 + 4096;
        w->p = realloc(w->p, w->cap);
        assert_non_null(w->p);
    }
    memcpy(w->p + w->n, p, n);
    w->n += n;
}

static inline void w_header(wbuf *w, uint16_t major, uint16_t minor)
{
    vt_file_header h = {{0}, major, minor, 32, 111, 222};
    memcpy(h.magic, VT_MAGIC, 8);
    w_bytes(w, &h, sizeof h);
}

/* A record under construction: rec_* append to a scratch payload, w_rec emits it. */
static unsigned char g_pl[1 << 16];
static size_t g_pn;
static inline void pl_reset(void)
{
    g_pn = 0;
}
static inline void pl(const void *p, size_t n)
{
    memcpy(g_pl + g_pn, p, n);
    g_pn += n;
}
static inline void pl_str(const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    pl(&n, 4);
    pl(s, n);
}

/* w_rec: header + g_pl + zero padding to 8; returns the record's offset. */
static inline size_t w_rec(wbuf *w, uint16_t type, uint16_t flags)
{
    size_t off = w->n;
    uint32_t size = (uint32_t)((8 + g_pn + 7) & ~(size_t)7);
    vt_rec_header h = {type, flags, size};
    w_bytes(w, &h, 8);
    w_bytes(w, g_pl, g_pn);
    static const unsigned char z[8];
    w_bytes(w, z, size - 8 - g_pn);
    pl_reset();
    return off;
}

static inline void w_alloc(wbuf *w, unsigned api, uint16_t extra, uint64_t ns, uint32_t thread,
                           uint64_t addr, uint64_t size, uint32_t stack)
{
    vt_rec_alloc a = {VT_TT_MAKE(ns, thread), addr, size, stack, 0, 0};
    pl(&a, sizeof a);
    w_rec(w, VT_REC_ALLOC, (uint16_t)(VT_EVF_MAKE(api, 0) | extra));
}

static inline void w_free(wbuf *w, unsigned api, uint64_t ns, uint64_t addr)
{
    vt_rec_free f = {VT_TT_MAKE(ns, 0), addr};
    pl(&f, sizeof f);
    w_rec(w, VT_REC_FREE, VT_EVF_MAKE(api, 0));
}

static inline void w_trailer(wbuf *w, uint64_t nev)
{
    vt_rec_trailer t = {999, nev, 0, 0, 0, 0};
    pl(&t, sizeof t);
    w_rec(w, VT_REC_TRAILER, 0);
}

static char g_path[4096];
/* every file save() made, removed when the test binary exits */
static char g_saved[64][4096];
static int g_n_saved;

static void saved_remove(void)
{
    for (int i = 0; i < g_n_saved; i++)
        unlink(g_saved[i]);
}

/* save_to: writes w to path. */
static inline void save_to(const wbuf *w, const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_true(fwrite(w->p, 1, w->n, f) == w->n);
    fclose(f);
}

/* save: writes w to a fresh temp file (g_path, in TMPDIR) and returns its path; the file is
 * removed at exit. */
static inline const char *save(const wbuf *w)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(g_path, sizeof g_path, "%s/vt-unit-trace.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(g_path);
    assert_true(fd >= 0);
    if (g_n_saved == 0)
        atexit(saved_remove);
    if (g_n_saved < (int)(sizeof g_saved / sizeof g_saved[0]))
        strcpy(g_saved[g_n_saved++], g_path);
    assert_true(write(fd, w->p, w->n) == (ssize_t)w->n);
    close(fd);
    return g_path;
}

/* w_rec_strs: one record of payload p (n bytes) followed by the strings strs[0..ns). */
static inline size_t w_rec_strs(wbuf *w, uint16_t type, uint16_t flags, const void *p, size_t n,
                                const char *const *strs, int ns)
{
    pl(p, n);
    for (int i = 0; i < ns; i++)
        pl_str(strs[i]);
    return w_rec(w, type, flags);
}

#endif
