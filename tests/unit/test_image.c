/* test_image.c — kernel-image sizing (preload/core/image.c): ELF64 cubins (section or
 * program header table end), fatbins (header + payload), fatbin wrappers (one level, never
 * a loop), PTX text, NULL. */
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../preload/core/image.h"

static void elf_cubin(void **state)
{
    (void)state;
    Elf64_Ehdr e;
    memset(&e, 0, sizeof e);
    memcpy(e.e_ident, ELFMAG, SELFMAG);
    e.e_ident[EI_CLASS] = ELFCLASS64;
    e.e_shoff = 1000;
    e.e_shnum = 10;
    e.e_shentsize = 64;
    e.e_phoff = 64;
    e.e_phnum = 2;
    e.e_phentsize = 56;
    assert_int_equal(vt__image_size(&e), 1000 + 10 * 64);
    e.e_phoff = 4000; /* program headers last */
    assert_int_equal(vt__image_size(&e), 4000 + 2 * 56);
}

static void elf32_is_not_a_cubin(void **state)
{
    (void)state;
    unsigned char b[64] = {0x7f, 'E', 'L', 'F', ELFCLASS32};
    assert_int_equal(vt__image_size(b), 6); /* read as text up to its first NUL */
}

static void fatbin(void **state)
{
    (void)state;
    unsigned char b[16] = {0};
    uint32_t magic = 0xBA55ED50u;
    uint16_t version = 1, hdr = 16;
    uint64_t size = 4096;
    memcpy(b, &magic, 4);
    memcpy(b + 4, &version, 2);
    memcpy(b + 6, &hdr, 2);
    memcpy(b + 8, &size, 8);
    assert_int_equal(vt__image_size(b), 16 + 4096);

    struct {
        uint32_t magic, version;
        const void *data, *file;
    } w = {0x466243b1u, 1, b, NULL}, ww = {0x466243b1u, 1, &w, NULL},
      self = {0x466243b1u, 1, NULL, NULL};
    assert_int_equal(vt__image_size(&w), 16 + 4096);
    assert_int_equal(vt__image_size(&ww), 0); /* a wrapper of a wrapper: not followed */
    self.data = &self;
    assert_int_equal(vt__image_size(&self), 0); /* a wrapper of itself: no loop */
    w.data = NULL;
    assert_int_equal(vt__image_size(&w), 0);
}

static void ptx_and_null(void **state)
{
    (void)state;
    const char *ptx = ".version 8.0\n.target sm_90\n";
    assert_int_equal(vt__image_size(ptx), strlen(ptx) + 1);
    assert_int_equal(vt__image_size(NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(elf_cubin),
        cmocka_unit_test(elf32_is_not_a_cubin),
        cmocka_unit_test(fatbin),
        cmocka_unit_test(ptx_and_null),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
