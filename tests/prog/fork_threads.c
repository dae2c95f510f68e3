/* fork_threads.c — forks from a multithreaded parent, run by tests/integration/fork_threads.sh:
 * worker threads allocate (native stacks unwound under the preload: the loader's lock taken
 * and released all the time) and walk the loaded objects, while the main thread forks; each
 * child makes CUDA calls and exits. A child that does not exit in time is killed and counted.
 * usage: fork_threads FORKS [alloc|dl|single|big] [TIMEOUT_MS] (single: no other thread; big:
 * none either at the forks, but 100,000 allocations first on a thread that ends, a trace whose
 * windows reach 2 MiB: the preload's helper thread runs); prints "threads T" (the process's, before
 * the forks) and "forks N hung H failed F". */
#include <dirent.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int cudaError_t;
cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);

static atomic_int g_stop;

/* the worker's allocations come from a few call chains, so unwinding keeps finding new
 * addresses (and walking the loaded objects for them) */
__attribute__((noinline)) void fork_alloc_leaf(size_t n)
{
    void *p = NULL;
    if (!cudaMalloc(&p, n))
        cudaFree(p);
}

__attribute__((noinline)) void fork_alloc_mid(size_t n)
{
    fork_alloc_leaf(n);
    __asm__ volatile("" ::: "memory");
}

static void *allocator(void *arg)
{
    (void)arg;
    for (size_t i = 0; !atomic_load(&g_stop); i++) {
        if (i & 1)
            fork_alloc_mid(4096 + (i & 255) * 256);
        else
            fork_alloc_leaf(4096 + (i & 255) * 256);
    }
    return NULL;
}

static int count_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(int *)data;
    return 0;
}

/* walker: what C++ exception unwinding or a profiler does: walks the loaded objects, holding
 * the loader's lock for the length of each walk */
static void *walker(void *arg)
{
    (void)arg;
    int n = 0;
    while (!atomic_load(&g_stop))
        dl_iterate_phdr(count_object, &n);
    return NULL;
}

__attribute__((noinline)) int fork_child_work(void)
{
    void *p = NULL;
    if (cudaMalloc(&p, 1 << 20) || cudaFree(p))
        return 1;
    if (cudaMalloc(&p, 3 << 20) || cudaFree(p))
        return 1;
    return 0;
}

static long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* hundred_k: 100,000 allocations (big) */
static void *hundred_k(void *arg)
{
    void *p;
    for (int i = 0; i < 100000; i++)
        if (cudaMalloc(&p, 4096) || cudaFree(p))
            exit(1);
    return arg;
}

/* threads: this process's threads (/proc/self/task's entries) */
static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    int forks = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "alloc";
    int dl = !strcmp(mode, "dl"), big = !strcmp(mode, "big");
    int single = big || !strcmp(mode, "single");
    long timeout = argc > 3 ? atol(argv[3]) : 3000;
    if (forks <= 0 || timeout <= 0) {
        fprintf(stderr, "usage: fork_threads FORKS [alloc|dl|single|big] [TIMEOUT_MS]\n");
        return 2;
    }
    void *warm = NULL; /* the runtime, the context and the parent's trace exist before */
    if (cudaMalloc(&warm, 256) || cudaFree(warm))
        return 1;
    pthread_t b; /* big: the allocations on a thread of its own, joined (a helper starts only in a
                  * process that has had a thread besides its first) */
    if (big && (pthread_create(&b, NULL, hundred_k, NULL) || pthread_join(b, NULL)))
        return 1;
    printf("threads %d\n", threads());
    fflush(stdout);
    pthread_t a, w;
    if ((!single && pthread_create(&a, NULL, allocator, NULL)) ||
        (dl && pthread_create(&w, NULL, walker, NULL))) {
        fprintf(stderr, "fork_threads: cannot start a thread\n");
        return 1;
    }
    int hung = 0, failed = 0;
    for (int i = 0; i < forks; i++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0)
            exit(fork_child_work()); /* exit: the child's trace gets its trailer */
        int st = 0;
        long t0 = now_ms();
        pid_t r;
        while ((r = waitpid(pid, &st, WNOHANG)) == 0 && now_ms() - t0 < timeout) {
            struct timespec ts = {0, 200000};
            nanosleep(&ts, NULL);
        }
        if (r == 0) {
            hung++;
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
        }
    }
    atomic_store(&g_stop, 1);
    if (!single)
        pthread_join(a, NULL);
    if (dl)
        pthread_join(w, NULL);
    printf("forks %d hung %d failed %d\n", forks, hung, failed);
    return hung || failed ? 1 : 0;
}
