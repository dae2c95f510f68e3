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
    const char *why; /* PYV_ERR: why it was refused (a static string), or NULL */
} pyval;

/* PYEXPR_MAX_DEPTH: nesting (parentheses, unary signs, powers) beyond this is refused. */
#define PYEXPR_MAX_DEPTH 100

/* A name's value: 0 with *out filled, or -1 when the name is unknown. */
typedef int (*pyexpr_lookup)(void *ctx, const char *name, pyval *out);

/* pyexpr_eval: the whole of text as one expression (surrounding blanks allowed); names go
 * through lookup (NULL: no names, like ast.literal_eval). Integers follow Python's semantics
 * within 64 bits (floor division and modulo, exact powers); what Python would compute but
 * 64 bits cannot hold, a division by zero, a float that is not finite and nesting deeper than
 * PYEXPR_MAX_DEPTH give k = PYV_ERR with why set; anything else that is not such an
 * expression (a call, an attribute, an unknown name, too long) gives PYV_ERR, why NULL. */
pyval pyexpr_eval(const char *text, pyexpr_lookup lookup, void *ctx);
/* pyexpr_numeric: 1 for PYV_INT, PYV_FLOAT, PYV_BOOL. pyexpr_num: the value as a double. */
int pyexpr_numeric(pyval v);
double pyexpr_num(pyval v);

#endif
