/* output.h — the trace output functions that the writer defines and every recording file calls
 * (writer.h holds the writer's remaining interface: system-call seam, fork hooks, tests).
 * Declared here so that no preload file needs more than the owner's header it uses. */
#ifndef VT_PRELOAD_OUTPUT_H
#define VT_PRELOAD_OUTPUT_H

#include <stddef.h>
#include <stdint.h>

/* vt__active: tracing is enabled and has not been stopped by an output failure. */
int vt__active(void);
/* vt__write: appends one record (header + payload parts, padded to 8) to the trace, opening
 * the file on first use. Thread-safe; payload first, header last. Returns 0, or -1 when
 * tracing is off or output failed (the first failure prints one warning and disables). */
int vt__write(uint16_t type, uint16_t flags, const void *p1, size_t n1, const void *p2, size_t n2);
/* vt__write_event: vt__write of one part (an event's record: n a multiple of 8, at most 64), on
 * the path every ALLOC and FREE takes: the same bytes, the same failures. A constant n of 32 or
 * 16 (the ALLOC and FREE payloads) calls the writer's path built for that size. */
int vt__write_event_32(uint16_t type, uint16_t flags, const void *p);
int vt__write_event_16(uint16_t type, uint16_t flags, const void *p);
int vt__write_event_n(uint16_t type, uint16_t flags, const void *p, size_t n);
static inline int vt__write_event(uint16_t type, uint16_t flags, const void *p, size_t n)
{
    return n == 32   ? vt__write_event_32(type, flags, p)
           : n == 16 ? vt__write_event_16(type, flags, p)
                     : vt__write_event_n(type, flags, p, n);
}
/* vt__write_strings: fixed part then a list of strings encoded as (u32 len, bytes). */
int vt__write_strings(uint16_t type, uint16_t flags, const void *fixed, size_t nfixed,
                      const char *const *strs, const uint32_t *lens, int nstrs);
/* vt__now_ns: nanoseconds since the trace's start_mono_ns. */
uint64_t vt__now_ns(void);
/* vt__writer_close: writes the trailer and truncates the file to its length (atexit). */
void vt__writer_close(void);
/* vt__writer_note_late: an event made after the trace was ended (exit, exec) by a thread still
 * running: counted in the trailer's n_dropped, never lost unsaid. */
void vt__writer_note_late(void);
/* vt__writer_note_in_hook: an event a signal handler made inside a hook on this thread, while the
 * hook did its own work (thread.h's vt__t_real): it cannot be written then; counted in n_dropped
 * and said in the trailer (VT_TRAILER_LOST_IN_HOOK). Async-signal-safe: atomics only. */
void vt__writer_note_in_hook(void);
/* vt__writer_note_no_helper: a thread of the preload's own was not started: said in the
 * trailer (VT_TRAILER_NO_HELPER). */
void vt__writer_note_no_helper(void);
/* vt__writer_close_interrupted: the same at an exit() made by a signal handler that interrupted
 * a hook on this thread: the trailer only where that cannot hang or misplace it (writer_end.c);
 * else the trace is left cut there, said once. */
void vt__writer_close_interrupted(void);

#endif
