/* castsrc.c — the lines of a recorded script that cast to 16 bits (castsrc.h): a frozen U-Net,
 * VAE and text encoder that a ControlNet script cast to fp16 (`unet.to(accelerator.device,
 * dtype=weight_dtype)`) had been counted at 4 B an element, as fp32, where the trace's sizes
 * cannot tell 2-byte elements from 4-byte ones. */
#include "castsrc.h"

#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

static int name_byte(char ch)
{
    return ch == '_' || (ch >= '0' && ch <= '9') || ((ch | 32) >= 'a' && (ch | 32) <= 'z');
}

/* word_in: s[a..b) holds w with no name byte right before or after it */
static int word_in(const char *s, size_t a, size_t b, const char *w)
{
    size_t n = strlen(w);
    for (size_t i = a; i + n <= b; i++)
        if (!memcmp(s + i, w, n) && (i == a || !name_byte(s[i - 1])) &&
            (i + n == b || !name_byte(s[i + n])))
            return 1;
    return 0;
}

/* the dtypes a text names: 1 a 16-bit one, 2 another floating one (both may be set) */
static int dtypes_in(const char *c, size_t a, size_t b)
{
    int k = 0;
    if (word_in(c, a, b, "float16") || word_in(c, a, b, "bfloat16") ||
        word_in(c, a, b, "torch.half"))
        k |= 1;
    if (word_in(c, a, b, "float32") || word_in(c, a, b, "float64") ||
        word_in(c, a, b, "torch.float") || word_in(c, a, b, "torch.double"))
        k |= 2;
    return k;
}

static void trim(const char *c, size_t *a, size_t *b)
{
    while (*a < *b && (c[*a] == ' ' || c[*a] == '\t' || c[*a] == '\n' || c[*a] == '\\'))
        ++*a;
    while (*b > *a && (c[*b - 1] == ' ' || c[*b - 1] == '\t' || c[*b - 1] == '\n'))
        --*b;
}

/* one_dtype: c[a..b) is one dtype and nothing else: 1 a 16-bit one, 2 another floating one, 0 not
 */
static int one_dtype(const char *c, size_t a, size_t b)
{
    static const char *const d16[] = {"torch.float16", "torch.half", "torch.bfloat16"};
    static const char *const d32[] = {"torch.float32", "torch.float", "torch.float64",
                                      "torch.double"};
    trim(c, &a, &b);
    for (size_t i = 0; i < sizeof d16 / sizeof d16[0]; i++)
        if (b - a == strlen(d16[i]) && !memcmp(c + a, d16[i], b - a))
            return 1;
    for (size_t i = 0; i < sizeof d32 / sizeof d32[0]; i++)
        if (b - a == strlen(d32[i]) && !memcmp(c + a, d32[i], b - a))
            return 2;
    return 0;
}

/* precision_words: the raw text s[a..b) (strings kept: `== "fp16"`) names the precision */
static int precision_words(const char *s, size_t a, size_t b)
{
    static const char *const w[] = {"precision", "fp16", "bf16", "float16", "half", "mixed"};
    for (size_t k = 0; k < sizeof w / sizeof w[0]; k++) {
        size_t n = strlen(w[k]);
        for (size_t i = a; i + n <= b; i++)
            if (!memcmp(s + i, w[k], n))
                return 1;
    }
    return 0;
}

/* starts: logical line l's code begins with keyword w and a space or ':' */
static int starts(const char *c, const lline *l, const char *w)
{
    size_t n = strlen(w);
    return l->b - l->a > n && !memcmp(c + l->a, w, n) && (c[l->a + n] == ' ' || c[l->a + n] == ':');
}

/* under_precision: line i lies right inside an if / elif / else whose chain's tests name the
 * precision (the nearest line before it indented less is its block's header) */
static int under_precision(const char *s, const char *c, const lline *L, long i)
{
    long h = i - 1;
    while (h >= 0 && L[h].indent >= L[i].indent)
        h--;
    if (h < 0)
        return 0;
    if (starts(c, &L[h], "if") || starts(c, &L[h], "elif"))
        return precision_words(s, L[h].a, L[h].b);
    if (!starts(c, &L[h], "else"))
        return 0;
    for (long k = h - 1; k >= 0 && L[k].indent >= L[h].indent; k--) { /* (its chain's tests) */
        if (L[k].indent > L[h].indent)
            continue;
        if (!starts(c, &L[k], "elif") && !starts(c, &L[k], "if"))
            return 0;
        if (precision_words(s, L[k].a, L[k].b))
            return 1;
        if (starts(c, &L[k], "if"))
            return 0;
    }
    return 0;
}

/* find_kw: the index of " w " (a keyword with blanks around it) in c[a..b) at bracket depth 0,
 * b if none */
static size_t find_kw(const char *c, size_t a, size_t b, const char *w)
{
    size_t n = strlen(w);
    int depth = 0;
    for (size_t i = a; i + n + 2 <= b; i++) {
        depth += c[i] == '(' || c[i] == '[' || c[i] == '{';
        depth -= c[i] == ')' || c[i] == ']' || c[i] == '}';
        if (!depth && c[i] == ' ' && !memcmp(c + i + 1, w, n) && c[i + 1 + n] == ' ')
            return i;
    }
    return b;
}

/* resolve: what the variable name (n bytes) holds by its assignments in the script: 1 16-bit
 * dtypes only, 2 float32 too with each 16-bit one under a test of the precision, 0 not known */
static int resolve(const char *s, const char *c, const lline *L, long nl, const char *name,
                   size_t n)
{
    int fp32 = 0, cond16 = 0, uncond16 = 0;
    for (long i = 0; i < nl; i++) {
        size_t a = L[i].a, b = L[i].b, j = a + n;
        if (b - a <= n || memcmp(c + a, name, n) || name_byte(c[j]))
            continue;
        while (j < b && c[j] == ' ')
            j++;
        if (j + 1 >= b || c[j] != '=' || c[j + 1] == '=')
            continue; /* (not an assignment of it: a call, a comparison) */
        size_t r = j + 1, q = find_kw(c, r, b, "if"), e = q < b ? find_kw(c, q, b, "else") : b;
        if (q < b && e < b) { /* X if TEST else Y */
            int x = one_dtype(c, r, q), y = one_dtype(c, e + 5, b);
            if (!x || !y)
                return 0;
            if (x == 1 && y == 1)
                uncond16++;
            else if (x != y && precision_words(s, q, e))
                cond16++, fp32++;
            else if (x == 2 && y == 2)
                fp32++;
            else
                return 0;
            continue;
        }
        int d = one_dtype(c, r, b);
        if (!d)
            return 0; /* (a model's dtype, a lookup: not known here) */
        if (d == 2)
            fp32++;
        else if (under_precision(s, c, L, i))
            cond16++;
        else
            uncond16++;
    }
    if (!cond16 && !uncond16)
        return 0;
    if (!fp32)
        return 1;
    return uncond16 ? 0 : 2;
}

/* to_call: what the arguments c[a..b) of a .to( call say: 1 16-bit, 2 16-bit where the run's
 * precision is, 0 nothing */
static int to_call(const char *s, const char *c, const lline *L, long nl, size_t a, size_t b)
{
    int k = dtypes_in(c, a, b);
    if (k)
        return k == 1 ? 1 : 0;
    int best = 0;
    for (size_t p = a; p < b;) { /* each argument at depth 0 */
        size_t q = p;
        for (int depth = 0; q < b && (depth || c[q] != ','); q++)
            depth += (c[q] == '(' || c[q] == '[' || c[q] == '{') -
                     (c[q] == ')' || c[q] == ']' || c[q] == '}');
        size_t x = p, y = q;
        trim(c, &x, &y);
        if (y - x > 5 && !memcmp(c + x, "dtype", 5)) { /* dtype=NAME */
            size_t e = x + 5;
            while (e < y && c[e] == ' ')
                e++;
            x = e < y && c[e] == '=' ? e + 1 : y;
            trim(c, &x, &y);
        }
        int bare = x < y && !(c[x] >= '0' && c[x] <= '9');
        for (size_t i = x; bare && i < y; i++)
            bare = name_byte(c[i]);
        int v = bare ? resolve(s, c, L, nl, c + x, y - x) : 0;
        if (v == 1 || (v == 2 && !best))
            best = v;
        p = q + 1;
    }
    return best;
}

/* line_cast: logical line l's code casts to 16 bits: 1, 2 as castsrc_lines' lit and var, else 0 */
static int line_cast(const char *s, const char *c, const lline *L, long nl, const lline *l)
{
    int best = 0;
    for (size_t i = l->a; i < l->b; i++) {
        if (c[i] != '.' || i == l->a)
            continue;
        if ((l->b - i > 6 && !memcmp(c + i, ".half(", 6)) ||
            (l->b - i > 10 && !memcmp(c + i, ".bfloat16(", 10)))
            return 1;
        if (l->b - i <= 4 || memcmp(c + i, ".to(", 4))
            continue;
        size_t open = i + 3, close = open;
        for (int depth = 0; close < l->b; close++) {
            depth += (c[close] == '(') - (c[close] == ')');
            if (!depth)
                break;
        }
        int v = to_call(s, c, L, nl, open + 1, close < l->b ? close : l->b);
        if (v == 1)
            return 1;
        if (v)
            best = v;
    }
    return best;
}

size_t castsrc_lines(const char *src, size_t len, uint8_t *out, size_t n, uint8_t lit, uint8_t var)
{
    char *c = pysrc_clean(src, len);
    lline *L = NULL;
    long nl = c ? pysrc_lines(c, len, &L) : -1;
    size_t set = 0;
    for (long i = 0; i < nl; i++) {
        int v = line_cast(src, c, L, nl, &L[i]);
        for (uint32_t ln = L[i].first; v && ln <= L[i].last && ln < n; ln++)
            out[ln] |= v == 1 ? lit : var, set++;
    }
    free(L);
    free(c);
    return set;
}
