/* namewords.h — the words of a name (a flag's, a function's: split at the separators a caller
 * gives, '_' and '-' in a flag) and the one table of words that name a pass beside the training
 * (an evaluation, a sampling, a generation, a rollout, a test, a prediction, an inference) or the
 * training itself. Every reader of such names (a flag's batch of a side pass, a script's no-grad
 * passes, a frame's evaluation function, a token cap of a generation) asks this table for the
 * kinds it needs, so that no list of words drifts from another. */
#ifndef VT_ANALYZER_NAMEWORDS_H
#define VT_ANALYZER_NAMEWORDS_H

#include <stddef.h>

/* the kinds of pass a word names; NW_ABBR marks a short form that a flag's name uses for the
 * pass (--val_batch_size, --gen_batch_size) but a function's name uses for other things too
 * (get_val, is_valid, gen_data): only callers of flags take it */
enum {
    NW_EVAL = 1u << 0,    /* an evaluation (validation) */
    NW_TEST = 1u << 1,    /* a test-set evaluation */
    NW_SAMPLE = 1u << 2,  /* sampling (a diffusion model's, a language model's) */
    NW_GEN = 1u << 3,     /* generation */
    NW_ROLLOUT = 1u << 4, /* a reinforcement-learning rollout */
    NW_PREDICT = 1u << 5, /* prediction */
    NW_INFER = 1u << 6,   /* inference */
    NW_TRAIN = 1u << 7,   /* the training itself */
    NW_ABBR = 1u << 15,   /* a short form (val, valid, gen) */
};

/* VT_PASS_WORDS: each word and the kind it names (whole words only: "interval" is no "val") */
#define VT_PASS_WORDS(X)                                                                           \
    X("eval", NW_EVAL)                                                                             \
    X("evaluate", NW_EVAL)                                                                         \
    X("evaluation", NW_EVAL)                                                                       \
    X("evaluating", NW_EVAL)                                                                       \
    X("validate", NW_EVAL)                                                                         \
    X("validation", NW_EVAL)                                                                       \
    X("validating", NW_EVAL)                                                                       \
    X("val", NW_EVAL | NW_ABBR)                                                                    \
    X("valid", NW_EVAL | NW_ABBR)                                                                  \
    X("test", NW_TEST)                                                                             \
    X("sample", NW_SAMPLE)                                                                         \
    X("samples", NW_SAMPLE)                                                                        \
    X("sampling", NW_SAMPLE)                                                                       \
    X("generate", NW_GEN)                                                                          \
    X("generation", NW_GEN)                                                                        \
    X("gen", NW_GEN | NW_ABBR)                                                                     \
    X("rollout", NW_ROLLOUT)                                                                       \
    X("rollouts", NW_ROLLOUT)                                                                      \
    X("predict", NW_PREDICT)                                                                       \
    X("infer", NW_INFER)                                                                           \
    X("inference", NW_INFER)                                                                       \
    X("train", NW_TRAIN)                                                                           \
    X("training", NW_TRAIN)

/* namewords_next: the word of name[*at..len) that starts at *at after any separators (a char of
 * seps), its length in *n, *at moved past it; 0 when no word is left */
int namewords_next(const char *name, size_t len, const char *seps, size_t *at, size_t *n);

/* namewords_has: w is one of name's words (prefix 1: a word starts with w and is longer) */
int namewords_has(const char *name, size_t len, const char *seps, const char *w, int prefix);

/* namewords_kinds: the kinds (NW_*) the words of name[0..len) name; a short form counts only
 * where abbr is 1 (a flag's name) */
unsigned namewords_kinds(const char *name, size_t len, const char *seps, int abbr);

#endif
