/* sym_static.c — a program whose allocating function is static (dladdr cannot name it) and
 * built with -g, for tests/integration/sym_native.sh: the analyzer names it from the
 * program's .symtab and gives its file:line from DWARF. The SYM_LINE markers are the lines
 * the test expects. usage: sym_static */
#include <stdio.h>

#include "../../preload/cuda_abi.h"

cudaError_t cudaMalloc(void **p, size_t n);
cudaError_t cudaFree(void *p);

__attribute__((noinline, noipa)) static int vt_static_alloc(size_t n)
{
    void *p = NULL;
    int rc = cudaMalloc(&p, n); /* SYM_LINE static */
    if (rc == 0)
        rc = cudaFree(p);
    return rc;
}

/* exported (the program links with -rdynamic): dladdr names it at capture */
__attribute__((noinline, noipa)) int vt_exported_caller(size_t n)
{
    int rc = vt_static_alloc(n); /* SYM_LINE exported */
    if (rc)                      /* not a tail call: this frame stays on the stack */
        fprintf(stderr, "sym_static: cudaMalloc = %d\n", rc);
    return rc;
}

/* a static function under a C++ mangled name, vt::static_cpp(unsigned long): the analyzer
 * demangles what it finds in .symtab as it does the recorded names */
__attribute__((noinline, noipa)) static int _ZN2vt10static_cppEm(size_t n)
{
    return vt_static_alloc(n) * 2; /* SYM_LINE cpp */
}

int main(void)
{
    return vt_exported_caller(123456789) != 0 || _ZN2vt10static_cppEm(2345678) != 0;
}
