/* autograd.c — a stand-in for PyTorch's backward engine, built by tests/integration/py_frames.sh
 * against the fake libcudart: vt_test_autograd() starts a C thread named pt_autograd_0 that
 * allocates while the calling (Python) thread waits in this ctypes call with the GIL released. */
#include <pthread.h>
#include <stddef.h>
#include <sys/prctl.h>

int cudaMalloc(void **p, size_t size);
int cudaFree(void *p);

typedef struct job {
    size_t size;
    int count, rc;
} job;

/* worker: names itself like PyTorch's autograd threads, then count cudaMalloc+cudaFree of
 * size, size + 4096, ...; job->rc = the first error (0 = all succeeded). */
static void *worker(void *arg)
{
    job *j = arg;
    prctl(PR_SET_NAME, "pt_autograd_0", 0, 0, 0);
    for (int i = 0; i < j->count && j->rc == 0; i++) {
        void *p = NULL;
        j->rc = cudaMalloc(&p, j->size + (size_t)i * 4096);
        if (j->rc == 0)
            j->rc = cudaFree(p);
    }
    return NULL;
}

/* vt_test_autograd: runs worker to completion; returns its result, or -1 if no thread. */
__attribute__((visibility("default"))) int vt_test_autograd(size_t size, int count)
{
    job j = {size, count, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, worker, &j) != 0)
        return -1;
    pthread_join(t, NULL);
    return j.rc;
}
