/* pyexpr.h — evaluates the Python expressions found in nanoGPT config files and --key=value
 * arguments (`5 * 8`, `1024*12//16`, `'gpt2' + '-small'`, `True`, earlier keys by name).
 * Used by config.c; nothing here knows the configuration keys. */
#ifndef VT_ANALYZER_PYEXPR_H
#define VT_ANALYZER_PYEXPR_H

typedef enum pyval_kind { PYV_ERR, PYV_INT, PYV_FLOAT, PYV_BOOL, PYV_STR, PYV_NONE } pyval_kind;

/* A value: i for PYV_INT / PYV_BOOL (0/1), f for PYV_FLOAT, s for PYV_STR (at most 63 bytes). */
typedef struct pyval {
    pyval_kind k;
    long long i;
    double f;
    char s[64];
} pyval;

/* A name's value: 0 with *out filled, or -1 when the name is unknown. */
typedef int (*pyexpr_lookup)(void *ctx, const char *name, pyval *out);

/* pyexpr_eval: the whole of text as one expression (surrounding blanks allowed); names go
 * through lookup (NULL: no names, like ast.literal_eval). Returns k = PYV_ERR when text is not
 * such an expression (a call, an attribute, an unknown name, a division by zero, too long). */
pyval pyexpr_eval(const char *text, pyexpr_lookup lookup, void *ctx);
/* pyexpr_numeric: 1 for PYV_INT, PYV_FLOAT, PYV_BOOL. pyexpr_num: the value as a double. */
int pyexpr_numeric(pyval v);
double pyexpr_num(pyval v);

#endif
