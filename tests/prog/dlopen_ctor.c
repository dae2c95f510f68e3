/* dlopen_ctor.c — a library whose constructor allocates, loaded by one thread while another
 * allocates from a stack not seen before; run by tests/integration/dlopen_ctor.sh. The loading
 * thread holds the loader's lock while the constructor runs (it waits there until the main
 * thread's allocation is under way); the main thread's hook looks up its new return addresses
 * with dladdr, which waits for that lock. Built twice from this file: the program, and with
 * -DVT_DLOPEN_CTOR_LIB the library (which finds vt_ctor_running in the program: -rdynamic).
 * usage: dlopen_ctor LIBRARY.so; prints "done" when both allocations returned. */
#include <semaphore.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

typedef int cudaError_t;
cudaError_t cudaMalloc(void **p, size_t n);
extern sem_t vt_ctor_running;

#ifdef VT_DLOPEN_CTOR_LIB
/* the constructor: from here on the loading thread holds the loader's lock; the main thread's
 * allocation (posted to) reaches its SYMBOL records meanwhile, then this one allocates */
__attribute__((constructor)) static void dlopen_ctor_alloc(void)
{
    void *p = NULL;
    sem_post(&vt_ctor_running);
    usleep(300 * 1000);
    if (cudaMalloc(&p, 3u << 20) != 0)
        fprintf(stderr, "dlopen_ctor: the constructor's cudaMalloc failed\n");
}
#else
#include <dlfcn.h>
#include <pthread.h>

sem_t vt_ctor_running;

static void *load(void *path)
{
    if (!dlopen(path, RTLD_NOW))
        fprintf(stderr, "dlopen_ctor: %s\n", dlerror());
    return NULL;
}

/* a call site of its own: the stack it allocates from is new, its return addresses unseen */
__attribute__((noinline)) static int fresh_site(void)
{
    void *p = NULL;
    return cudaMalloc(&p, 5u << 20);
}

int main(int argc, char **argv)
{
    void *p = NULL;
    pthread_t t;
    if (argc != 2) {
        fprintf(stderr, "usage: dlopen_ctor LIBRARY.so\n");
        return 2;
    }
    /* the trace open and the real functions found before the race */
    if (cudaMalloc(&p, 1u << 20) != 0 || sem_init(&vt_ctor_running, 0, 0) != 0 ||
        pthread_create(&t, NULL, load, argv[1]) != 0)
        return 1;
    sem_wait(&vt_ctor_running);
    int rc = fresh_site();
    pthread_join(t, NULL);
    printf("done\n");
    return rc != 0;
}
#endif
