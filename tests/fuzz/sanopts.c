/* sanopts.c — the sanitizer options every fuzz target starts with (linked into each).
 *
 * intercept_tls_get_addr=0: up to LLVM 16 (and GCC 13) the runtime's __tls_get_addr hook takes
 * a dynamic TLS block that starts 16 bytes into a page for a pre-2.25 glibc block with a header,
 * and records the two words before it as the block's start and size. The analyzer dlopens libdw
 * (trace/symbolize.c), whose thread-local data is such a block; when malloc happens to place it
 * at that offset, LeakSanitizer's tracer scans the garbage range at the leak check and dies
 * ("Tracer caught signal 11", libFuzzer then writes its current input, often the empty one, as
 * a crash). Off, dynamic TLS is not scanned for pointers: nothing of ours lives there.
 * ASAN_OPTIONS still overrides it. */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
    return "intercept_tls_get_addr=0";
}
