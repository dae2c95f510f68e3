/* vtmutate.c — the structure-aware mutator of the trace fuzz targets (vtmutate.h): the input is
 * parsed as a trace (header, records), changed at the level of records and their fields (sizes,
 * addresses, times, stacks, code names, command lines, config files, repeated iterations) and
 * written back with valid sizes, padding and strings. A share of the calls keeps libFuzzer's
 * byte mutation, which is what exercises the reader's own rules. */
#include "vtmutate.h"

#include <string.h>

#include "vtmutate_rec.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

static vm g_a, g_b;

/* clang-format off */
static const uint64_t interesting[] = {
    0, 1, 2, 8, 255, 512, 513, 4096, 1ull << 20, 2ull << 20, 20ull << 20, 1ull << 30,
    (1ull << 32) - 1, 1ull << 32, 12ull << 30, 80ull << 30, 1ull << 40, (1ull << 48) - 1,
    1ull << 62, 0x7fffffffffffffffull, 0xfffffffffffffffeull, 0xffffffffffffffffull};
/* clang-format on */
/* clang-format on */
static uint64_t pick_value(vm *v, uint64_t old)
{
    switch (vm_below(v, 6)) {
    case 0:
        return old * 2;
    case 1:
        return old / 2;
    case 2:
        return old + vm_below(v, 64) - 32;
    case 3:
        return vm_rnd(v);
    default:
        return interesting[vm_below(v, sizeof interesting / sizeof *interesting)];
    }
}

static const uint8_t apis[] = {
#define VM_API(name, id, layer, kind, space) id,
    VT_APIS(VM_API)
#undef VM_API
};

#include "vtmutate_words.h"

#define PICK(v, a) (a[vm_below(v, sizeof a / sizeof *a)])

static uint32_t some_id(vm *v, uint16_t type)
{
    for (int k = 0; k < 8 && v->n; k++) {
        const vm_rec *r = &v->r[vm_below(v, v->n)];
        if (r->type == type)
            return (uint32_t)vm_rd(r, 0, 4);
    }
    for (size_t i = 0; i < v->n; i++)
        if (v->r[i].type == type)
            return (uint32_t)vm_rd(&v->r[i], 0, 4);
    return 0;
}
static uint64_t some_addr(vm *v)
{
    for (int k = 0; k < 16 && v->n; k++) {
        const vm_rec *r = &v->r[vm_below(v, v->n)];
        if (r->type == VT_REC_ALLOC || r->type == VT_REC_FREE)
            return vm_rd(r, 8, 8);
    }
    return 0x7f0000000000ull + (vm_below(v, 4096) << 21);
}

/* the release call of an allocation call (same space), or cudaFree */
static uint8_t free_api(uint8_t api)
{
    switch (api) {
    case VT_API_cudaMallocAsync:
    case VT_API_cudaMallocFromPoolAsync:
        return VT_API_cudaFreeAsync;
    case VT_API_cuMemAlloc:
    case VT_API_cuMemAllocPitch:
        return VT_API_cuMemFree;
    case VT_API_cuMemAllocAsync:
        return VT_API_cuMemFreeAsync;
    case VT_API_cuMemCreate:
        return VT_API_cuMemRelease;
    case VT_API_cudaHostAlloc:
    case VT_API_cudaMallocHost:
        return VT_API_cudaFreeHost;
    case VT_API_torchAlloc:
        return VT_API_torchFree;
    case VT_API_cuModuleLoadData:
        return VT_API_cuModuleUnload;
    default:
        return VT_API_cudaFree;
    }
}

/* mutate_field: one field of r changed to something a trace could say (or nearly). */
static void mutate_field(vm *v, vm_rec *r)
{
    strs s;
    switch (r->type) {
    case VT_REC_ALLOC:
    case VT_REC_FREE:
    case VT_REC_OOM:
        switch (vm_below(v, 8)) {
        case 0: /* api, device, flags */
            r->flags = (uint16_t)((r->flags & ~0xffu) | PICK(v, apis));
            break;
        case 1:
            r->flags ^= (uint16_t)(1u << (8 + vm_below(v, 8)));
            break;
        case 2: /* time */
            vm_wr(r, 0, 6, pick_value(v, vm_rd(r, 0, 6)));
            break;
        case 3: /* thread */
            vm_wr(r, 6, 2, vm_below(v, 4) ? vm_below(v, 3) : vm_rnd(v));
            break;
        case 4: /* addr (OOM: requested) */
            vm_wr(r, 8, 8, vm_below(v, 2) ? some_addr(v) : pick_value(v, vm_rd(r, 8, 8)));
            break;
        case 5: /* size (FREE: the extension; OOM: capacity) */
            if (r->type == VT_REC_FREE)
                vm_resize(r, r->len >= 24 ? 16 : 24);
            else
                vm_wr(r, 16, 8, pick_value(v, vm_rd(r, 16, 8)));
            break;
        case 6: /* stack id */
            if (r->type == VT_REC_FREE && r->len < 24)
                vm_resize(r, 24);
            vm_wr(r,
                  r->type == VT_REC_FREE  ? 16
                  : r->type == VT_REC_OOM ? 32
                                          : 24,
                  4, vm_below(v, 4) ? some_id(v, VT_REC_STACK) : (uint32_t)vm_rnd(v));
            break;
        default: /* ALLOC: aux form; OOM: process_used; result */
            if (r->type == VT_REC_ALLOC)
                vm_resize(r, r->len >= 40 ? 32 : 40);
            else if (r->type == VT_REC_OOM)
                vm_wr(r, 24, 8, pick_value(v, vm_rd(r, 24, 8)));
            break;
        }
        break;
    case VT_REC_STACK: {
        uint32_t nn = (uint32_t)vm_rd(r, 4, 2), np = (uint32_t)vm_rd(r, 6, 2);
        if (nn + np && vm_below(v, 3)) { /* one frame: another code object or a known ip */
            size_t i = vm_below(v, nn + np);
            uint64_t f = i >= nn ? VT_PYFRAME(some_id(v, VT_REC_CODE), vm_below(v, 512))
                                 : pick_value(v, vm_rd(r, 8 + 8 * i, 8));
            vm_wr(r, 8 + 8 * i, 8, f);
        } else if (vm_below(v, 2)) { /* one Python frame more (outermost) */
            uint8_t *p = vm_arena(r->len + 8);
            if (p && np < 0xffff) {
                memcpy(p, r->p, r->len);
                uint64_t f = VT_PYFRAME(some_id(v, VT_REC_CODE), vm_below(v, 512));
                memcpy(p + r->len, &f, 8);
                r->p = p;
                r->len += 8;
                vm_wr(r, 6, 2, np + 1);
            }
        } else {
            vm_wr(r, 0, 4, vm_below(v, 4) ? (uint32_t)vm_below(v, 64) : (uint32_t)vm_rnd(v));
        }
        break;
    }
    case VT_REC_CODE:
        vm_get_strs(r, &s);
        if (vm_below(v, 4) == 0)
            vm_wr(r, 4, 4, vm_below(v, 2) ? vm_below(v, 2000) : vm_rnd(v));
        else if (vm_below(v, 3) == 0)
            vm_wr(r, 0, 4, vm_below(v, 64));
        else
            vm_put_str(&s, (int)vm_below(v, 2),
                       vm_below(v, 2) ? PICK(v, qualnames) : PICK(v, filenames));
        vm_set_strs(r, &s);
        break;
    case VT_REC_PROCESS: {
        vm_get_strs(r, &s);
        while (s.n < 3) /* exe, cwd, host */
            vm_put_str(&s, s.n, "");
        uint32_t room = (uint32_t)s.n - 3, argc = (uint32_t)vm_rd(r, 8, 4),
                 nenv = (uint32_t)vm_rd(r, 12, 4);
        argc = argc < room ? argc : room;
        nenv = nenv < room - argc ? nenv : room - argc;
        int k = (int)vm_below(v, 3);
        if (k == 0 && argc) /* change one argument */
            vm_put_str(&s, 3 + (int)vm_below(v, argc), PICK(v, args));
        else if (k == 1 && s.n < VM_STRS) { /* one argument more, at the end of argv */
            for (int i = s.n; i > 3 + (int)argc; i--)
                s.s[i] = s.s[i - 1], s.len[i] = s.len[i - 1];
            s.n++;
            vm_put_str(&s, 3 + (int)argc, PICK(v, args));
            argc++;
        } else if (3 + (int)argc + (int)nenv < VM_STRS) { /* one environment variable more */
            vm_put_str(&s, 3 + (int)argc + (int)nenv, PICK(v, envs));
            nenv++;
        }
        s.n = 3 + (int)argc + (int)nenv;
        vm_wr(r, 8, 4, argc);
        vm_wr(r, 12, 4, nenv);
        vm_set_strs(r, &s);
        break;
    }
    case VT_REC_FILE:
        vm_get_strs(r, &s);
        vm_put_str(&s, 2, PICK(v, files));
        vm_wr(r, 16, 4, vm_below(v, 4) ? 0 : vm_below(v, 4));
        vm_wr(r, 4, 4, vm_below(v, 6));
        vm_set_strs(r, &s);
        break;
    case VT_REC_CONFIG:
        vm_wr(r, 0, 8, pick_value(v, vm_rd(r, 0, 8)));
        vm_wr(r, 8, 4, vm_below(v, 4));
        break;
    case VT_REC_DEVICE:
        vm_wr(r, vm_below(v, 2) ? 16 : 0, vm_below(v, 2) ? 8 : 4, pick_value(v, vm_rd(r, 16, 8)));
        break;
    case VT_REC_MEMINFO:
        vm_wr(r, 8 + 8 * vm_below(v, 2), 8, pick_value(v, vm_rd(r, 8, 8)));
        break;
    case VT_REC_PYINFO:
        vm_wr(r, 0, 4, vm_below(v, 4) ? 3 : vm_below(v, 8));
        vm_wr(r, 4, 4, vm_below(v, 4) ? 9 + vm_below(v, 6) : vm_rnd(v));
        vm_wr(r, 12, 4, vm_below(v, 4) ? 1 : 0);
        break;
    case VT_REC_THREAD:
        vm_wr(r, vm_below(v, 2) ? 0 : 8, 4, vm_below(v, 4));
        break;
    case VT_REC_TRAILER:
        r->flags = (uint16_t)vm_below(v, 8);
        vm_wr(r, 8 * vm_below(v, 4), 8, pick_value(v, 0));
        break;
    default: /* SYMBOL, MODULE, unknown types: the raw payload */
        if (r->len)
            r->len = (uint32_t)LLVMFuzzerMutate(r->p, r->len, r->len);
        break;
    }
}

/* ---- whole-record mutations --------------------------------------------------------------- */

static void pair(vm *v)
{
    uint8_t api = PICK(v, apis);
    uint64_t addr = 0x600000000000ull + (vm_rnd(v) & 0xfffffff000ull), t = vm_rnd(v) & 0xffffffff;
    uint32_t thread = (uint32_t)vm_below(v, 3) == 0;
    vm_rec a = vm_new_rec(VT_REC_ALLOC, VT_EVF_MAKE(api, 0), 32);
    vm_wr(&a, 0, 8, VT_TT_MAKE(t, thread));
    vm_wr(&a, 8, 8, addr);
    vm_wr(&a, 16, 8,
          vm_below(v, 2) ? (vm_below(v, 64) + 1) << (9 + vm_below(v, 20)) : pick_value(v, 1));
    vm_wr(&a, 24, 4, some_id(v, VT_REC_STACK));
    size_t i = vm_below(v, v->n + 1);
    if (vm_insert_at(v, i, &a))
        return;
    vm_rec f = vm_new_rec(VT_REC_FREE, VT_EVF_MAKE(free_api(api), 0), 16);
    vm_wr(&f, 0, 8, VT_TT_MAKE(t + 1 + vm_below(v, 1000000), thread));
    vm_wr(&f, 8, 8, addr);
    vm_insert_at(v, i + 1 + vm_below(v, v->n - i), &f);
}

/* repeat: records [i, i + k) copied after themselves up to 8 times, times and addresses
 * shifted, as the iterations of a training loop */
static void repeat(vm *v)
{
    if (!v->n)
        return;
    size_t i = vm_below(v, v->n), k = 1 + vm_below(v, 64), reps = 1 + vm_below(v, 8);
    if (i + k > v->n)
        k = v->n - i;
    uint64_t t0 = UINT64_MAX, t1 = 0;
    for (size_t j = i; j < i + k; j++)
        if (v->r[j].type == VT_REC_ALLOC || v->r[j].type == VT_REC_FREE) {
            uint64_t t = VT_TT_NS(vm_rd(&v->r[j], 0, 8));
            t0 = t < t0 ? t : t0;
            t1 = t > t1 ? t : t1;
        }
    uint64_t span = t0 <= t1 ? t1 - t0 + 1 : 1;
    for (size_t rep = 1; rep <= reps && v->n + k <= VM_RECS; rep++) {
        size_t at = i + k * rep;
        for (size_t j = 0; j < k; j++) {
            vm_rec c = v->r[i + j];
            uint8_t *p = vm_arena(c.len);
            if (!p)
                return;
            memcpy(p, c.p, c.len);
            c.p = p;
            if (c.type == VT_REC_ALLOC || c.type == VT_REC_FREE) {
                uint64_t tt = vm_rd(&c, 0, 8);
                vm_wr(&c, 0, 8, VT_TT_MAKE(VT_TT_NS(tt) + span * rep, VT_TT_THREAD(tt)));
                if (vm_below(v, 2))
                    vm_wr(&c, 8, 8, vm_rd(&c, 8, 8) + (rep << 32));
            }
            vm_insert_at(v, at + j, &c);
        }
    }
}

/* retime: event times made to grow with file order (what one thread writes) */
static void retime(vm *v)
{
    uint64_t t = vm_below(v, 1000);
    for (size_t i = 0; i < v->n; i++) {
        vm_rec *r = &v->r[i];
        if (r->type != VT_REC_ALLOC && r->type != VT_REC_FREE && r->type != VT_REC_OOM &&
            r->type != VT_REC_MEMINFO)
            continue;
        t += 1 + vm_below(v, 5000);
        vm_wr(r, 0, 8, VT_TT_MAKE(t, VT_TT_THREAD(vm_rd(r, 0, 8))));
    }
}

/* fresh: a small valid trace (a process, a Python program's code and stacks, one device) for
 * inputs that are not traces */
static void fresh(vm *v)
{
    memset(&v->hdr, 0, sizeof v->hdr);
    memcpy(v->hdr.magic, VT_MAGIC, VT_MAGIC_LEN);
    v->hdr.major = VT_VERSION_MAJOR;
    v->hdr.minor = VT_VERSION_MINOR;
    v->hdr.header_size = 32;
    v->n = 0;
    strs s = {.n = 0};
    vm_rec r = vm_new_rec(VT_REC_PROCESS, 0, sizeof(vt_rec_process));
    vm_put_str(&s, 0, "/usr/bin/python3");
    vm_put_str(&s, 1, "/work");
    vm_put_str(&s, 2, "host");
    vm_put_str(&s, 3, "python3");
    vm_put_str(&s, 4, "train.py");
    vm_wr(&r, 8, 4, 2);
    vm_set_strs(&r, &s);
    vm_insert_at(v, v->n, &r);
    r = vm_new_rec(VT_REC_PYINFO, 0, 16);
    vm_wr(&r, 0, 4, 3), vm_wr(&r, 4, 4, 12), vm_wr(&r, 12, 4, 1);
    vm_insert_at(v, v->n, &r);
    r = vm_new_rec(VT_REC_DEVICE, 0, sizeof(vt_rec_device));
    vm_wr(&r, 16, 8, 12ull << 30);
    s.n = 0;
    vm_put_str(&s, 0, "GPU");
    vm_set_strs(&r, &s);
    vm_insert_at(v, v->n, &r);
    for (uint32_t c = 1; c <= 4; c++) {
        r = vm_new_rec(VT_REC_CODE, 0, sizeof(vt_rec_code));
        vm_wr(&r, 0, 4, c), vm_wr(&r, 4, 4, 10 * c);
        s.n = 0;
        vm_put_str(&s, 0, c == 1 ? "train.py" : "torch/nn/modules/linear.py");
        vm_put_str(&s, 1, qualnames[c]);
        vm_set_strs(&r, &s);
        vm_insert_at(v, v->n, &r);
        r = vm_new_rec(VT_REC_STACK, 0, 8 + 16);
        vm_wr(&r, 0, 4, c), vm_wr(&r, 6, 2, 2);
        vm_wr(&r, 8, 8, VT_PYFRAME(c, 4)), vm_wr(&r, 16, 8, VT_PYFRAME(1, 8));
        vm_insert_at(v, v->n, &r);
    }
    for (int k = 0; k < 4; k++)
        pair(v);
    retime(v);
}

/* ---- the entry points ----------------------------------------------------------------- */

size_t vtmutate(uint8_t *data, size_t size, size_t max, unsigned seed)
{
    vm *v = &g_a;
    vm_arena_reset();
    v->rng = 0x9e3779b97f4a7c15ull ^ seed;
    if (vm_below(v, 10) == 0) /* the reader's rules: bytes as they come */
        return LLVMFuzzerMutate(data, size, max);
    if (vm_parse(v, data, size) || !v->n)
        fresh(v);
    int steps = 1 + (int)vm_below(v, 4);
    for (int k = 0; k < steps; k++) {
        size_t i = vm_below(v, v->n);
        switch (vm_below(v, 12)) {
        case 0:
        case 1:
        case 2:
        case 3:
            if (v->n)
                mutate_field(v, &v->r[i]);
            break;
        case 4: /* a copy elsewhere */
            if (v->n)
                vm_insert_at(v, vm_below(v, v->n + 1), &v->r[i]);
            break;
        case 5: /* delete a few */
            for (size_t d = 1 + vm_below(v, 4); d-- && i < v->n;) {
                memmove(&v->r[i], &v->r[i + 1], (v->n - i - 1) * sizeof *v->r);
                v->n--;
            }
            break;
        case 6: /* move one */
            if (v->n > 1) {
                vm_rec t = v->r[i];
                memmove(&v->r[i], &v->r[i + 1], (v->n - i - 1) * sizeof *v->r);
                v->n--;
                vm_insert_at(v, vm_below(v, v->n + 1), &t);
            }
            break;
        case 7:
        case 8:
            pair(v);
            break;
        case 9:
            repeat(v);
            break;
        case 10:
            retime(v);
            break;
        default: /* the header's minor version, or a record cut at the end */
            if (vm_below(v, 2))
                v->hdr.minor = (uint16_t)vm_below(v, 4);
            else if (v->n && v->r[v->n - 1].len >= 8)
                v->r[v->n - 1].len -= 8;
            break;
        }
    }
    size_t n = vm_emit(v, data, max);
    return n ? n : LLVMFuzzerMutate(data, size, max);
}

size_t vtmutate_cross(const uint8_t *a, size_t na, const uint8_t *b, size_t nb, uint8_t *out,
                      size_t max, unsigned seed)
{
    vm_arena_reset();
    g_a.rng = 0x2545f4914f6cdd1dull ^ seed;
    if (vm_parse(&g_a, a, na) || vm_parse(&g_b, b, nb) || !g_a.n || !g_b.n)
        return 0;
    vm *v = &g_a;
    size_t at = vm_below(v, v->n + 1), from = vm_below(v, g_b.n), k = 1 + vm_below(v, g_b.n - from);
    for (size_t j = 0; j < k && v->n < VM_RECS; j++)
        vm_insert_at(v, at + j, &g_b.r[from + j]);
    return vm_emit(v, out, max);
}
