/* alloc_prog.c — tensor sequences on the fake libc10_cuda.so (tests/fakecuda/c10/) whose reserved
 * peak each allocator setting changes (tests/integration/alloc_settings.sh); prints the fake's
 * memory_stats() counters as one JSON line.
 * usage: alloc_prog LIBC10_CUDA.SO gc|split|stream [on]
 *   gc      tensors of growing size, each freed before the next: every one needs a new segment
 *           (run with garbage_collection_threshold and FAKE_C10_MEM_FRACTION: old cached
 *           segments are released before new ones)
 *   split   a 100 MiB tensor freed, then 30, 90 and 80 MiB ones (run with max_split_size_mb:64
 *           and FAKE_C10_MEM_FRACTION=200M: the cached 100 MiB block is not split, serves the
 *           90 MiB request whole, and is released alone when the 80 MiB segment does not fit)
 *   stream  with "on", tensors used on other streams (fake_c10_record_stream) are freed while
 *           those streams' work is pending: their blocks come back only later. */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((size_t)1 << 20)

static void *(*t_alloc)(size_t);
static void (*t_free)(void *);
static void (*t_record)(void *, uintptr_t);
static void (*t_done)(uintptr_t);
static int g_on;

static void *tensor(size_t n)
{
    void *p = t_alloc(n);
    if (!p) {
        fprintf(stderr, "alloc_prog: allocation of %zu bytes failed\n", n);
        exit(1);
    }
    return p;
}

/* alloc_prog_gc: a live small and a live split tensor, then ten growing ones in turn */
void alloc_prog_gc(void)
{
    void *keep_small = tensor(4000), *keep_mid = tensor(5 * MiB + 3);
    for (size_t i = 0; i < 10; i++)
        t_free(tensor((12 + 2 * i) * MiB + 512 * i));
    t_free(keep_mid);
    t_free(keep_small);
}

void alloc_prog_split(void)
{
    t_free(tensor(100 * MiB));
    void *b = tensor(30 * MiB + 1000); /* under 64 MiB: never the cached oversize block */
    void *c = tensor(90 * MiB);        /* within 20 MiB of it: takes it whole */
    t_free(b);
    t_free(c);
    t_free(tensor(80 * MiB)); /* past the limit: the oversize segment released alone */
}

/* use: the tensor is used on `stream` (with "on") */
static void use(void *p, uintptr_t stream)
{
    if (g_on)
        t_record(p, stream);
}

void alloc_prog_stream(void)
{
    void *a = tensor(30 * MiB);
    use(a, 7);
    t_free(a);                         /* stream 7 still reads it */
    void *b = tensor(30 * MiB - 4096); /* fits its block, which is not free yet */
    void *s = tensor(300000);
    use(s, 7);
    t_free(s);
    t_done(7); /* stream 7 finished: the next allocation returns a's and s's blocks */
    t_free(b);
    void *c = tensor(30 * MiB);
    use(c, 9);
    t_free(c); /* stream 9 never reported done: empty_cache synchronizes */
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: alloc_prog LIBC10_CUDA.SO gc|split|stream [on]\n");
        return 2;
    }
    g_on = argc > 3 && strcmp(argv[3], "on") == 0;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "alloc_prog: %s\n", dlerror());
        return 2;
    }
    *(void **)&t_alloc = dlsym(h, "fake_c10_malloc");
    *(void **)&t_free = dlsym(h, "fake_c10_free");
    *(void **)&t_record = dlsym(h, "fake_c10_record_stream");
    *(void **)&t_done = dlsym(h, "fake_c10_stream_done");
    void (*empty)(void) = (void (*)(void))dlsym(h, "fake_c10_empty_cache");
    const char *(*stats)(uint64_t *) =
        (const char *(*)(uint64_t *))dlsym(h, "fake_c10_memory_stats");
    if (!t_alloc || !t_free || !t_record || !t_done || !empty || !stats)
        return 2;
    if (strcmp(argv[2], "gc") == 0)
        alloc_prog_gc();
    else if (strcmp(argv[2], "split") == 0)
        alloc_prog_split();
    else if (strcmp(argv[2], "stream") == 0)
        alloc_prog_stream();
    else
        return 2;
    empty();
    uint64_t v[12];
    stats(v);
    static const char *const names[12] = {"requested",      "peak_requested", "allocated",
                                          "peak_allocated", "reserved",       "peak_reserved",
                                          "device_allocs",  "device_frees",   "retries",
                                          "ooms",           "allocs",         "frees"};
    printf("{");
    for (int i = 0; i < 12; i++)
        printf("%s\"%s\":%" PRIu64, i ? "," : "", names[i], v[i]);
    printf("}\n");
    return 0;
}
