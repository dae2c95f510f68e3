/* two_runtimes.c — a process with three CUDA runtimes: the one it links (global scope) and two
 * copies loaded RTLD_LOCAL by path, as an extension module's bundled runtime beside another
 * framework's would be. Each runtime keeps its own last error; a call made through one runtime's
 * handle must reach that runtime. Run by tests/integration/two_runtimes.sh.
 * usage: two_runtimes A/libcudart.so.13 B/libcudart.so.13
 * prints "errors: global G A A B B" (the last error each runtime reports after B's failed
 * request) and "allocs: ok" when every allocation and free succeeded. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

typedef int cudaError_t;
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);
cudaError_t cudaGetLastError(void);
typedef cudaError_t (*malloc_fn)(void **, size_t);
typedef cudaError_t (*free_fn)(void *);
typedef cudaError_t (*last_fn)(void);

struct runtime {
    malloc_fn alloc;
    free_fn release;
    last_fn last;
};

static int open_runtime(const char *path, struct runtime *rt)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "two_runtimes: %s\n", dlerror());
        return -1;
    }
    rt->alloc = (malloc_fn)dlsym(h, "cudaMalloc");
    rt->release = (free_fn)dlsym(h, "cudaFree");
    rt->last = (last_fn)dlsym(h, "cudaGetLastError");
    return rt->alloc && rt->release && rt->last ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct runtime a, b;
    if (argc != 3 || open_runtime(argv[1], &a) || open_runtime(argv[2], &b)) {
        fprintf(stderr, "usage: two_runtimes A/libcudart.so.13 B/libcudart.so.13\n");
        return 2;
    }
    void *g = NULL, *pa = NULL, *pb = NULL, *huge = NULL;
    int ok = cudaMalloc(&g, 1u << 20) == 0;
    (void)cudaGetLastError();
    int failed = b.alloc(&huge, (size_t)1 << 50) != 0; /* 1 PiB: refused by every card */
    printf("errors: global %d A %d B %d\n", cudaGetLastError(), a.last(), b.last());
    ok &= failed && a.alloc(&pa, 3u << 20) == 0 && b.alloc(&pb, 5u << 20) == 0;
    ok &= a.release(pa) == 0 && b.release(pb) == 0 && cudaFree(g) == 0;
    printf("allocs: %s\n", ok ? "ok" : "failed");
    return ok ? 0 : 1;
}
