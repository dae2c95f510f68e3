/* vtgen.c — the project's synthetic trace generator: writes traces in the format of
 * include/vramtrace/trace_format.h with its own small writer (independent of preload/), for
 * reader/dump tests, the analyzer's golden tests and the analyzer benchmark. Deterministic
 * for a given seed. `vtgen --help` lists the options. */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vramtrace/trace_format.h"

#define MiB (1024ull * 1024ull)

/* ---- output buffer ---------------------------------------------------------------------- */

static FILE *g_out;
static unsigned char *g_buf;
static size_t g_len, g_cap = 8u << 20;
static uint64_t g_written, g_records, g_events;

static void flush_out(void)
{
    if (g_len && fwrite(g_buf, 1, g_len, g_out) != g_len) {
        perror("vtgen: write");
        exit(2);
    }
    g_written += g_len;
    g_len = 0;
}

/* put: appends n bytes (n <= g_cap). */
static void put(const void *p, size_t n)
{
    if (g_len + n > g_cap)
        flush_out();
    memcpy(g_buf + g_len, p, n);
    g_len += n;
}

/* A record being built in a scratch area, then emitted with its padding. */
static unsigned char g_rec[1 << 20];
static size_t g_rlen;

static void rec_begin(void)
{
    g_rlen = 8;
}
static void rec_bytes(const void *p, size_t n)
{
    if (g_rlen + n > sizeof g_rec) {
        fprintf(stderr, "vtgen: record too large\n");
        exit(2);
    }
    memcpy(g_rec + g_rlen, p, n);
    g_rlen += n;
}
static void rec_str(const char *s)
{
    uint32_t n = (uint32_t)strlen(s);
    rec_bytes(&n, 4);
    rec_bytes(s, n);
}
/* rec_end: pads to 8, writes the header (type, flags, size) and emits. */
static void rec_end(uint16_t type, uint16_t flags)
{
    while (g_rlen % 8)
        g_rec[g_rlen++] = 0;
    vt_rec_header h = {type, flags, (uint32_t)g_rlen};
    memcpy(g_rec, &h, 8);
    put(g_rec, g_rlen);
    g_records++;
}
static void rec_fixed(uint16_t type, uint16_t flags, const void *p, size_t n)
{
    rec_begin();
    rec_bytes(p, n);
    rec_end(type, flags);
}

/* ---- options ---------------------------------------------------------------------------- */

static struct {
    const char *out;
    uint64_t events, live, stacks, seed;
    uint64_t dropped; /* the trailer's n_dropped: events the capture could not store */
    int tensor, python, oom, extras, trailer, big_stacks;
    int allocator;    /* PyTorch's caching allocator with its tracker: segments and their tensors */
    const char *tail; /* "trailer" (default: trailer), "none", "zero", "cut", "garbage" */
    const char *corrupt; /* NULL, "magic", "major", "size0", "size-odd", "size-past-eof",
                            "string", "huge", "type0" */
    unsigned pid, pymajor, pyminor;
    int rank;
    uint64_t card, device_bytes, codes; /* codes: Python code objects frames are drawn from */
} o = {NULL, 1000, 100,       16,   1,    0, 0,  0,  0, 1,           1,
       0,    0,    "trailer", NULL, 4242, 3, 11, -1, 0, 24ull << 30, 64};

static void usage(FILE *f)
{
    fprintf(f,
            "usage: vtgen -o FILE [options]\n"
            "  --events N        ALLOC+FREE events in the main body (default 1000)\n"
            "  --live N          live-set size the body keeps (default 100)\n"
            "  --stacks N        distinct stacks (default 16; past 65536 only dump reads it)\n"
            "  --tensor          tensor mode: cudaMallocAsync/cudaFreeAsync, small sizes\n"
            "                    (default: segment mode, cudaMalloc/cudaFree of 2 MiB multiples)\n"
            "  --allocator       PyTorch's default mode: the tracker's tensors (torchAlloc /\n"
            "                    torchFree, sizes as --tensor) in 32 MiB cudaMalloc segments it\n"
            "                    names (torchSegmentAlloc), 16 tensors to a segment\n"
            "  --python[=3.X]    Python frames + CODE/PYINFO records (default version 3.11)\n"
            "  --codes N         Python code objects the frames are drawn from (default 64)\n"
            "  --oom             end with a failed allocation and an OOM record\n"
            "  --card BYTES      CONFIG emulated card capacity (OOM marked emulated)\n"
            "  --no-extras       only context + body events (no VMM, host, module, meminfo,\n"
            "                    unknown record, extended frees)\n"
            "  --tail KIND       trailer (default) | none | zero | cut | garbage\n"
            "  -D N              the trailer's n_dropped: N events the capture could not store\n"
            "  --corrupt KIND    magic | major | size0 | size-odd | size-past-eof | string |\n"
            "                    huge | type0 (a malformed record early in the body)\n"
            "  --pid N --rank R  PROCESS pid and RANK/LOCAL_RANK/WORLD_SIZE env\n"
            "  --seed N          random seed (default 1)\n");
}

/* ---- generator state -------------------------------------------------------------------- */

static uint64_t g_rng;
static uint64_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

static uint64_t g_now = 1000;
static unsigned char *g_stack_done; /* stack id -> emitted */
static unsigned char *g_code_done;
#define N_NATIVE 4
#define N_PYTHON 3
#define CODE_UNITS 16 /* each line-table entry covers 16 bytes: line = first + off/16 */
#define CODE_ENTRIES 32

static uint64_t native_ip(uint64_t stack, int i)
{
    /* frame 0 shared by all stacks (the allocator call site), deeper frames per stack */
    return 0x7f0000001000ull + (i == 0 ? 0x40 : (stack % 97) * 0x100 + (uint64_t)i * 0x10);
}

static void emit_symbol_once(uint64_t ip)
{
    static uint64_t *seen;
    static size_t nseen, capseen;
    for (size_t i = 0; i < nseen; i++)
        if (seen[i] == ip)
            return;
    if (nseen == capseen) {
        capseen = capseen ? capseen * 2 : 256;
        seen = realloc(seen, capseen * sizeof *seen);
    }
    seen[nseen++] = ip;
    vt_rec_symbol s = {ip, ip - 0x7f0000000000ull, 1, (uint32_t)(ip & 0xff)};
    char name[64];
    if ((ip & 0xfff) == 0x040)
        snprintf(name, sizeof name, "_ZN3c104cuda20CUDACachingAllocator6mallocEPPvim");
    else if (ip % 3 == 0)
        snprintf(name, sizeof name, "_ZN2at6native7op_%04llxERKNS_6TensorE",
                 (unsigned long long)(ip & 0xffff));
    else
        snprintf(name, sizeof name, "c_kernel_%llx", (unsigned long long)(ip & 0xffff));
    rec_begin();
    rec_bytes(&s, sizeof s);
    rec_str(name);
    rec_end(VT_REC_SYMBOL, 0);
}

/* emit_code_once: CODE record c (1..o.codes): file, qualname, first line 10*c, a line table
 * where byte offset b is on line first + b / CODE_UNITS for b < CODE_UNITS*CODE_ENTRIES. */
static void emit_code_once(uint32_t c)
{
    if (g_code_done[c])
        return;
    g_code_done[c] = 1;
    vt_rec_code f = {c, 10 * c};
    char file[64], qual[64];
    static const char *const files[] = {"train.py", "model.py", "torch/nn/modules/linear.py",
                                        "torch/optim/adam.py"};
    static const char *const funcs[] = {"main", "Block.forward", "Linear.forward", "Adam.step"};
    snprintf(file, sizeof file, "/work/%s", files[c % 4]);
    snprintf(qual, sizeof qual, "%s_%u", funcs[c % 4], c);
    unsigned char lt[CODE_ENTRIES * 2];
    uint32_t lt_len = 0;
    for (int e = 0; e < CODE_ENTRIES; e++) {
        int delta = e == 0 ? 0 : 1;
        if (o.pyminor == 10) {
            lt[lt_len++] = CODE_UNITS;
            lt[lt_len++] = (unsigned char)delta;
        } else { /* form 13: no columns, svarint line delta; 8 code units = 16 bytes */
            lt[lt_len++] = (unsigned char)(0x80 | (13 << 3) | (CODE_UNITS / 2 - 1));
            lt[lt_len++] = (unsigned char)(delta << 1);
        }
    }
    rec_begin();
    rec_bytes(&f, sizeof f);
    rec_str(file);
    rec_str(qual);
    rec_bytes(&lt_len, 4);
    rec_bytes(lt, lt_len);
    rec_end(VT_REC_CODE, 0);
}

/* use_stack: emits stack s (1..stacks) and what it references the first time; returns s. */
static uint32_t use_stack(uint64_t s)
{
    if (g_stack_done[s])
        return (uint32_t)s;
    g_stack_done[s] = 1;
    uint64_t frames[N_NATIVE + N_PYTHON];
    for (int i = 0; i < N_NATIVE; i++) {
        frames[i] = native_ip(s, i);
        emit_symbol_once(frames[i]);
    }
    int np = o.python ? N_PYTHON : 0;
    for (int i = 0; i < np; i++) {
        uint32_t c = (uint32_t)((s * 7 + (uint64_t)i * 13) % o.codes) + 1;
        uint32_t off = (uint32_t)((s * 6 + (uint64_t)i * 2) % (CODE_UNITS * CODE_ENTRIES)) & ~1u;
        emit_code_once(c);
        frames[N_NATIVE + i] = VT_PYFRAME(c, off);
    }
    vt_rec_stack st = {(uint32_t)s, N_NATIVE, (uint16_t)np};
    rec_begin();
    rec_bytes(&st, sizeof st);
    rec_bytes(frames, 8 * (size_t)(N_NATIVE + np));
    rec_end(VT_REC_STACK, 0);
    return (uint32_t)s;
}

/* ev_alloc / ev_free: one ALLOC (aux when want_aux) / FREE (extended when stack or result). */
static void ev_alloc(unsigned api, unsigned thread, uint16_t extra, uint64_t addr, uint64_t size,
                     uint32_t stack, uint16_t stream, int16_t result, int want_aux, uint64_t aux)
{
    unsigned char r[48];
    vt_rec_header h = {VT_REC_ALLOC, (uint16_t)(VT_EVF_MAKE(api, 0) | extra),
                       want_aux ? VT_ALLOC_AUX_REC_SIZE : VT_ALLOC_REC_SIZE};
    vt_rec_alloc a = {VT_TT_MAKE(g_now, thread), addr, size, stack, stream, result};
    memcpy(r, &h, 8);
    memcpy(r + 8, &a, sizeof a);
    memcpy(r + 40, &aux, 8);
    put(r, h.size);
    g_now += 700 + rnd() % 600;
    g_records++;
    g_events++;
}

static void ev_free(unsigned api, unsigned thread, uint16_t extra, uint64_t addr, uint32_t stack,
                    int16_t result)
{
    unsigned char r[32];
    int ext = stack || result;
    vt_rec_header h = {VT_REC_FREE, (uint16_t)(VT_EVF_MAKE(api, 0) | extra),
                       ext ? VT_FREE_EXT_REC_SIZE : VT_FREE_REC_SIZE};
    vt_rec_free f = {VT_TT_MAKE(g_now, thread), addr};
    vt_rec_free_ext x = {stack, 0, result};
    memcpy(r, &h, 8);
    memcpy(r + 8, &f, sizeof f);
    memcpy(r + 24, &x, sizeof x);
    put(r, h.size);
    g_now += 500 + rnd() % 400;
    g_records++;
    g_events++;
}

/* ---- file parts ------------------------------------------------------------------------- */

static void write_header(void)
{
    vt_file_header h = {{0},
                        VT_VERSION_MAJOR,
                        VT_VERSION_MINOR,
                        sizeof(vt_file_header),
                        1700000000000000000ull,
                        1000000000ull};
    memcpy(h.magic, VT_MAGIC, VT_MAGIC_LEN);
    if (o.corrupt && !strcmp(o.corrupt, "magic"))
        memcpy(h.magic, "VRAMTRX\n", 8);
    if (o.corrupt && !strcmp(o.corrupt, "major"))
        h.major = VT_BLOCKS_MAJOR + 1; /* (a major no vramtrace reads) */
    put(&h, sizeof h);
}

static void write_metadata(void)
{
    char env[5][64];
    int nenv = 0;
    if (o.tensor && !o.allocator)
        snprintf(env[nenv++], 64, "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync");
    if (o.rank >= 0) {
        snprintf(env[nenv++], 64, "RANK=%d", o.rank);
        snprintf(env[nenv++], 64, "LOCAL_RANK=%d", o.rank);
        snprintf(env[nenv++], 64, "WORLD_SIZE=%d", o.rank + 1 > 2 ? o.rank + 1 : 2);
    }
    static const char *const argv[] = {"python3", "train.py", "--batch_size=8"};
    vt_rec_process p = {o.pid, 1, 3, (uint32_t)nenv, 1700000000000000000ull};
    rec_begin();
    rec_bytes(&p, sizeof p);
    rec_str("/usr/bin/python3");
    rec_str("/work/run");
    rec_str("vtgen-host");
    for (int i = 0; i < 3; i++)
        rec_str(argv[i]);
    for (int i = 0; i < nenv; i++)
        rec_str(env[i]);
    rec_end(VT_REC_PROCESS, 0);

    vt_rec_config c = {o.card, VT_STACKS_NATIVE | (o.python ? VT_STACKS_PYTHON : 0), 32, 0, 0};
    rec_begin();
    rec_bytes(&c, sizeof c);
    rec_str(o.card ? "rtx4070" : "");
    rec_end(VT_REC_CONFIG, 0);

    if (o.python) {
        vt_rec_pyinfo py = {o.pymajor, o.pyminor, 1, 1};
        rec_fixed(VT_REC_PYINFO, 0, &py, sizeof py);
    }
    vt_rec_device d = {0, 8, 9, 0, o.device_bytes, {0}};
    for (int i = 0; i < 16; i++)
        d.uuid[i] = (uint8_t)(i + 1);
    rec_begin();
    rec_bytes(&d, sizeof d);
    rec_str("Fake GPU 24G");
    rec_end(VT_REC_DEVICE, 0);

    static const char *const tnames[] = {"python3", "pt_autograd_0"};
    for (uint32_t i = 0; i < 2; i++) {
        vt_rec_thread t = {i, o.pid + i, i ? VT_ROLE_AUTOGRAD : VT_ROLE_MAIN, 0};
        rec_begin();
        rec_bytes(&t, sizeof t);
        rec_str(tnames[i]);
        rec_end(VT_REC_THREAD, 0);
    }
    static const char *const mods[] = {"/opt/torch/lib/libtorch_cuda.so",
                                       "/opt/torch/lib/libcudart.so.13"};
    for (uint32_t i = 0; i < 2; i++) {
        vt_rec_module m = {i + 1, 0, 0x7f0000000000ull + i * 0x10000000ull};
        rec_begin();
        rec_bytes(&m, sizeof m);
        rec_str(mods[i]);
        rec_end(VT_REC_MODULE, 0);
    }
}

/* write_corrupt: one record no writer produces (o.corrupt), for the malformed tests. */
static void write_corrupt(void)
{
    const char *k = o.corrupt;
    unsigned char r[64] = {0};
    vt_rec_header h = {VT_REC_ALLOC, VT_EVF_MAKE(VT_API_cudaMalloc, 0), 0};
    size_t n = 40;
    if (!strcmp(k, "size0")) {
        h.size = 0;
    } else if (!strcmp(k, "size-odd")) {
        h.size = 44;
    } else if (!strcmp(k, "huge")) {
        h.size = 0xfffffff8u;
    } else if (!strcmp(k, "type0")) {
        h.type = 0;
        h.size = 40;
    } else if (!strcmp(k, "size-past-eof")) { /* a 24-byte stack claiming 15 MiB */
        h.type = VT_REC_STACK;
        h.size = 15u << 20;
        vt_rec_stack s = {9999, 1, 0};
        memcpy(r + 8, &s, sizeof s);
        n = 24;
    } else if (!strcmp(k, "string")) { /* a thread whose name runs past its record */
        h.type = VT_REC_THREAD;
        h.size = 32;
        vt_rec_thread t = {7, 7, 0, 0};
        uint32_t len = 1000;
        memcpy(r + 8, &t, sizeof t);
        memcpy(r + 24, &len, 4);
        n = 32;
    } else {
        return; /* magic / major are in the header */
    }
    memcpy(r, &h, 8);
    put(r, n);
}

/* new_segment: PyTorch's allocator reserves a segment at addr (cudaMalloc, then its tracker names
 * it), for the tensors it places there. */
#define SEGMENT_BYTES (32 * MiB)
static void new_segment(uint64_t addr, unsigned thread, uint16_t extra, uint32_t stack)
{
    ev_alloc(VT_API_cudaMalloc, thread, extra, addr, SEGMENT_BYTES, stack, 0, 0, 0, 0);
    ev_alloc(VT_API_torchSegmentAlloc, thread, extra, addr, SEGMENT_BYTES, stack, 1, 0, 0, 0);
}

typedef struct live_t {
    uint64_t addr, size;
} live_t;

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"events", 1, 0, 'n'},    {"live", 1, 0, 'l'},    {"stacks", 1, 0, 's'},
        {"tensor", 0, 0, 't'},    {"python", 2, 0, 'y'},  {"codes", 1, 0, 'K'},
        {"oom", 0, 0, 'O'},       {"card", 1, 0, 'c'},    {"no-extras", 0, 0, 'x'},
        {"tail", 1, 0, 'T'},      {"corrupt", 1, 0, 'C'}, {"pid", 1, 0, 'p'},
        {"rank", 1, 0, 'r'},      {"seed", 1, 0, 'S'},    {"help", 0, 0, 'h'},
        {"allocator", 0, 0, 'A'}, {0, 0, 0, 0},
    };
    int ch;
    while ((ch = getopt_long(argc, argv, "o:hD:", opts, NULL)) != -1) {
        switch (ch) {
        case 'o':
            o.out = optarg;
            break;
        case 'n':
            o.events = strtoull(optarg, NULL, 0);
            break;
        case 'l':
            o.live = strtoull(optarg, NULL, 0);
            break;
        case 's':
            o.stacks = strtoull(optarg, NULL, 0);
            break;
        case 't':
            o.tensor = 1;
            break;
        case 'A':
            o.allocator = o.tensor = 1;
            break;
        case 'y':
            o.python = 1;
            if (optarg && sscanf(optarg, "%u.%u", &o.pymajor, &o.pyminor) != 2) {
                fprintf(stderr, "vtgen: --python=3.X expected\n");
                return 2;
            }
            break;
        case 'O':
            o.oom = 1;
            break;
        case 'c':
            o.card = strtoull(optarg, NULL, 0);
            break;
        case 'x':
            o.extras = 0;
            break;
        case 'T':
            o.tail = optarg;
            break;
        case 'C':
            o.corrupt = optarg;
            break;
        case 'p':
            o.pid = (unsigned)strtoul(optarg, NULL, 0);
            break;
        case 'r':
            o.rank = atoi(optarg);
            break;
        case 'S':
            o.seed = strtoull(optarg, NULL, 0);
            break;
        case 'K':
            o.codes = strtoull(optarg, NULL, 0);
            break;
        case 'D':
            o.dropped = strtoull(optarg, NULL, 0);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (!o.out || optind != argc || !o.codes || o.codes >> 32) {
        usage(stderr);
        return 2;
    }
    g_out = fopen(o.out, "wb");
    g_buf = malloc(g_cap);
    g_stack_done = calloc(o.stacks + 1, 1);
    g_code_done = calloc(o.codes + 1, 1);
    live_t *live = malloc(sizeof *live * (o.live ? o.live : 1));
    uint64_t *freed = malloc(sizeof *freed * (o.live + 1));
    if (!g_out || !g_buf || !g_stack_done || !g_code_done || !live || !freed) {
        perror(o.out);
        return 2;
    }
    g_rng = o.seed * 0x9e3779b97f4a7c15ull + 1;
    write_header();
    write_metadata();

    unsigned alloc_api = o.allocator ? VT_API_torchAlloc
                         : o.tensor  ? VT_API_cudaMallocAsync
                                     : VT_API_cudaMalloc;
    unsigned free_api = o.allocator ? VT_API_torchFree
                        : o.tensor  ? VT_API_cudaFreeAsync
                                    : VT_API_cudaFree;
    uint16_t stream = o.tensor ? 1 : 0;
    uint64_t live_bytes = 0, nfreed = 0, next_addr = 0x7e0000000000ull;
    /* context first, like a real run */
    ev_alloc(VT_API_cuDevicePrimaryCtxRetain, 0, 0, 0x5000, 300 * MiB, 0, 0, 0, 1, 0);
    if (o.extras) {
        ev_alloc(VT_API_cuModuleLoadData, 0, 0, 0x6000, 4 * MiB, 0, 0, 0, 0, 0);
        ev_alloc(VT_API_cudaHostAlloc, 0, 0, 0x10000000, 64 * MiB, 0, 0, 0, 0, 0);
        ev_alloc(VT_API_cuMemAddressReserve, 0, 0, 0x7d0000000000ull, 64 * MiB, 0, 0, 0, 1, 0);
        ev_alloc(VT_API_cuMemCreate, 0, 0, 0x9001, 32 * MiB, 0, 0, 0, 0, 0);
        ev_alloc(VT_API_cuMemMap, 0, 0, 0x7d0000000000ull, 32 * MiB, 0, 0, 0, 1, 0x9001);
        vt_rec_meminfo mi = {VT_TT_MAKE(g_now, 0), o.device_bytes - 400 * MiB, o.device_bytes, 0,
                             VT_MEMINFO_APP};
        rec_fixed(VT_REC_MEMINFO, 0, &mi, sizeof mi);
        uint64_t unknown[2] = {0x1122334455667788ull, 42};
        rec_fixed(200, 7, unknown, sizeof unknown);
    }
    uint64_t nlive = 0, done = 0;
    while (done < o.events) {
        int do_alloc = nlive < o.live && (nlive == 0 || done < o.live || (rnd() & 1));
        if (nlive == 0)
            do_alloc = 1;
        if (nlive >= o.live && nlive > 0)
            do_alloc = 0;
        unsigned thread = (done % 5 == 4) ? 1 : 0;
        uint16_t extra = thread ? VT_EVF_BACKWARD : 0;
        uint32_t stack = o.stacks ? use_stack(1 + rnd() % o.stacks) : 0;
        if (do_alloc) {
            uint64_t size = o.tensor ? (1 + rnd() % 4096) * 512 : (1 + rnd() % 10) * 2 * MiB;
            uint64_t addr;
            if (nfreed && (o.allocator || (rnd() & 1))) { /* the allocator reuses its cache */
                addr = freed[--nfreed];
            } else {
                if (o.allocator && next_addr % SEGMENT_BYTES == 0) /* a new segment for 16 */
                    new_segment(next_addr, thread, extra, stack);
                addr = next_addr;
                next_addr += o.tensor ? 0x200000 : 0x1400000;
            }
            ev_alloc(alloc_api, thread, extra, addr, size, stack, stream, 0, 0, 0);
            live[nlive++] = (live_t){addr, size};
            live_bytes += size;
        } else {
            uint64_t i = rnd() % nlive;
            live_t v = live[i];
            live[i] = live[--nlive];
            live_bytes -= v.size;
            ev_free(free_api, thread, extra, v.addr, (o.extras && done % 50 == 0) ? stack : 0, 0);
            if (nfreed < o.live)
                freed[nfreed++] = v.addr;
        }
        done++;
        if (done == 10 && o.corrupt)
            write_corrupt();
    }
    if (o.corrupt && done < 10)
        write_corrupt();
    if (o.extras) {
        ev_free(VT_API_cuMemUnmap, 0, 0, 0x7d0000000000ull, 0, 0);
        ev_free(VT_API_cuMemRelease, 0, 0, 0x9001, 0, 0);
        ev_free(VT_API_cuMemAddressFree, 0, 0, 0x7d0000000000ull, 0, 0);
        ev_free(VT_API_cudaFreeHost, 0, 0, 0x10000000, 0, 0);
        ev_free(VT_API_cudaFree, 0, VT_EVF_FAILED, 0xdead0000, o.stacks ? use_stack(1) : 0, 1);
    }
    if (o.oom) {
        uint64_t cap = o.card ? o.card : o.device_bytes;
        uint64_t want = cap;
        uint16_t fl = VT_EVF_FAILED | (o.card ? VT_EVF_EMULATED : 0);
        uint32_t stack = o.stacks ? use_stack(1) : 0;
        ev_alloc(alloc_api, 0, fl, 0, want, stack, stream, 2, 0, 0);
        vt_rec_oom oo = {VT_TT_MAKE(g_now, 0), want, cap, live_bytes + 300 * MiB, stack, 2};
        rec_fixed(VT_REC_OOM, (uint16_t)(VT_EVF_MAKE(alloc_api, 0) | fl), &oo, sizeof oo);
    }
    if (!strcmp(o.tail, "trailer")) {
        vt_rec_trailer t = {g_now, g_events, o.dropped, g_records, 0, 0};
        rec_fixed(VT_REC_TRAILER, 0, &t, sizeof t);
    } else if (!strcmp(o.tail, "zero")) {
        static const unsigned char z[4096];
        put(z, sizeof z);
    } else if (!strcmp(o.tail, "cut")) { /* an ALLOC whose last 16 bytes never made it */
        unsigned char r[40] = {0};
        vt_rec_header h = {VT_REC_ALLOC, VT_EVF_MAKE(alloc_api, 0), VT_ALLOC_REC_SIZE};
        memcpy(r, &h, 8);
        put(r, 24);
    } else if (!strcmp(o.tail, "garbage")) {
        unsigned char gb[64];
        memset(gb, 0xff, sizeof gb);
        put(gb, sizeof gb);
    } else if (strcmp(o.tail, "none")) {
        fprintf(stderr, "vtgen: unknown --tail %s\n", o.tail);
        return 2;
    }
    flush_out();
    if (fclose(g_out) != 0) {
        perror(o.out);
        return 2;
    }
    printf("%s: %llu events, %llu records, %llu bytes, %llu live bytes at end\n", o.out,
           (unsigned long long)g_events, (unsigned long long)g_records,
           (unsigned long long)g_written, (unsigned long long)live_bytes);
    return 0;
}
