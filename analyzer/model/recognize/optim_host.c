/* optim_host.c — a script's own optimizer class that makes its state on the host (recognize.h's
 * optim_host_said), read from its code where no step ran to measure it: each tensor its body puts
 * into its per-parameter state (`state["exp_avg"] = torch.zeros(..., device="cpu")`,
 * `st = self.state[p]; st["master"] = p.detach().to("cpu").float()`) names the host and never
 * CUDA. A ZeRO-Offload-like Adam out of memory before its first step had been predicted AdamW's
 * state on the device (174 MiB), said assumed, where its steps put none there. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"
#include "recognize.h"

#define HOST_NAMES 8 /* names a class binds to its state (state = self.state[p]) */

static int ident(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

/* has: s[a, b) holds w */
static int has(const char *s, size_t a, size_t b, const char *w)
{
    return memmem(s + a, b - a, w, strlen(w)) != NULL;
}

/* assign_at: the '=' of c[a, b)'s assignment at its top level (none of ==, <=, >=, !=, +=,
 * a keyword argument's), b where there is none */
static size_t assign_at(const char *c, size_t a, size_t b)
{
    int depth = 0;
    for (size_t i = a; i < b; i++) {
        depth += c[i] == '(' || c[i] == '[' || c[i] == '{';
        depth -= c[i] == ')' || c[i] == ']' || c[i] == '}';
        if (c[i] == '=' && !depth && i > a && !strchr("=<>!+-*/%&|^@:", c[i - 1]) &&
            (i + 1 >= b || c[i + 1] != '='))
            return i;
    }
    return b;
}

/* scalar: c[a, b) is a number, True, False or None (a step count, not a tensor) */
static int scalar(const char *c, size_t a, size_t b)
{
    while (a < b && (c[a] == ' ' || c[a] == '\t'))
        a++;
    while (b > a && (c[b - 1] == ' ' || c[b - 1] == '\t' || c[b - 1] == '\r'))
        b--;
    static const char *const words[] = {"True", "False", "None"};
    for (size_t k = 0; k < 3; k++)
        if (b - a == strlen(words[k]) && !memcmp(c + a, words[k], b - a))
            return 1;
    for (size_t i = a; i < b; i++)
        if (!((c[i] >= '0' && c[i] <= '9') || c[i] == '.' || c[i] == '-' || c[i] == '_'))
            return 0;
    return b > a;
}

/* own_host: class name's body in c (s: the source, same offsets; L its nl logical lines) puts
 * tensors into its state, each made on the host: their count, the lines of the first and last
 * (*lo, *hi); 0 where none is, or one is not on the host */
static int own_host(const char *s, const char *c, const lline *L, long nl, const char *name,
                    uint32_t *lo, uint32_t *hi)
{
    size_t m = strlen(name);
    long k = 0;
    for (; k < nl; k++)
        if (L[k].b - L[k].a > m + 6 && !memcmp(c + L[k].a, "class ", 6) &&
            !memcmp(c + L[k].a + 6, name, m) && !ident(c[L[k].a + 6 + m]))
            break;
    if (k == nl)
        return 0;
    char names[HOST_NAMES][48];
    int nn = 0, tensors = 0;
    for (long j = k + 1; j < nl && L[j].indent > L[k].indent; j++) {
        size_t a = L[j].a, b = L[j].b, eq = assign_at(c, a, b);
        if (eq == b)
            continue;
        size_t r = eq + 1;
        while (r < b && c[r] == ' ')
            r++;
        size_t e = a; /* the target's first name */
        while (e < eq && ident(c[e]))
            e++;
        if (e > a && e - a < 48 && e < eq && c[e] == ' ' && b - r >= 10 &&
            !memcmp(c + r, "self.state", 10) && !ident(c[r + 10]) && nn < HOST_NAMES) {
            memcpy(names[nn], c + a, e - a), names[nn++][e - a] = '\0'; /* (st = self.state[p]) */
            continue;
        }
        int st = eq - a > 11 && !memcmp(c + a, "self.state[", 11);
        for (int q = 0; !st && q < nn; q++)
            st = e - a == strlen(names[q]) && !memcmp(c + a, names[q], e - a) && c[e] == '[';
        if (!st || scalar(c, r, b))
            continue;
        if (!(has(s, r, b, "\"cpu\"") || has(s, r, b, "'cpu'") || has(s, r, b, ".cpu(") ||
              has(s, r, b, "pin_memory")) ||
            has(s, r, b, "cuda") || has(s, r, b, ".to(p"))
            return 0; /* (a state tensor that may be on the device) */
        if (!tensors++)
            *lo = L[j].first;
        *hi = L[j].last;
    }
    return tensors;
}

int optim_host_said(const config_files *fs, int file, const char *name, const char *where,
                    const char *unmeasured, run_recognition *r)
{
    if (!fs || file < 0 || file >= fs->n || !fs->f[file].data || !name[0])
        return 0;
    const config_recfile *cf = &fs->f[file];
    char *c = pysrc_clean(cf->data, cf->len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, cf->len, &L) : -1;
    uint32_t lo = 0, hi = 0;
    int n = nl > 0 ? own_host(cf->data, c, L, nl, name, &lo, &hi) : 0;
    free(L);
    free(c);
    if (n <= 0)
        return 0;
    r->optim = OPT_NONE;
    r->optim_off_device = 1;
    char lines[96];
    const char *base = pysrc_name(cf->name ? cf->name : "");
    if (lo == hi)
        snprintf(lines, sizeof lines, "line %u of %.60s", lo, base);
    else
        snprintf(lines, sizeof lines, "lines %u-%u of %.60s", lo, hi, base);
    snprintf(r->optim_class, sizeof r->optim_class, "%s", name);
    snprintf(r->optim_source, sizeof r->optim_source,
             "its code makes its %d state tensor%s on the host (%.96s)", n, n > 1 ? "s" : "",
             lines);
    snprintf(r->optim_where, sizeof r->optim_where,
             "%s, the script's only optimizer: %s, none on the device (%s: not measured)", where,
             r->optim_source, unmeasured);
    return 1;
}
