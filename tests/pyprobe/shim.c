/* shim.c — a tiny shared object that links preload/stacks/pyframes.c on its own (with stand-ins for
 * the writer, realsym and thread roles) so tests/python/shim_check.py can call
 * vt__py_capture through ctypes.CDLL — GIL released, as in a real hook — and compare what it
 * read with what the interpreter itself reports. Built by tests/integration/py_shim.sh. */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "../../preload/core/output.h"
#include "../../preload/core/quietio.h"
#include "../../preload/core/realsym.h"
#include "../../preload/core/thread.h"
#include "../../preload/stacks/pyframes.h"
#include "vramtrace/trace_format.h"

#define SHIM_CODES 4096
typedef struct code_entry {
    int used;
    uint32_t first_line;
    char file[512], qual[256];
    uint8_t table[8192];
    uint32_t table_len;
} code_entry;
static code_entry codes[SHIM_CODES];
static vt_rec_pyinfo pyinfo;
static int pyinfo_count, code_records;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* the program's stderr as taken at the start (config.c's, quietio.h): warnings go there */
struct vt__stderr_id vt__stderr_id;
__attribute__((constructor)) static void shim_stderr(void)
{
    vt__stderr_take();
}

/* vt__real_dlsym: stand-in for realsym.c (no dlsym override in this object). */
void *vt__real_dlsym(void *handle, const char *name)
{
    return dlsym(handle, name);
}

/* vt__thread_register: stand-in for core/thread.c, whose registration thread.h's inline
 * vt__thread_role reads (vt__t_self): autograd by the thread's name (set before the thread's
 * first capture), main by its id, as thread.c's; no THREAD record. */
__thread vt__thread_self vt__t_self;
_Atomic uint32_t vt__thread_generation = 1;
uint32_t vt__thread_register(void)
{
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    vt__t_self.role = strncmp(name, "pt_autograd_", 12) == 0 ? VT_ROLE_AUTOGRAD
                      : gettid() == getpid()                 ? VT_ROLE_MAIN
                                                             : VT_ROLE_OTHER;
    vt__t_self.index = 1;
    vt__t_self.generation = atomic_load(&vt__thread_generation);
    return 0;
}

/* vt__write: stand-in for writer.c: keeps the PYINFO record. */
int vt__write(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2, size_t n2)
{
    (void)flags, (void)p2, (void)n2;
    if (type == VT_REC_PYINFO && n1 == sizeof pyinfo) {
        pthread_mutex_lock(&lock);
        memcpy(&pyinfo, p1, sizeof pyinfo);
        pyinfo_count++;
        pthread_mutex_unlock(&lock);
    }
    return 0;
}

/* vt__write_strings: stand-in for writer.c: keeps CODE records by id. */
int vt__write_strings(uint16_t type, uint16_t flags, const void *fixed, size_t nfixed,
                      const char *const *strs, const uint32_t *lens, int nstrs)
{
    (void)flags;
    if (type != VT_REC_CODE || nfixed != sizeof(vt_rec_code) || nstrs != 3)
        return 0;
    vt_rec_code r;
    memcpy(&r, fixed, sizeof r);
    if (r.code_id >= SHIM_CODES)
        return 0;
    pthread_mutex_lock(&lock);
    code_entry *c = &codes[r.code_id];
    code_records++;
    if (!c->used) {
        c->used = 1;
        c->first_line = r.first_line;
        memcpy(c->file, strs[0], lens[0] < sizeof c->file - 1 ? lens[0] : sizeof c->file - 1);
        memcpy(c->qual, strs[1], lens[1] < sizeof c->qual - 1 ? lens[1] : sizeof c->qual - 1);
        c->table_len = lens[2] < sizeof c->table ? lens[2] : (uint32_t)sizeof c->table;
        memcpy(c->table, strs[2], c->table_len);
    } else {
        c->used = 2; /* written twice: the test fails on this */
    }
    pthread_mutex_unlock(&lock);
    return 0;
}

/* shim_capture / shim_last: the functions under test, callable from ctypes. */
VT__EXPORT int shim_capture(uint64_t *out, int max)
{
    return vt__py_capture(out, max, NULL);
}
VT__EXPORT int shim_last(uint64_t *out, int max)
{
    return vt__py_last_main_stack(out, max, NULL);
}

/* shim_code: what the CODE record of `id` said. Returns the line table length, or -1 for an
 * unknown id, -2 for an id written twice. file/qual are NUL-terminated copies. */
VT__EXPORT int shim_code(uint32_t id, char *file, char *qual, int *first_line, uint8_t *table)
{
    if (id >= SHIM_CODES || !codes[id].used)
        return -1;
    if (codes[id].used != 1)
        return -2;
    strcpy(file, codes[id].file);
    strcpy(qual, codes[id].qual);
    *first_line = (int)codes[id].first_line;
    memcpy(table, codes[id].table, codes[id].table_len);
    return (int)codes[id].table_len;
}

/* shim_pyinfo: the PYINFO fields into v[4]; returns how many PYINFO records were written. */
VT__EXPORT int shim_pyinfo(uint32_t *v)
{
    memcpy(v, &pyinfo, sizeof pyinfo);
    return pyinfo_count;
}

/* shim_autograd_thread: runs a C thread named pt_autograd_0 that copies the last main stack
 * into out[] (as PyTorch's backward threads would get it); returns the count. */
typedef struct {
    uint64_t *out;
    int max, n;
} ag_arg;
static void *ag_main(void *p)
{
    ag_arg *a = p;
    prctl(PR_SET_NAME, "pt_autograd_0", 0, 0, 0);
    uint64_t own[8];
    int mine = vt__py_capture(own, 8, NULL); /* a thread with no Python state: nothing */
    a->n = mine == 0 ? vt__py_last_main_stack(a->out, a->max, NULL) : -1;
    return NULL;
}
VT__EXPORT int shim_autograd_thread(uint64_t *out, int max)
{
    ag_arg a = {out, max, 0};
    pthread_t t;
    if (pthread_create(&t, NULL, ag_main, &a) != 0)
        return -1;
    pthread_join(t, NULL);
    return a.n;
}

/* shim_bench: nanoseconds per vt__py_capture of the calling thread's stack, over iters calls
 * (reported by shim_check.py; never asserted). */
#include <time.h>
VT__EXPORT double shim_bench(int iters)
{
    uint64_t buf[128];
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (int i = 0; i < iters; i++)
        vt__py_capture(buf, 128, NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / iters;
}
