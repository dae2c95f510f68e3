/* replay_sites.c — how a report names a stack of the replay: the program's site
 * ("file:line function") and the native operation ("at::_ops::mm (libtorch_cpu.so)"),
 * escaped for a terminal. The stacks are tables.c's; the phases' site rule is phases.c's. */
#include <stdio.h>
#include <string.h>

#include "escape.h"
#include "replay.h"

const char *replay_site_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    size_t n = 0;
    const tables_frame *f = stack_id ? tables_resolve_stack(r->t, stack_id, &n) : NULL;
    long i = f ? phases_site(f, n) : -1;
    if (i < 0) {
        snprintf(buf, len, "%s", stack_id ? "(no named frame)" : "(no stack)");
        return buf;
    }
    char raw[1024];
    size_t m = tables_frame_text(&f[i], raw, sizeof raw);
    escape_term(raw, m < sizeof raw ? m : sizeof raw - 1, buf, len);
    return buf;
}

const char *replay_native_text(replay_result *r, uint32_t stack_id, char *buf, size_t len)
{
    size_t n = 0;
    const tables_frame *f = stack_id ? tables_resolve_stack(r->t, stack_id, &n) : NULL;
    long op = -1, native = -1, any = -1;
    for (size_t i = 0; f && i < n; i++) {
        const char *fn = f[i].function;
        if (f[i].kind != TABLES_FRAME_NATIVE || !fn || !fn[0])
            continue;
        if (any < 0)
            any = (long)i;
        if (strstr(fn, "empty")) /* the allocation primitive itself names no operation */
            continue;
        if (op < 0 && strstr(fn, "at::_ops::"))
            op = (long)i;
        if (native < 0 && strstr(fn, "at::native::"))
            native = (long)i;
    }
    long pick = op >= 0 ? op : native >= 0 ? native : any;
    buf[0] = '\0';
    if (pick < 0)
        return buf;
    const char *fn = f[pick].function;
    size_t fl = strcspn(fn, "("); /* the name without its argument list */
    char raw[512];
    snprintf(raw, sizeof raw, "%.*s (%s)", (int)(fl < 400 ? fl : 400), fn,
             f[pick].module ? f[pick].module->basename : "?");
    escape_term(raw, strlen(raw), buf, len);
    return buf;
}
