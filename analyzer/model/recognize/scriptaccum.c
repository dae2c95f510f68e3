/* scriptaccum.c — a recorded script's own gradient accumulation, read from how its code uses its
 * flags (scriptflags.h config_script_global): its batch flag divided by another of its flags
 * (micro = args.batch // args.update_every) makes that flag the micro-batches per optimizer step
 * and the batch flag the optimizer's batch. A --batch 256 of such a script had been read as the
 * micro-batch, its --update_every 4 as "no flag sets it", and `--batch 128` advised as "keeping
 * the effective batch". Nothing is executed: the division's text is read as written. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "scriptflags.h"

static int ident_char(char ch)
{
    return isalnum((unsigned char)ch) || ch == '_';
}

/* device_word: one '_'-separated word of a name that counts devices or processes: an optional
 * count prefix ("n", "num", "nb"), a stem ("gpu", "proc", "process", "world", "dp", ...), an
 * optional plural and an optional "count" / "size" / "per..." tail: ngpus, nprocs, numgpus,
 * processes, gpuspernode. The parts, not the whole word: the whole-word list had missed ngpus,
 * nproc and num_processes, accelerate's own name, and read their split as accumulation. */
static int device_word(const char *w, size_t l)
{
    static const char *const stems[] = {
        "gpu",    "proc",    "process", "device",   "dev",  "world",   "rank",        "node",
        "worker", "replica", "shard",   "parallel", "host", "machine", "accelerator", "tpu",
        "dp",     "ddp",     "fsdp",    "tp",       "pp",   NULL};
    static const char *const pre[] = {"", "n", "num", "nb", NULL};
    static const char *const tail[] = {"", "count", "size", "per", NULL};
    for (int p = 0; pre[p]; p++) {
        size_t pl = strlen(pre[p]);
        if (pl > l || strncmp(w, pre[p], pl))
            continue;
        for (int i = 0; stems[i]; i++) {
            size_t sl = strlen(stems[i]), k = pl + sl;
            if (k > l || strncmp(w + pl, stems[i], sl))
                continue;
            if (k + 2 <= l && !strncmp(w + k, "es", 2) && stems[i][sl - 1] == 's')
                k += 2; /* (processes) */
            else if (k < l && w[k] == 's')
                k++;
            for (int t = 0; tail[t]; t++) {
                size_t tl = strlen(tail[t]);
                /* "per" opens a tail (gpuspernode); the others end the word */
                if (k + tl <= l && !strncmp(w + k, tail[t], tl) &&
                    (k + tl == l || !strcmp(tail[t], "per")))
                    return 1;
            }
        }
    }
    return 0;
}

/* scriptflags_names_device (scriptflags.h): a divisor that counts devices or processes (args.batch
 * // args.world_size,
 * // args.ngpus: a data-parallel split, no accumulation), by a word of its name (lower-case) */
int scriptflags_names_device(const char *name)
{
    for (const char *w = name; *w;) {
        size_t l = strcspn(w, "_");
        if (device_word(w, l))
            return 1;
        w += l + (w[l] == '_');
    }
    return 0;
}

/* flag_of: the index in fl[0..n) of the flag whose name (any of its option strings, as
 * config_flag_name writes it) is dest, else -1 */
static int flag_of(const script_flag *fl, int n, const char *dest)
{
    char k[64];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fl[i].nnames; j++) {
            config_flag_name(fl[i].names[j], k, sizeof k);
            if (!strcmp(k, dest))
                return i;
        }
    return -1;
}

/* attr_at: at s[i] (spaces first) "x.name", a value read through a namespace: name's length into
 * *nl at *name; the index just past it, 0 when the text is no such value */
static size_t attr_at(const char *s, size_t i, size_t len, const char **name, size_t *nl)
{
    while (i < len && s[i] == ' ')
        i++;
    size_t a = i;
    while (i < len && ident_char(s[i]))
        i++;
    if (i == a || i >= len || s[i] != '.')
        return 0;
    size_t b = ++i;
    while (i < len && ident_char(s[i]))
        i++;
    if (i == b)
        return 0;
    *name = s + b, *nl = i - b;
    return i;
}

/* divisor: at s[i] (just after ".dest" of the batch flag), "// x.name" or "/ x.name": name's
 * length into *nl at *name; 0 when the text is no such division */
static int divisor(const char *s, size_t i, size_t len, const char **name, size_t *nl)
{
    while (i < len && s[i] == ' ')
        i++;
    if (i >= len || s[i] != '/')
        return 0;
    i += i + 1 < len && s[i + 1] == '/' ? 2 : 1;
    if (i < len && s[i] == '=')
        return 0; /* (/=: the batch flag divided in place, by whatever follows) */
    i = attr_at(s, i, len, name, nl);
    if (!i || (i < len && s[i] == '('))
        return 0; /* (a method's call: not a flag's value) */
    return 1;
}

/* chunks_arg: at s[i] "chunk(" after a '.' (torch.chunk(x, N, ...) or x.chunk(N, ...)), N read as
 * "x.name": name's length into *nl at *name; 0 when the call's count is no such value. The batch
 * cut into that many chunks, each its own forward and backward (Transformer-XL's --batch_chunk:
 * torch.chunk(data, args.batch_chunk, 1)), is accumulation by another name. */
static int chunks_arg(const char *s, size_t i, size_t len, const char **name, size_t *nl)
{
    if (i < 1 || s[i - 1] != '.' || i + 6 > len || strncmp(s + i, "chunk(", 6))
        return 0;
    int torch_fn = i >= 6 && !strncmp(s + i - 6, "torch.", 6);
    i += 6;
    if (torch_fn) { /* (the tensor first: to its comma, outside brackets) */
        int depth = 0;
        while (i < len && s[i] != '\n' && (depth || s[i] != ',')) {
            depth += s[i] == '(' || s[i] == '[';
            depth -= (s[i] == ')' || s[i] == ']') && depth;
            i++;
        }
        if (i >= len || s[i] != ',')
            return 0;
        i++;
    }
    i = attr_at(s, i, len, name, nl);
    while (i && i < len && s[i] == ' ')
        i++;
    return i && i < len && (s[i] == ',' || s[i] == ')');
}

/* cmdline_value: the value the command line gave fl (any of its names), else its integer
 * default; *given: 1 when the command line gave it, '=' or ' ' in *sep; 0 when there is none */
static long long cmdline_value(const script_flag *fl, int argc, const char *const *argv, int *given,
                               char *sep)
{
    const char *v;
    int eq;
    *given = 0, *sep = ' ';
    if (scriptflags_given_value(fl, argc, argv, &v, &eq) > 0) {
        *sep = eq ? '=' : ' ';
        if (!v)
            return 0;
        char *end;
        long long x = strtoll(v, &end, 10);
        *given = 1;
        return *end ? 0 : x;
    }
    return fl->has_default ? fl->def : 0;
}

/* line_at: the line of s holding i, its number (1-based) and its text (trimmed, cut) into out */
static int line_at(const char *s, size_t i, char *out, size_t cap)
{
    size_t a = i, b = i;
    int no = 1;
    for (size_t k = 0; k < i; k++)
        no += s[k] == '\n';
    while (a > 0 && s[a - 1] != '\n')
        a--;
    while (s[b] && s[b] != '\n')
        b++;
    while (a < b && (s[a] == ' ' || s[a] == '\t'))
        a++;
    snprintf(out, cap, "%.*s", (int)(b - a), s + a);
    return no;
}

/* accum_from: the division of batch flag fl[bi] (its value G) by another flag in s, applied to c
 * (see config_script_global); 1 when found */
static int accum_from(nano_config *c, const config_recfile *f, const char *s, const script_flag *fl,
                      int n, int bi, int argc, const char *const *argv, long long trace_b)
{
    config_value *b = &c->v[CFG_batch_size], *a = &c->v[CFG_gradient_accumulation_steps];
    int bgiven;
    char bsep;
    long long G = cmdline_value(&fl[bi], argc, argv, &bgiven, &bsep);
    const char *bflag = fl[bi].names[0];
    for (int m = 0; m < fl[bi].nnames; m++)
        if (!strncmp(fl[bi].names[m], "--", 2))
            bflag = fl[bi].names[m];
    if (G <= 0 || (b->src == CONFIG_SRC_ARG && b->i != G))
        return 0; /* (the command line's micro-batch is another flag's) */
    char bdest[64];
    config_flag_name(bflag, bdest, sizeof bdest);
    size_t bl = strlen(bdest);
    /* found in its code alone (pysrc.h); the division and the line it cites read from the
     * source itself, as written */
    char *code = pysrc_clean(s, f->len);
    for (size_t i = 0; code && i < f->len; i++) {
        const char *name;
        size_t nl;
        char dest[64];
        /* the batch cut into a flag's count of chunks: only where the trace shows the micro-batch
         * it makes, or that many backward passes before each optimizer step (a tensor's
         * .chunk(args.n_heads) is no batch's) */
        int chunked = code[i] == 'c' && chunks_arg(code, i, f->len, &name, &nl);
        if (chunked)
            name = s + (name - code); /* (the source's own text, as the division's) */
        /* x.batch, and not x.batch_size: the batch flag's value read through its namespace */
        else if (code[i] != '.' || i == 0 || !ident_char(code[i - 1]) || i + 1 + bl > f->len ||
                 strncmp(code + i + 1, bdest, bl) || ident_char(code[i + 1 + bl]) ||
                 !divisor(s, i + 1 + bl, f->len, &name, &nl))
            continue;
        if (nl >= sizeof dest)
            continue;
        snprintf(dest, sizeof dest, "%.*s", (int)nl, name);
        for (char *p = dest; *p; p++)
            *p = (char)tolower((unsigned char)*p);
        int k = flag_of(fl, n, dest);
        int given;
        char sep;
        long long A = k < 0 || !strcmp(dest, bdest) || scriptflags_names_device(dest)
                          ? 0
                          : cmdline_value(&fl[k], argc, argv, &given, &sep);
        if (A <= 1 || G % A || (a->src == CONFIG_SRC_TRACE && a->i != A) ||
            (b->src == CONFIG_SRC_TRACE && b->i != G / A) || (trace_b > 0 && trace_b != G / A))
            continue; /* not it, or not what the trace shows */
        if (chunked && !(trace_b > 0 ? trace_b == G / A : a->src == CONFIG_SRC_TRACE && a->i == A))
            continue;
        const char *lng = fl[k].names[0];
        for (int m = 0; m < fl[k].nnames; m++)
            if (!strncmp(fl[k].names[m], "--", 2))
                lng = fl[k].names[m];
        const char *base = pysrc_name(f->name);
        char line[96], by[320];
        int no = line_at(s, i, line, sizeof line);
        int named = given || a->src == CONFIG_SRC_TRACE; /* (else its default's row names it) */
        snprintf(by, sizeof by, "%.40s%s%d %s %.40s %s (%.90s)", named ? base : "line ",
                 named ? ":" : "", no, chunked ? "cuts the batch of" : "divides", bflag,
                 chunked ? "into that many chunks, a forward and backward each" : "by it", line);
        if (a->src == CONFIG_SRC_TRACE) {
            size_t w = strlen(a->where);
            snprintf(a->where + w, sizeof a->where - w, "; %s", by);
        } else if (given) {
            a->i = A, a->src = CONFIG_SRC_ARG;
            snprintf(a->where, sizeof a->where, "%.40s%c%lld; %.300s", lng, sep, A, by);
        } else {
            a->i = A, a->src = CONFIG_SRC_FILE;
            snprintf(a->where, sizeof a->where,
                     "%.40s: %.40s, default=%lld (its argparse; not on the command line); %.220s",
                     base, lng, A, by);
        }
        snprintf(a->flag, sizeof a->flag, "%s", lng);
        a->flag_sep = given ? sep : ' ';
        a->call[0] = '\0';
        const char *dflt = bgiven ? "" : " (its default)";
        if (b->src == CONFIG_SRC_TRACE) { /* the trace's, which agrees */
            size_t w = strlen(b->where);
            snprintf(b->where + w, sizeof b->where - w,
                     "; = %.40s %lld%s / %.40s %lld, the micro-batch %.40s:%d makes", bflag, G,
                     dflt, lng, A, base, no);
        } else {
            b->i = G / A, b->src = bgiven ? CONFIG_SRC_ARG : CONFIG_SRC_FILE;
            snprintf(b->where, sizeof b->where,
                     "%lld = %.40s %lld%s / %.40s %lld: the micro-batch %.40s:%d makes (%.90s)",
                     G / A, bflag, G, dflt, lng, A, base, no, line);
        }
        snprintf(c->batch_global, sizeof c->batch_global, "%s", bflag);
        c->batch_global_v = G;
        c->batch_chunked = chunked;
        b->flag[0] = '\0', b->flag_sep = 0, b->call[0] = '\0';
        free(code);
        return 1;
    }
    free(code);
    return 0;
}

/* physical_flag: the index in fl[0..n) of a flag whose name says a physical batch (Opacus's
 * max_physical_batch_size, a --physical-batch-size), else -1 */
static int physical_flag(const script_flag *fl, int n)
{
    char k[64];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < fl[i].nnames; j++) {
            config_flag_name(fl[i].names[j], k, sizeof k);
            if (strstr(k, "physical") && strstr(k, "batch"))
                return i;
        }
    return -1;
}

/* long_name: fl's --long option string, else its first */
static const char *long_name(const script_flag *fl)
{
    for (int m = 0; m < fl->nnames; m++)
        if (!strncmp(fl->names[m], "--", 2))
            return fl->names[m];
    return fl->names[0];
}

/* split_from: a physical batch flag fl[pi] beside the batch flag fl[bi] (the logical batch,
 * larger), applied to c (see config_script_physical) */
static void split_from(nano_config *c, const config_recfile *f, const script_flag *fl, int bi,
                       int pi, int argc, const char *const *argv, long long tokens)
{
    config_value *b = &c->v[CFG_batch_size], *a = &c->v[CFG_gradient_accumulation_steps];
    int bgiven, pgiven;
    char bsep, psep;
    long long G = cmdline_value(&fl[bi], argc, argv, &bgiven, &bsep);
    long long P = cmdline_value(&fl[pi], argc, argv, &pgiven, &psep);
    if (G <= P || P <= 0 || (b->src == CONFIG_SRC_ARG && b->i != G) ||
        (tokens > 0 && tokens % P != 0))
        return; /* (one physical batch: the batch flag's; or not what the trace shows) */
    const char *bflag = long_name(&fl[bi]), *pflag = long_name(&fl[pi]);
    const char *base = strrchr(f->name, '/') ? strrchr(f->name, '/') + 1 : f->name;
    char gsaid[96], psaid[160];
    snprintf(gsaid, sizeof gsaid, "%.40s %lld%s", bflag, G, bgiven ? "" : " (its default)");
    if (pgiven)
        snprintf(psaid, sizeof psaid, "%.40s%c%lld", pflag, psep, P);
    else
        snprintf(psaid, sizeof psaid,
                 "%.40s: %.40s, default=%lld (its argparse; not on the command line)", base, pflag,
                 P);
    b->i = P, b->src = pgiven ? CONFIG_SRC_ARG : CONFIG_SRC_FILE;
    snprintf(b->where, sizeof b->where,
             "%.150s: the physical batch each forward takes; %.80s is the logical batch, split "
             "into physical batches of at most it (as Opacus's BatchMemoryManager splits it)",
             psaid, gsaid);
    snprintf(b->flag, sizeof b->flag, "%s", pflag);
    b->flag_sep = pgiven ? psep : ' ', b->call[0] = '\0';
    snprintf(c->batch_global, sizeof c->batch_global, "%s", bflag);
    c->batch_global_v = G;
    c->batch_split = 1;
    size_t pl = strlen(pflag);
    if (!strncmp(c->batch_unplaced, pflag, pl) && !strchr(c->batch_unplaced + pl, ','))
        c->batch_unplaced[0] = '\0'; /* (the command line's one unplaced batch flag: placed) */
    a->flag[0] = '\0', a->flag_sep = 0, a->call[0] = '\0';
    if (G % P) { /* (uneven physical batches: no one count of them per step) */
        memset(a, 0, sizeof *a);
        a->src = CONFIG_SRC_UNKNOWN;
        a->i = 1; /* (advice's reference for a change by a factor: advice_flags) */
        snprintf(a->where, sizeof a->where,
                 "%s over the physical batch %lld is %lld physical batches, the last of %lld: "
                 "not one count of micro-batches per optimizer step",
                 gsaid, P, G / P + 1, G % P);
        return;
    }
    a->i = G / P, a->src = bgiven && pgiven ? CONFIG_SRC_ARG : CONFIG_SRC_FILE;
    snprintf(a->where, sizeof a->where,
             "A = %lld: the logical batch %s over the physical batch %lld: %lld physical "
             "batches' gradients summed before each optimizer step",
             G / P, gsaid, P, G / P);
}

void config_script_physical(nano_config *c, int argc, const char *const *argv,
                            const infer_result *ir)
{
    const infer_value *tn = ir && !ir->tokens_eval ? &ir->v[INFER_tokens] : NULL;
    long long tokens = tn && tn->known ? tn->value : 0;
    const config_recfile *f = config_recorded_script(c, argc, argv);
    config_source as = c->v[CFG_gradient_accumulation_steps].src;
    if (!f || !f->len || c->batch_global[0] ||
        (as != CONFIG_SRC_UNKNOWN && as != CONFIG_SRC_TRACE && as != CONFIG_SRC_DEFAULT))
        return; /* (an accumulation the program gave, or its batch flag read as B·A already) */
    script_flag *fl = malloc(SCRIPT_FLAGS_MAX * sizeof *fl);
    if (!fl)
        return;
    int n = scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX), pi = physical_flag(fl, n);
    for (int i = 0; pi >= 0 && i < n; i++) {
        int k = -1;
        for (int j = 0; j < fl[i].nnames && k < 0; j++)
            k = config_flag_key(fl[i].names[j]);
        if (k == CFG_batch_size && i != pi) {
            split_from(c, f, fl, i, pi, argc, argv, tokens);
            break;
        }
    }
    free(fl);
}

void config_script_global(nano_config *c, int argc, const char *const *argv, long long trace_b)
{
    const config_recfile *f = config_recorded_script(c, argc, argv);
    config_value *a = &c->v[CFG_gradient_accumulation_steps];
    if (!f || !f->len || (a->src != CONFIG_SRC_UNKNOWN && a->src != CONFIG_SRC_TRACE))
        return; /* (an accumulation the program gave: its flag is the one) */
    script_flag *fl = malloc(SCRIPT_FLAGS_MAX * sizeof *fl);
    char *s = malloc(f->len + 1); /* (a NUL at its end: the line's text is read to it) */
    if (fl && s) {
        memcpy(s, f->data, f->len);
        s[f->len] = '\0';
        int n = scriptflags_parse(f->data, f->len, fl, SCRIPT_FLAGS_MAX);
        for (int i = 0; i < n; i++) {
            int k = -1;
            for (int j = 0; j < fl[i].nnames && k < 0; j++)
                k = config_flag_key(fl[i].names[j]);
            if (k == CFG_batch_size && accum_from(c, f, s, fl, n, i, argc, argv, trace_b))
                break;
        }
    }
    free(fl);
    free(s);
}

void config_script_batches(nano_config *c, int argc, const char *const *argv,
                           const infer_result *ir)
{
    const infer_value *tb = ir ? &ir->v[INFER_batch_size] : NULL;
    config_script_global(c, argc, argv, tb && tb->known && !ir->tokens_eval ? tb->value : 0);
    config_script_physical(c, argc, argv, ir);
}
