/* test_stacks.c — stack interning without LD_PRELOAD: the same frames give the same id,
 * different frames (or a different native/Python split) a new one; each STACK record is
 * written once, each native ip gets one SYMBOL record that names its function, and the
 * table keeps its ids as it grows, also with threads interning at once; a fork child starts
 * over; a stack cut at its outer Python frames is another stack, its STACK record says so. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "trace_walk.h"

#include "../../preload/core/config.h"
#include "../../preload/core/output.h"
#include "vramtrace/trace_format.h"
#include "../../preload/stacks/stacks.h"
#include "../../preload/writer.h"

static char g_dir[64];

/* the file's records, copied out: type, payload, payload length */
typedef struct rec {
    uint16_t type, flags;
    uint32_t len;
    unsigned char *p;
} rec;

/* load: every record of the trace at path (header checked); *n the count; caller frees. */
static rec *load(const char *path, int *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    vt_file_header h;
    assert_int_equal(fread(&h, sizeof h, 1, f), 1);
    assert_memory_equal(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    int cap = 64, k = 0;
    rec *r = malloc(sizeof *r * (size_t)cap);
    vt_rec_header rh;
    long end = 0;
    while (next_header(f, &rh, &end)) {
        assert_true(rh.size >= 8 && rh.size % 8 == 0);
        if (k == cap)
            r = realloc(r, sizeof *r * (size_t)(cap *= 2));
        r[k].type = rh.type;
        r[k].flags = rh.flags;
        r[k].len = rh.size - 8;
        r[k].p = malloc(rh.size);
        assert_int_equal(fread(r[k].p, 1, r[k].len, f), r[k].len);
        k++;
    }
    fclose(f);
    *n = k;
    return r;
}

static void free_recs(rec *r, int n)
{
    for (int i = 0; i < n; i++)
        free(r[i].p);
    free(r);
}

static void use_output(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", g_dir, name);
    setenv("VRAMTRACE_OUTPUT", path, 1);
    unsetenv("VRAMTRACE_DISABLE");
    vt__config_reload();
    vt__writer_reset_for_tests();
}

/* fn: the address of a libc function by name (not a PLT stub of this executable). */
static uint64_t fn(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    assert_non_null(p);
    return (uint64_t)(uintptr_t)p;
}

static void test_intern(void **st)
{
    (void)st;
    use_output("stk.vt");
    uint64_t q = fn("qsort") + 3, b = fn("bsearch") + 5;
    uint64_t py = VT_PYFRAME(5, 10);
    uint64_t two[3] = {q, b, py};
    uint32_t id1 = vt__stack_intern(two, 2, 1);
    assert_true(id1 >= 1);
    assert_int_equal(vt__stack_intern(two, 2, 1), id1); /* same frames, same id */
    uint64_t copy[3] = {q, b, py};
    assert_int_equal(vt__stack_intern(copy, 2, 1), id1); /* by value, not by pointer */
    uint32_t id2 = vt__stack_intern(two, 1, 0);          /* a prefix is another stack */
    uint32_t id3 = vt__stack_intern(two, 1, 1);          /* same bytes as [q, b], split 1+1 */
    uint32_t id4 = vt__stack_intern(two, 2, 0);
    assert_true(id2 != id1 && id3 != id1 && id4 != id1);
    assert_true(id2 != id3 && id2 != id4 && id3 != id4);
    assert_int_equal(vt__stack_intern(two, 1, 1), id3);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();

    int n;
    rec *r = load(path, &n);
    int stacks = 0, symbols = 0, modules = 0;
    uint32_t seen[8];
    for (int i = 0; i < n; i++) {
        if (r[i].type == VT_REC_STACK) {
            vt_rec_stack s;
            memcpy(&s, r[i].p, sizeof s);
            size_t nf = (size_t)s.n_native + s.n_python;
            assert_true(r[i].len >= 8 + nf * 8);
            for (int j = 0; j < stacks; j++)
                assert_true(seen[j] != s.stack_id); /* each id written once */
            seen[stacks++] = s.stack_id;
            const uint64_t *fr = (const uint64_t *)(r[i].p + 8);
            int want_n = s.stack_id == id1 || s.stack_id == id4 ? 2 : 1;
            int want_p = s.stack_id == id1 || s.stack_id == id3 ? 1 : 0;
            assert_int_equal(s.n_native, want_n);
            assert_int_equal(s.n_python, want_p);
            assert_memory_equal(fr, two, nf * 8);
        } else if (r[i].type == VT_REC_MODULE) {
            modules++;
        } else if (r[i].type == VT_REC_SYMBOL) {
            symbols++;
            vt_rec_symbol y;
            memcpy(&y, r[i].p, sizeof y);
            assert_true(y.ip == q || y.ip == b);
            assert_true(y.module_id >= 1 && (int)y.module_id <= modules); /* MODULE first */
            uint32_t len;
            memcpy(&len, r[i].p + sizeof y, 4);
            char name[64] = {0};
            assert_true(len > 0 && len < sizeof name);
            memcpy(name, r[i].p + sizeof y + 4, len);
            /* the recorded name is the function (or an alias at the same address) */
            assert_int_equal(fn(name), y.ip - y.sym_offset);
            assert_int_equal(y.sym_offset, y.ip == q ? 3 : 5);
        }
    }
    assert_int_equal(stacks, 4);
    assert_int_equal(symbols, 2); /* one per native ip, not per stack */
    assert_true(modules >= 1);
    free_recs(r, n);
}

/* test_py_cut: a stack whose outer Python frames were left out is another stack than the same
 * frames complete, and only its STACK record has VT_STACKF_PY_CUT in its header's flags */
static void test_py_cut(void **st)
{
    (void)st;
    use_output("cut.vt");
    uint64_t fr[2] = {VT_PYFRAME(7, 2), VT_PYFRAME(8, 4)};
    uint32_t whole = vt__stack_intern(fr, 0, 2), cut = vt__stack_intern_cut(fr, 0, 2, 1);
    assert_true(whole >= 1 && cut >= 1 && cut != whole);
    assert_int_equal(vt__stack_intern_cut(fr, 0, 2, 1), cut); /* (the thread's memo too) */
    assert_int_equal(vt__stack_intern_cut(fr, 0, 2, 0), whole);
    assert_int_equal(vt__stack_intern_cut(fr, 0, 2, 1), cut); /* (the table's look-up) */
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    int n, stacks = 0;
    rec *r = load(path, &n);
    for (int i = 0; i < n; i++)
        if (r[i].type == VT_REC_STACK) {
            vt_rec_stack s;
            memcpy(&s, r[i].p, sizeof s);
            assert_int_equal(r[i].flags, s.stack_id == cut ? VT_STACKF_PY_CUT : 0);
            stacks++;
        }
    assert_int_equal(stacks, 2);
    free_recs(r, n);
}

/* check_stacks: the trace closed, it holds one STACK record for each of the n stacks, each with
 * the id ids[k] its interning gave, k found from its frame at index `at` (VT_PYFRAME(k + 1, .)) */
static void check_stacks(const uint32_t *ids, uint32_t n, int at)
{
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    int nrec;
    uint32_t stacks = 0;
    rec *r = load(path, &nrec);
    for (int i = 0; i < nrec; i++)
        if (r[i].type == VT_REC_STACK) {
            vt_rec_stack s;
            memcpy(&s, r[i].p, sizeof s);
            uint64_t f;
            memcpy(&f, r[i].p + 8 + 8 * at, 8);
            uint32_t k = VT_PYFRAME_CODE(f) - 1;
            assert_true(k < n);
            assert_int_equal(s.stack_id, ids[k]);
            stacks++;
        }
    assert_int_equal(stacks, n);
    free_recs(r, nrec);
}

/* many distinct stacks: the table grows and every id stays put. */
static void test_grow(void **st)
{
    (void)st;
    enum { N = 20000 };
    use_output("grow.vt");
    uint32_t *ids = malloc(sizeof *ids * N);
    for (uint32_t i = 0; i < N; i++) {
        uint64_t fr[2] = {VT_PYFRAME(i + 1, 2), VT_PYFRAME(7, i)};
        ids[i] = vt__stack_intern(fr, 0, 2);
        assert_true(ids[i] >= 1);
    }
    for (uint32_t i = 0; i < N; i++) {
        uint64_t fr[2] = {VT_PYFRAME(i + 1, 2), VT_PYFRAME(7, i)};
        assert_int_equal(vt__stack_intern(fr, 0, 2), ids[i]);
    }
    check_stacks(ids, N, 0);
    free(ids);
}

/* threads interning the same stacks at once, in different orders, while the table grows (a
 * lookup takes no lock): every stack gets one id on every thread, one STACK record in all. */
enum { T_THREADS = 8, T_STACKS = 6000 };
static uint32_t g_tids[T_THREADS][T_STACKS];

static void *intern_all(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    for (uint32_t k = 0; k < T_STACKS; k++) {
        uint32_t i = (uint32_t)(k * 7919u + t * 1237u) % T_STACKS; /* (7919 prime to 6000) */
        uint64_t fr[3] = {0x401000u + i, VT_PYFRAME(i + 1, 4), VT_PYFRAME(9, i)};
        g_tids[t][i] = vt__stack_intern(fr, 1, 2);
    }
    return NULL;
}

static void test_threads(void **st)
{
    (void)st;
    use_output("threads.vt");
    pthread_t th[T_THREADS];
    for (uintptr_t t = 0; t < T_THREADS; t++)
        assert_int_equal(pthread_create(&th[t], NULL, intern_all, (void *)t), 0);
    for (int t = 0; t < T_THREADS; t++)
        pthread_join(th[t], NULL);
    for (int i = 0; i < T_STACKS; i++) {
        assert_true(g_tids[0][i] >= 1);
        for (int t = 1; t < T_THREADS; t++)
            assert_int_equal(g_tids[t][i], g_tids[0][i]);
    }
    check_stacks(g_tids[0], T_STACKS, 1);
}

/* a fork child's trace names no stack yet: the thread's last stack, just interned in the
 * parent (and so in the thread's memo), is interned again there as id 1 with its STACK record,
 * not answered from the memo with the parent's id (whose entry the child freed) */
static void test_fork_child(void **st)
{
    (void)st;
    use_output("parent.vt");
    uint64_t first[1] = {VT_PYFRAME(5, 3)}, fr[2] = {VT_PYFRAME(3, 1), VT_PYFRAME(4, 2)};
    assert_true(vt__stack_intern(first, 0, 1) >= 1);
    uint32_t a = vt__stack_intern(fr, 0, 2);
    assert_true(a >= 2);
    assert_int_equal(vt__stack_intern(fr, 0, 2), a);
    vt__writer_close();
    vt__stacks_fork_prepare();
    vt__stacks_fork_child();
    use_output("child.vt");
    assert_int_equal(vt__stack_intern(fr, 0, 2), 1);
    assert_int_equal(vt__stack_intern(fr, 0, 2), 1);
    char path[256];
    snprintf(path, sizeof path, "%s", vt__writer_path());
    vt__writer_close();
    int n, stacks = 0;
    rec *r = load(path, &n);
    for (int i = 0; i < n; i++)
        if (r[i].type == VT_REC_STACK) {
            vt_rec_stack s;
            memcpy(&s, r[i].p, sizeof s);
            assert_int_equal(s.stack_id, 1);
            assert_memory_equal(r[i].p + 8, fr, sizeof fr);
            stacks++;
        }
    assert_int_equal(stacks, 1);
    free_recs(r, n);
}

static int setup(void **st)
{
    (void)st;
    snprintf(g_dir, sizeof g_dir, "/tmp/vt-stacks-XXXXXX");
    return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **st)
{
    (void)st;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intern),     cmocka_unit_test(test_py_cut),
        cmocka_unit_test(test_grow),       cmocka_unit_test(test_threads),
        cmocka_unit_test(test_fork_child),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
