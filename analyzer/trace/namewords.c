/* namewords.c — a name's words and the pass words among them (namewords.h). */
#include "namewords.h"

#include <string.h>

static const struct {
    const char *w;
    unsigned kind;
} words[] = {
#define X(w, k) {w, k},
    VT_PASS_WORDS(X)
#undef X
};

int namewords_next(const char *name, size_t len, const char *seps, size_t *at, size_t *n)
{
    size_t i = *at;
    while (i < len && name[i] && strchr(seps, name[i]))
        i++;
    size_t k = 0;
    while (i + k < len && name[i + k] && !strchr(seps, name[i + k]))
        k++;
    *at = i + k, *n = k;
    return k > 0;
}

int namewords_has(const char *name, size_t len, const char *seps, const char *w, int prefix)
{
    size_t wl = strlen(w), at = 0, n;
    while (namewords_next(name, len, seps, &at, &n)) {
        const char *p = name + at - n;
        if (n == wl ? !strncmp(p, w, wl) : prefix && n > wl && !strncmp(p, w, wl))
            return 1;
    }
    return 0;
}

unsigned namewords_kinds(const char *name, size_t len, const char *seps, int abbr)
{
    unsigned kinds = 0;
    size_t at = 0, n;
    while (name && namewords_next(name, len, seps, &at, &n))
        for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
            if (n == strlen(words[i].w) && !strncmp(name + at - n, words[i].w, n) &&
                (abbr || !(words[i].kind & NW_ABBR)))
                kinds |= words[i].kind & ~(unsigned)NW_ABBR;
    return kinds;
}
