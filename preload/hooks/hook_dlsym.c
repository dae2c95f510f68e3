/* hook_dlsym.c — a narrow dlsym override. Only names starting with "cu" are looked at:
 * driver functions asked of libcuda or RTLD_DEFAULT (cudart's dlsym of cuGetProcAddress_v2,
 * Triton's lookups) get our wrappers; runtime functions asked of the libcudart handle our hooks
 * call (ctypes, dlopen users) get our runtime hooks, those of another runtime its own. Everything
 * else, and EVERY RTLD_NEXT lookup, reaches the real dlsym by a tail jump, so the caller's identity
 * (which RTLD_NEXT depends on) is unchanged. The entry is a few instructions of x86-64 assembly for
 * that reason. Every call also tells PyTorch's allocator tracker that a library may have just been
 * loaded (a dlopen is followed by dlsym: Python's import asks for PyInit_*), to look for it at the
 * next segment. */
#include <dlfcn.h>
#include <string.h>

#include "core/realsym.h"
#include "hook_table.h"
#include "torch/torchalloc.h"

void *vt__dlsym_real_fn; /* the real dlsym, read by the trampoline */

/* vt__dlsym_init: resolves the real dlsym (first call); NULL if it cannot be found. */
void *vt__dlsym_init(void)
{
    void *p = vt__real_dlsym_ptr();
    __atomic_store_n(&vt__dlsym_real_fn, p, __ATOMIC_RELEASE);
    return p;
}

static int object_path_has(const void *p, const char *what)
{
    Dl_info di;
    return dladdr(p, &di) && di.dli_fname && strstr(di.dli_fname, what);
}

static int is_ours(const void *p)
{
    Dl_info me, di;
    return dladdr((void *)&is_ours, &me) && dladdr(p, &di) && di.dli_fbase == me.dli_fbase;
}

/* our_definition: this library's own export of name, or NULL. */
static void *our_definition(const char *name)
{
    Dl_info me;
    if (!dladdr((void *)&our_definition, &me))
        return NULL;
    void *h = dlopen(me.dli_fname, RTLD_NOLOAD | RTLD_LAZY);
    if (!h)
        return NULL;
    void *p = vt__real_dlsym(h, name);
    dlclose(h);
    return p && is_ours(p) ? p : NULL;
}

/* vt__dlsym_cu: the "cu*" path (handle is never RTLD_NEXT here). */
void *vt__dlsym_cu(void *handle, const char *name)
{
    void *r = vt__real_dlsym(handle, name);
    if (!r || is_ours(r))
        return r;
    if (!strncmp(name, "cuda", 4)) {
        if (!object_path_has(r, "libcudart"))
            return r;
        /* Our runtime hook calls one runtime's function: vt__next's (the global scope's, else
         * the first libcudart loaded; fixed once a process has one). A handle of another
         * runtime (a second copy loaded RTLD_LOCAL beside it) gets its own function: handing
         * its calls to the first would set the wrong runtime's last error and give it the
         * other's streams and pools. Its allocations are still recorded, one layer down: it
         * gets the driver through cuGetProcAddress, which is wrapped. */
        void *mine = our_definition(name);
        return mine && vt__next(name) == r ? mine : r;
    }
    if (handle != RTLD_DEFAULT && !object_path_has(r, "libcuda.so"))
        return r;
    if (!strcmp(name, "cuGetProcAddress") || !strcmp(name, "cuGetProcAddress_v2"))
        return vt__procaddr_wrap(name, !strcmp(name, "cuGetProcAddress_v2") ? 12000 : 11030, 0, r);
    return vt__drv_wrap(vt__drv_index(name), r);
}

#if defined(__x86_64__)
__asm__(".text\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        "dlsym:\n"
        "    movl $1, vt__torch_loaded_hint(%rip)\n" /* a library was likely just loaded */
        "    cmpq $-1, %rdi\n"                       /* RTLD_NEXT: straight to the real one */
        "    je 1f\n"
        "    testq %rsi, %rsi\n"
        "    je 1f\n"
        "    cmpb $0x63, (%rsi)\n" /* 'c' */
        "    jne 1f\n"
        "    cmpb $0x75, 1(%rsi)\n" /* 'u' */
        "    jne 1f\n"
        "    jmp vt__dlsym_cu\n"
        "1:  movq vt__dlsym_real_fn(%rip), %rax\n"
        "    testq %rax, %rax\n"
        "    jz 2f\n"
        "    jmp *%rax\n" /* tail jump: the caller's return address is kept */
        "2:  pushq %rdi\n"
        "    pushq %rsi\n"
        "    subq $8, %rsp\n"
        "    call vt__dlsym_init\n"
        "    addq $8, %rsp\n"
        "    popq %rsi\n"
        "    popq %rdi\n"
        "    testq %rax, %rax\n"
        "    jz 3f\n"
        "    jmp *%rax\n"
        "3:  xorl %eax, %eax\n"
        "    ret\n"
        ".size dlsym, .-dlsym\n");
#else
/* Other architectures: a C override would change RTLD_NEXT's meaning for callers, so none
 * is installed; driver entry points are still caught through cuGetProcAddress exports. */
#endif
