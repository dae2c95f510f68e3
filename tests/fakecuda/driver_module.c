/* driver_module.c — the fake driver's kernel images (cuModuleLoad*, cuLibraryLoad*) and host
 * memory (cuMemHostAlloc, cuMemAllocHost, cuMemHostRegister). A loaded image costs device
 * memory equal to its size rounded up to 2 MiB; host memory is real malloc'd memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "driver_internal.h"

#define FK_MOD_MAGIC 0x4D4F4455u

/* A loaded module or library: charged `bytes` on device `dev`. */
struct fk_module {
    uint32_t magic;
    int dev;
    uint64_t bytes;
};

/* image_size: bytes of an in-memory image: an ELF (from its section header table), a
 * fatbin (magic 0xBA55ED50: 16-byte header, u16 header size at +6, u64 body size at +8),
 * a fatbin wrapper (magic 0x466243B1, image pointer at +8), or NUL-terminated text (PTX). */
static uint64_t image_size(const void *img)
{
    const unsigned char *p = img;
    uint32_t magic;
    memcpy(&magic, p, 4);
    if (magic == 0x466243B1u) { /* wrapper: int magic, int version, const void *data */
        const void *inner;
        memcpy(&inner, p + 8, sizeof inner);
        return inner ? image_size(inner) : 0;
    }
    if (magic == 0xBA55ED50u) {
        uint16_t hsz;
        uint64_t body;
        memcpy(&hsz, p + 6, 2);
        memcpy(&body, p + 8, 8);
        return (uint64_t)hsz + body;
    }
    if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F' && p[4] == 2) { /* ELF64 */
        uint64_t shoff;
        uint16_t shentsize, shnum;
        memcpy(&shoff, p + 0x28, 8);
        memcpy(&shentsize, p + 0x3A, 2);
        memcpy(&shnum, p + 0x3C, 2);
        uint64_t end = shoff + (uint64_t)shentsize * shnum;
        return end > 64 ? end : 64;
    }
    return strlen((const char *)img) + 1;
}

/* load: charges the rounded image size to the current device (device 0 without a context,
 * as for context-independent libraries) and returns a new module object in *out. */
static CUresult load(uint64_t size, int need_ctx, void **out)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!out || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    int d = fk_current_dev();
    if (d < 0) {
        if (need_ctx)
            return CUDA_ERROR_INVALID_CONTEXT;
        d = 0;
    }
    uint64_t bytes = (size + FK_GRANULARITY - 1) / FK_GRANULARITY * FK_GRANULARITY;
    struct fk_module *m = malloc(sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *m = (struct fk_module){FK_MOD_MAGIC, d, bytes};
    fk_lock();
    r = fk_charge(d, bytes);
    fk_unlock();
    if (r) {
        free(m);
        return r;
    }
    fk_log("module load %llu bytes -> %llu charged on dev %d", (unsigned long long)size,
           (unsigned long long)bytes, d);
    *out = m;
    return CUDA_SUCCESS;
}

/* unload: returns a module's bytes; CUDA_ERROR_INVALID_HANDLE for a stale/unknown object. */
static CUresult unload(void *obj)
{
    struct fk_module *m = obj;
    if (!m || m->magic != FK_MOD_MAGIC)
        return FK_ERR_INVALID_HANDLE;
    fk_lock();
    fk_uncharge(m->dev, m->bytes);
    m->magic = 0;
    fk_unlock();
    free(m);
    return CUDA_SUCCESS;
}

/* file_size: size of a regular file, 0 if it cannot be stat'ed. */
static uint64_t file_size(const char *path)
{
    struct stat st;
    if (!path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    return (uint64_t)st.st_size ? (uint64_t)st.st_size : 1;
}

CUresult cuModuleLoad(CUmodule *mod, const char *fname)
{
    uint64_t n = file_size(fname);
    if (n == 0)
        return fk_ready() ? fk_ready() : FK_ERR_FILE_NOT_FOUND;
    return load(n, 1, (void **)mod);
}

CUresult cuModuleLoadData(CUmodule *mod, const void *image)
{
    if (!image)
        return CUDA_ERROR_INVALID_VALUE;
    return load(image_size(image), 1, (void **)mod);
}

CUresult cuModuleLoadDataEx(CUmodule *mod, const void *image, unsigned int nopt, CUjit_option *opts,
                            void **vals)
{
    (void)nopt;
    (void)opts;
    (void)vals;
    return cuModuleLoadData(mod, image);
}

CUresult cuModuleLoadFatBinary(CUmodule *mod, const void *fatbin)
{
    return cuModuleLoadData(mod, fatbin);
}

CUresult cuModuleUnload(CUmodule mod)
{
    return unload(mod);
}

CUresult cuLibraryLoadData(CUlibrary *lib, const void *code, CUjit_option *jo, void **jv,
                           unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo, (void)jv, (void)njo, (void)lo, (void)lv, (void)nlo;
    if (!code)
        return CUDA_ERROR_INVALID_VALUE;
    return load(image_size(code), 0, (void **)lib);
}

CUresult cuLibraryLoadFromFile(CUlibrary *lib, const char *fname, CUjit_option *jo, void **jv,
                               unsigned int njo, CUlibraryOption *lo, void **lv, unsigned int nlo)
{
    (void)jo, (void)jv, (void)njo, (void)lo, (void)lv, (void)nlo;
    uint64_t n = file_size(fname);
    if (n == 0)
        return fk_ready() ? fk_ready() : FK_ERR_FILE_NOT_FOUND;
    return load(n, 0, (void **)lib);
}

CUresult cuLibraryUnload(CUlibrary lib)
{
    return unload(lib);
}

/* ---- host memory ---- */

CUresult cuMemHostAlloc(void **pp, size_t size, unsigned int flags)
{
    (void)flags;
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!pp || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *p = NULL;
    if (posix_memalign(&p, 4096, size) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *pp = p;
    return CUDA_SUCCESS;
}

CUresult cuMemAllocHost_v2(void **pp, size_t size)
{
    return cuMemHostAlloc(pp, size, 0);
}
CUresult cuMemAllocHost(void **pp, unsigned int size)
{
    return cuMemHostAlloc(pp, size, 0);
}

CUresult cuMemFreeHost(void *p)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    free(p);
    return CUDA_SUCCESS;
}

/* Registered host ranges (start, size), for the already/not-registered errors. */
static struct {
    uintptr_t p;
    size_t n;
} * g_reg;
static size_t g_nreg, g_capreg;

CUresult cuMemHostRegister_v2(void *p, size_t size, unsigned int flags)
{
    (void)flags;
    CUresult r = fk_ready();
    if (r)
        return r;
    if (!p || size == 0)
        return CUDA_ERROR_INVALID_VALUE;
    uintptr_t a = (uintptr_t)p;
    fk_lock();
    r = CUDA_SUCCESS;
    for (size_t i = 0; i < g_nreg; i++)
        if (a < g_reg[i].p + g_reg[i].n && g_reg[i].p < a + size)
            r = FK_ERR_HOST_MEMORY_ALREADY_REGISTERED;
    if (r == CUDA_SUCCESS && g_nreg == g_capreg) {
        size_t nc = g_capreg ? g_capreg * 2 : 16;
        void *nv = realloc(g_reg, nc * sizeof *g_reg);
        if (!nv)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else
            g_reg = nv, g_capreg = nc;
    }
    if (r == CUDA_SUCCESS) {
        g_reg[g_nreg].p = a;
        g_reg[g_nreg].n = size;
        g_nreg++;
    }
    fk_unlock();
    return r;
}

CUresult cuMemHostRegister(void *p, size_t size, unsigned int flags)
{
    return cuMemHostRegister_v2(p, size, flags);
}

CUresult cuMemHostUnregister(void *p)
{
    CUresult r = fk_ready();
    if (r)
        return r;
    fk_lock();
    r = FK_ERR_HOST_MEMORY_NOT_REGISTERED;
    for (size_t i = 0; i < g_nreg; i++)
        if (g_reg[i].p == (uintptr_t)p) {
            g_reg[i] = g_reg[--g_nreg];
            r = CUDA_SUCCESS;
            break;
        }
    fk_unlock();
    return r;
}
