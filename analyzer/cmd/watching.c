/* watching.c — a run followed while it is alive, from the trace being written (no second
 * channel into the process), for `vramtrace watch` (cmd_watch.c) and `run --watch`: the live
 * bytes, the peak so far, the card's headroom, the steps and what grows per step (growth.h). A
 * plain trace is followed record by record (reader_follow); a chunked one (--max-size /
 * --compress) is read again each time as its summary (STEP records). A terminal gets a block
 * redrawn in place, anything else one line per refresh. Not a command: shared by two. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cards.h"
#include "exit_codes.h"
#include "escape.h"
#include "growth.h"
#include "livemap.h"
#include "mem.h"
#include "notes.h"
#include "phases.h"
#include "reader.h"
#include "replay.h"
#include "run_signals.h"
#include "tables.h"
#include "vramtrace/trace_format.h"
#include "watch.h"

/* what watch knows of the run so far */
typedef struct wstate {
    const char *path;
    reader *rd; /* a plain trace, followed */
    tables *t;
    livemap live;
    uint8_t *phase_of; /* by stack id, 255: not computed */
    uint32_t nphase;
    phases_memo memo; /* what each code object / symbol said (keys: t's records; freed with t) */
    growth g;
    uint64_t device, tensor, peak, peak_ns, last_ns, card, events;
    uint64_t oom_bytes, oom_ns; /* the out-of-memory error not recovered from (oom) */
    int chunked, ended, seen, lines, oom;
    int oom_by;      /* the OOM is a step summary's (a chunked trace's): oom_ns is its step's end */
    int bwd_pending; /* a backward allocated since the last optimizer step began (an allocation
                      * under its code, or a gradient's free: zero_grad) */
    int last_bwd;    /* the last allocation was a backward's */
    uint32_t passes; /* backward passes begun (the report's count, beside its steps) */
    int first_zg, zg_state; /* the run's first step, a gradient's free's, with no allocation after
                             * it yet: at the trace's end, the program's exit (the growth's state
                             * before it) */
    int bad;   /* chunked: reads in a row that met a slot being reused (10: it is malformed) */
    int whole; /* chunked: read whole, events included (its writer killed: killed_end) */
    uint64_t implausible; /* allocations not counted: past 2^62 B live (as report's replay) */
    char why[520];
    int why_rc;      /* the exit code of why: a wait that --once cannot make, or a refusal */
    int said_wait;   /* "waiting for FILE" said */
    off_t last_size; /* the file's size at the last refresh */
    int stale;       /* refreshes in a row the file did not grow and its writer was gone */
    uint32_t
        exec_pid; /* it ended at an exec: its writer's pid (the new image's trace is another) */
} wstate;

static int stack_phase(wstate *w, uint32_t id)
{
    if (!id || id >= (1u << 24))
        return PHASE_OTHER;
    if (id >= w->nphase) {
        uint32_t n = w->nphase ? w->nphase : 1024;
        while (n <= id)
            n *= 2;
        uint8_t *p = realloc(w->phase_of, n);
        if (!p)
            return PHASE_OTHER;
        memset(p + w->nphase, 255, n - w->nphase);
        w->phase_of = p;
        w->nphase = n;
    }
    if (w->phase_of[id] == 255) {
        size_t n = 0;
        const tables_frame *f = tables_resolve_stack(w->t, id, &n);
        /* (with the memo, as report's replay: without it every frame's name was read again, a
         * stack of 65,535 frames on one 8 MiB qualname took 45 s a stack) */
        w->phase_of[id] = f ? phases_of_stack_memo(f, n, &w->memo).phase : PHASE_OTHER;
    }
    return w->phase_of[id];
}

static int phase_cb(void *ctx, uint32_t id)
{
    return stack_phase(ctx, id);
}

/* implausible: an allocation of size would take the live bytes past 2^62 (4 EiB: no device
 * holds that): not counted, as report's replay does not count it (replay.c), so no level or
 * peak can wrap (2^63 had been "peak 8388608.00 TiB"); a step summary's levels included */
static int implausible(const wstate *w, uint64_t size)
{
    return w->tensor > REPLAY_LIVE_MAX || w->device > REPLAY_LIVE_MAX - w->tensor ||
           size > REPLAY_LIVE_MAX - w->tensor - w->device;
}

/* event: one ALLOC / FREE of a followed trace: the live bytes, the peak, the steps */
static void event(wstate *w, const reader_record *rec)
{
    const reader_event *ev = &rec->u.ev;
    int kind = reader_api_kind(ev->api), space = reader_api_space(ev->api);
    int async = ev->api == VT_API_cudaMallocAsync || ev->api == VT_API_cuMemAllocAsync ||
                ev->api == VT_API_cudaMallocFromPoolAsync ||
                ev->api == VT_API_cuMemAllocFromPoolAsync;
    w->events++;
    w->last_ns = ev->time_ns > w->last_ns ? ev->time_ns : w->last_ns;
    if (ev->api == VT_API_torchOom && !w->oom) /* PyTorch's own (a memory fraction's limit) */
        w->oom = 1, w->oom_by = 0, w->oom_bytes = ev->size, w->oom_ns = ev->time_ns;
    if (ev->failed)
        return;
    if (rec->type == VT_REC_FREE) {
        livemap_entry *e = livemap_find(&w->live, ev->addr, (unsigned)space);
        if (!e)
            return;
        int tensor = e->flags & 1, device = e->flags & 2;
        if (w->bwd_pending && tensor && (e->flags & 4) && !ev->backward && !w->oom) {
            /* the program frees what a backward made, after it (zero_grad): an optimizer
             * step, also one that allocated nothing (fused AdamW after its first), as the
             * report's replay takes it; not the frees of an out-of-memory error's unwinding */
            w->first_zg = !w->g.opt_steps && !w->g.opt_since && w->last_bwd,
            w->zg_state = w->g.state;
            growth_optimizer_step(&w->g);
            w->bwd_pending = 0;
        }
        w->tensor -= tensor ? e->size : 0;
        w->device -= device ? e->size : 0;
        growth_free(&w->g, e->stack_id, e->size, tensor, device);
        livemap_del(&w->live, e);
        return;
    }
    int tensor = kind == VT_KIND_ALLOC && (space == VT_SPACE_TENSOR || async);
    int device = (kind == VT_KIND_ALLOC && (space == VT_SPACE_DEVICE || space == VT_SPACE_MANAGED ||
                                            space == VT_SPACE_VMM_HANDLE)) ||
                 kind == VT_KIND_CONTEXT || (kind == VT_KIND_LOAD && ev->size);
    if ((!tensor && !device) || !ev->addr)
        return;
    if (w->oom && ev->size >= w->oom_bytes)
        w->oom = 0; /* recovered: the same request later succeeded (as report takes it) */
    if (implausible(w, ev->size)) {
        w->implausible++;
        return;
    }
    int replaced;
    livemap_entry *e = livemap_put(&w->live, ev->addr, (unsigned)space, &replaced);
    if (!e)
        return;
    if (replaced) {
        w->tensor -= (e->flags & 1) ? e->size : 0;
        w->device -= (e->flags & 2) ? e->size : 0;
        growth_free(&w->g, e->stack_id, e->size, e->flags & 1, e->flags & 2);
    }
    e->size = ev->size;
    e->stack_id = ev->stack_id;
    e->flags = (uint8_t)(tensor | device << 1 | (ev->backward ? 4 : 0));

    w->tensor += tensor ? ev->size : 0;
    w->device += device ? ev->size : 0;
    w->first_zg = 0; /* the run went on: a step */
    w->passes += ev->backward && !w->last_bwd;
    w->last_bwd = ev->backward != 0;
    if (w->device > w->peak)
        w->peak = w->device, w->peak_ns = ev->time_ns;
    int ph = ev->backward ? PHASE_BACKWARD : stack_phase(w, ev->stack_id);
    if (ph == PHASE_BACKWARD || ph == PHASE_OPTIMIZER) /* (a step under the optimizer's code) */
        w->bwd_pending = ph == PHASE_BACKWARD;
    growth_alloc(&w->g, ev->stack_id, ev->size, tensor, device, ph, ev->backward, ev->time_ns);
}

/* trace_end: the trace ends at w->last_ns: at its trailer, or where a killed writer left it (the
 * report reads both so) */
static void trace_end(wstate *w)
{
    if (w->first_zg) /* its gradients freed as the program exited: no step (as report) */
        w->g.opt_since = 0, w->g.state = w->zg_state;
    growth_end(&w->g, w->last_ns); /* a step that ran into the end is a step, as report says */
}

/* other: a record that is not an event: tables, the card, steps, the end */
static void other(wstate *w, const reader_record *rec)
{
    tables_add(w->t, rec);
    if (rec->type == VT_REC_CONFIG)
        w->g.no_python = !(rec->u.config.fixed.stack_mode & VT_STACKS_PYTHON); /* (as report's) */
    if (rec->type == VT_REC_CONFIG && rec->u.config.fixed.card_bytes)
        w->card = rec->u.config.fixed.card_bytes;
    else if (rec->type == VT_REC_DEVICE && !w->card)
        w->card = rec->u.device.fixed.total_bytes;
    else if (rec->type == VT_REC_OOM && !(w->oom && w->oom_bytes == rec->u.oom.requested))
        w->oom = 1, w->oom_by = 0, w->oom_bytes = rec->u.oom.requested,
        w->oom_ns = rec->u.oom.time_ns;
    else if (rec->type == VT_REC_TRAILER) {
        const tables_process *p = tables_process_get(w->t);
        w->exec_pid = (rec->flags & VT_TRAILER_EXEC) && p ? p->pid : 0;
        w->ended = 1;
        w->last_ns = rec->u.trailer.end_ns > w->last_ns ? rec->u.trailer.end_ns : w->last_ns;
        trace_end(w);
    } else if (rec->type == VT_REC_STEP) {
        growth_step_record(&w->g, &rec->u.step, phase_cb, w);
        if (!w->whole) /* (read whole: the events' levels, at the run's last event) */
            w->tensor = rec->u.step.fixed.live_tensor, w->device = rec->u.step.fixed.live_device;
        if (rec->u.step.fixed.peak_device > w->peak)
            w->peak = rec->u.step.fixed.peak_device, w->peak_ns = rec->u.step.time_ns;
        w->last_ns = rec->u.step.time_ns > w->last_ns ? rec->u.step.time_ns : w->last_ns;
        /* a chunked trace read as its summaries: an out-of-memory failure in a step is its
         * summary's (the OOM record itself is with the events: gone, or not read) */
        if ((rec->u.step.fixed.flags & VT_STEPF_OOM) &&
            !(w->oom && w->oom_bytes == rec->u.step.fixed.oom_request))
            w->oom = w->oom_by = 1, w->oom_bytes = rec->u.step.fixed.oom_request,
            w->oom_ns = rec->u.step.time_ns;
    }
}

/* header_pending: path may be a trace whose header is not there yet: empty, zeros where the
 * header goes (the preload maps the file, then copies the header into it), the magic and zeros
 * after it, or the header's beginning. What watch waits for; anything else that is not a trace
 * (another magic, another format version) is refused. */
static int header_pending(const char *path)
{
    unsigned char b[sizeof(vt_file_header)];
    struct stat st;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    /* (a regular file alone: a device such as /dev/null never becomes a trace; it had been
     * waited for, for ever) */
    ssize_t n = fd >= 0 && !fstat(fd, &st) && S_ISREG(st.st_mode) ? pread(fd, b, sizeof b, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (n < 0)
        return 0;
    size_t have = (size_t)n, m = have < VT_MAGIC_LEN ? have : VT_MAGIC_LEN, z = 0;
    while (z < have && !b[z])
        z++;
    if (z == have) /* empty, or zeros */
        return 1;
    if (memcmp(b, VT_MAGIC, m))
        return 0;
    for (z = m; z < have && !b[z];)
        z++;
    return have < sizeof b || z == have; /* cut short, or the magic alone so far */
}

/* reread: a chunked trace is read again from its beginning at each refresh: everything its
 * records made is forgotten first. Its first raw slot's events are read each time (while the
 * run is in it, all of them): kept from the last read, each allocation still live was taken as
 * one that replaced itself (freed from a growth just emptied: a stack's bytes wrapped, "growth
 * +5906991.75 TiB/step") and each backward pass was counted again ("94 backward passes" for
 * 47). -1: out of memory (no tables). */
static int reread(wstate *w)
{
    phases_memo_free(&w->memo); /* (its keys are the tables' records) */
    tables_free(w->t);
    growth_free_all(&w->g);
    memset(&w->g, 0, sizeof w->g);
    w->t = tables_new();
    free(w->phase_of);
    w->phase_of = NULL;
    w->nphase = 0;
    livemap_free(&w->live); /* (the last read's allocations) */
    w->device = w->tensor = w->peak = w->peak_ns = w->events = w->implausible = 0;
    w->oom = w->oom_by = w->bwd_pending = w->last_bwd = w->first_zg = w->zg_state = 0;
    w->oom_bytes = w->oom_ns = 0;
    w->passes = 0;
    return w->t ? 0 : -1;
}

/* refresh: reads what was written since the last time. 0; 1 when there is nothing to read yet
 * (w->why says why, w->why_rc the exit code if that is the end: a missing file 2, a header not
 * written 3); -1 with w->why and w->why_rc: the file cannot be read (2) or is not a trace (3);
 * -2: out of memory (its tables could not be made again: they had been used NULL, SIGSEGV). */
static int refresh(wstate *w)
{
    char msg[512];
    reader_record rec;
    if (w->chunked || !w->rd) {
        /* a chunked trace, or the first look: opened (again) and read to its end */
        errno = 0;
        reader *rd = w->chunked && !w->whole ? reader_open_summary(w->path, msg, sizeof msg)
                                             : reader_open(w->path, msg, sizeof msg);
        if (!rd) { /* not there (yet): waited for; a directory, no permission: the end */
            snprintf(w->why, sizeof w->why, "%s", msg);
            w->why_rc = VT_EXIT_USAGE;
            return errno == ENOENT ? 1 : -1;
        }
        if (reader_status_of(rd) == READER_MALFORMED && reader_position(rd) == 0) {
            reader_close(rd); /* a bad header: the process starting, or not a trace */
            snprintf(w->why, sizeof w->why, "%s", msg);
            w->why_rc = VT_EXIT_MALFORMED;
            return header_pending(w->path) ? 1 : -1;
        }
        if (!w->chunked && reader_chunked_info(rd)) {
            reader_close(rd);
            w->chunked = 1;
            return refresh(w);
        }
        if (w->chunked && reread(w) < 0) {
            reader_close(rd);
            return -2; /* out of memory (its tables): main says so */
        }
        if (!w->chunked)
            reader_watching(rd, 1); /* (the records of its last 100 ms wait: reader.h) */
        w->rd = rd;
    } else if (reader_follow(w->rd)) {
        return 0; /* ended, or nothing to follow */
    }
    while (reader_next(w->rd, &rec)) {
        if (rec.type == VT_REC_ALLOC || rec.type == VT_REC_FREE)
            event(w, &rec);
        else
            other(w, &rec);
    }
    w->seen = 1;
    reader_status st = reader_status_of(w->rd);
    if (st == READER_MALFORMED || st == READER_IOERR) {
        reader_describe(w->rd, w->why, sizeof w->why);
        w->why_rc = st == READER_MALFORMED ? VT_EXIT_MALFORMED : VT_EXIT_USAGE;
        if (w->chunked && !w->whole && ++w->bad < 10) {
            /* read while the packer reused a slot under it: read again at the next refresh */
            reader_close(w->rd);
            w->rd = NULL;
            w->seen = 0;
            return 0;
        }
        return -1;
    }
    w->bad = 0;
    if (w->chunked) {
        reader_close(w->rd);
        w->rd = NULL;
    }
    return 0;
}

/* killed_end: the trace ends where its dead writer left it (killed). A chunked one is read whole
 * once, as the report reads it: its summaries end at the last slot the packer took, and the events
 * after it, in raw slots no packer takes now, are the run's last (a bounded run killed after an
 * out-of-memory error had been shown without it, its peak and headroom those of its last summary:
 * "peak 378.0 MiB headroom 1.63 GiB" where the report says 1.86 GiB and the error). -1: that read
 * failed (w->why). */
static int killed_end(wstate *w)
{
    if (w->chunked && !w->whole) {
        w->whole = 1;
        if (refresh(w) < 0)
            return -1;
    } else if (!w->chunked && w->rd) { /* its last 100 ms, held back while it ran: read now */
        reader_watching(w->rd, 0);
        if (refresh(w) < 0)
            return -1;
    }
    trace_end(w); /* (where it stops: a step that ran into it is a step) */
    return 0;
}

/* show: the state, as a block redrawn in place (tty) or one line */
static void show(wstate *w, int tty, double secs)
{
    char a[32], b[32], c[32], d[32], e[300], site[600];
    growth_site gs[64]; /* every growing stack (the 64 fastest) counts toward the card */
    int ng = growth_sites(&w->g, gs, 64);
    double rate = 0, per = growth_time_per_step(&w->g);
    for (int i = 0; i < ng; i++)
        rate += gs[i].rate;
    uint64_t head = w->card > w->peak ? w->card - w->peak : 0;
    double to_card = rate > 0 && w->card > w->g.last_peak_device
                         ? (double)(w->card - w->g.last_peak_device) / rate
                         : -1;
    site[0] = 0;
    if (ng) /* the report's name of it: without Python frames, its operation (the innermost frame
             * is the allocator's own trace hook, every tensor's: watch had named that) */
        replay_site_text_in(w->t, NULL, gs[0].stack, site, sizeof site);
    card_format_bytes(w->device, a, sizeof a);
    card_format_bytes(w->peak, b, sizeof b);
    card_format_bytes(head, c, sizeof c);
    card_format_bytes((uint64_t)rate, d, sizeof d);
    /* too few step ends for the rule: the growth is not known, not none (growth_can_tell) */
    int tell = growth_can_tell(&w->g);
    const char *per_step = ng ? d : tell ? "0" : "?";
    char oom[64] = ""; /* what the out-of-memory error is known by, "" when none */
    if (w->oom)
        snprintf(oom, sizeof oom, "%s asked %s %.*fs", card_format_bytes(w->oom_bytes, e, sizeof e),
                 w->oom_by ? "by" : "at", w->oom_ns < 10000000000ull ? 3 : 1,
                 (double)w->oom_ns / 1e9);
    /* steps of forward and backward that an optimizer step did not end (accumulation's
     * micro-steps): how many did, as the report's growth says it */
    char opt[96] = "";
    /* a live run's step in flight has had its backward pass, not yet its end: no other split;
     * nor are more: the autograd thread's records can be written out before the main thread's
     * of the same steps (each thread's buffer flushed on its own), and a loaded machine's live
     * watch had read "steps 1 (its own: 3 backward passes, 1 optimizer step)" of a run of one
     * pass per step */
    unsigned in_flight = !w->ended && w->passes > w->g.steps;
    if (w->passes && !w->g.from_records && w->g.tensors_seen && w->passes != w->g.steps &&
        !in_flight)
        /* steps its allocations split otherwise than its backward passes (a Trainer's optimizer
         * allocations in its setup begin one more): the run's own counts, as the report says */
        snprintf(opt, sizeof opt, "its own: %u backward pass%s, %u optimizer step%s", w->passes,
                 w->passes == 1 ? "" : "es", w->g.opt_steps, w->g.opt_steps == 1 ? "" : "s");
    else if (w->g.opt_steps && w->g.opt_steps < w->g.steps)
        snprintf(opt, sizeof opt, "%u ending in an optimizer step", w->g.opt_steps);
    else if (!w->g.opt_steps && w->g.steps && !w->g.from_records) /* (an OOM before one) */
        snprintf(opt, sizeof opt, "none ending in an optimizer step");
    /* several stacks growing: the rate is theirs in all, the site the fastest's, with its own
     * rate (a leak of 10 stacks had read "+4.9 MiB per step ... at sim_train.py:117", the
     * report's +1.0 MiB per step there) */
    char top[64] = "";
    if (ng > 1)
        snprintf(top, sizeof top, "%d stacks; the fastest +%s", ng,
                 card_format_bytes((uint64_t)gs[0].rate, e, sizeof e));
    if (!tty) {
        printf(
            "%.1fs live %s peak %s headroom %s steps %u%s%s%s growth %s%s/step%s%s%s%s%s%s%s%s%s\n",
            secs, a, b, w->card ? c : "?", w->g.steps, *opt ? " (" : "", opt, *opt ? ")" : "",
            ng ? "+" : "", per_step, *top ? " (" : "", top, *top ? "/step" : "", ng ? " at " : "",
            ng ? site : "", *top ? ")" : "", *oom ? " out of memory: " : "", oom,
            w->ended ? " (ended)" : "");
        fflush(stdout);
        return;
    }
    if (w->lines)
        printf("\033[%dA\033[J", w->lines); /* back up over the last block */
    int lines = 0;
    escape_term(w->path, strlen(w->path), e, sizeof e);
    printf("vramtrace watch  %s  %.1f s traced%s\n", e, secs, w->ended ? "  (ended)" : "");
    printf("  live now     %s%s\n", a,
           w->g.tensors_seen ? "" : "  (device memory: no tensor events)");
    printf("  peak so far  %s at %.*f s\n", b, w->peak_ns < 10000000000ull ? 3 : 1,
           (double)w->peak_ns / 1e9);
    lines += 3;
    if (w->card) {
        printf("  card         %s, headroom at the peak %s\n",
               card_format_bytes(w->card, e, sizeof e), c);
        lines++;
    }
    if (*oom) {
        printf("  out of memory  %s\n", oom);
        lines++;
    }
    if (per > 0)
        printf("  steps        %u (%s%s%.*f s per step)\n", w->g.steps, opt, *opt ? "; " : "",
               per < 0.1 ? 5 : 2, per);
    else
        printf("  steps        %u%s%s%s\n", w->g.steps, *opt ? " (" : "", opt, *opt ? ")" : "");
    lines++;
    char card_in[64] = "";
    if (to_card >= 0)
        snprintf(card_in, sizeof card_in, ": the card in about %.0f steps", to_card);
    if (ng > 1)
        printf("  growth       +%s per step (%s per step since step %u, at %s)%s\n", d, top,
               gs[0].since_step, site, card_in);
    else if (ng)
        printf("  growth       +%s per step since step %u at %s%s\n", d, gs[0].since_step, site,
               card_in);
    else if (tell)
        printf("  growth       none across the steps so far\n");
    else
        printf("  growth       too few step ends to tell yet (%u seen, %u needed)\n",
               growth_step_ends(&w->g), (unsigned)GROWTH_MIN_STEP_ENDS);
    lines++;
    if (!w->chunked && w->g.steps) {
        printf("  at the last step's end, by the phase that made it:");
        for (int p = 0; p < PHASE_COUNT; p++)
            if (w->g.last_by_phase[p] >= (1u << 20))
                printf(" %s %s", phase_name(p),
                       card_format_bytes(w->g.last_by_phase[p], e, sizeof e));
        printf("\n");
        lines++;
    }
    w->lines = lines;
    fflush(stdout);
}

static void free_state(wstate *w)
{
    reader_close(w->rd);
    phases_memo_free(&w->memo);
    tables_free(w->t);
    livemap_free(&w->live); /* (its arrays may be mapped, not malloc'ed: livemap.c) */
    growth_free_all(&w->g);
    free(w->phase_of);
}

/* writer_dead: the process that wrote w's trace (its PROCESS record: pid, host) is gone from this
 * machine. A process of the same pid, or another host, is taken for alive. */
static int writer_dead(const wstate *w)
{
    const tables_process *p = w->t ? tables_process_get(w->t) : NULL;
    char host[256] = "";
    return p && p->pid && !gethostname(host, sizeof host - 1) && !strcmp(host, p->host.s) &&
           kill((pid_t)p->pid, 0) != 0 && errno == ESRCH;
}

/* writer_gone: the writer is dead (writer_dead) and the file has not grown for two refreshes:
 * killed, its trace never ended (it had been watched forever, a line a second) */
static int writer_gone(wstate *w)
{
    struct stat st;
    if (!writer_dead(w) || stat(w->path, &st)) {
        w->stale = 0;
        return 0;
    }
    w->stale = st.st_size == w->last_size ? w->stale + 1 : 0;
    w->last_size = st.st_size;
    return w->stale >= 2;
}

/* watch_loop: refreshes every interval until the trace ends, the child (when > 0) exits (then
 * *reaped = 1, its status in *status), or once. The exit code. */
int watch_loop(const char *path, double interval, int once, int plain, pid_t child, int *status,
               int *reaped, uint32_t *exec_pid)
{
    wstate w;
    memset(&w, 0, sizeof w);
    w.path = path;
    w.t = tables_new();
    int tty = !plain && isatty(STDOUT_FILENO);
    int rc = w.t ? VT_EXIT_OK : VT_EXIT_USAGE; /* (out of memory: main says so) */
    while (w.t) {
        if (child > 0 && !*reaped) {
            pid_t p = run_signals_reap(child, status, WNOHANG);
            *reaped = p == child || (p < 0 && errno != EINTR && errno != EAGAIN);
        }
        int r = refresh(&w);
        if (r == -2) {
            rc = VT_EXIT_USAGE;
            break;
        }
        if (r < 0) {
            notes_error("watch", w.why);
            rc = w.why_rc;
            break;
        }
        if (r == 1 && !w.seen && !once && !w.said_wait) { /* (it had waited without a word) */
            char said[sizeof w.why + 40];
            snprintf(said, sizeof said, "%s (waiting for it; Ctrl-C stops)", w.why);
            notes_error("watch", said);
            w.said_wait = 1;
        }
        /* a trace without its end whose writer is dead (killed) ends where it stops, as the
         * report reads it: a step that ran into it is a step (watch had said one fewer) */
        int last = once || (child > 0 && *reaped);
        int gone = w.seen && !w.ended && (last ? writer_dead(&w) : child <= 0 && writer_gone(&w));
        if (gone && killed_end(&w) < 0) {
            notes_error("watch", w.why);
            rc = w.why_rc;
            break;
        }
        if (mem_failed()) { /* what it would show may be wrong: nothing more (main says so) */
            rc = VT_EXIT_USAGE;
            break;
        }
        if (w.seen)
            show(&w, tty, (double)w.last_ns / 1e9);
        if (gone && (!last || once)) { /* (--once too: it had shown the line in silence) */
            const tables_process *p = tables_process_get(w.t);
            fprintf(stderr,
                    "vramtrace watch: %s: the process that wrote it (pid %u) is gone and the trace "
                    "has no end (killed?): it holds what is shown above\n",
                    path, p->pid);
            break;
        }
        if (once || w.ended || (child > 0 && *reaped)) {
            if (!w.seen && once) { /* nothing to show: what report says of the same file */
                notes_error("watch", w.why[0] ? w.why : "nothing to read yet");
                rc = w.why_rc ? w.why_rc : VT_EXIT_USAGE;
            }
            break;
        }
        struct timespec ts = {(time_t)interval,
                              (long)((interval - (double)(time_t)interval) * 1e9)};
        nanosleep(&ts, NULL);
    }
    notes_implausible("watch", path, w.implausible); /* (said once, after what it showed) */
    if (exec_pid)
        *exec_pid = w.ended ? w.exec_pid : 0;
    free_state(&w);
    return rc;
}
