/* cfgsrc.h — configuration sources beyond the traced command line (cfgsrc.c): the config
 * files a trace recorded (FILE records), a Hugging Face config.json among them, the values the
 * trace's own tensors say (infer.h), and `report --n-layer ...` options. The command line
 * itself is config.c / cmdline.c. */
#ifndef VT_ANALYZER_CFGSRC_H
#define VT_ANALYZER_CFGSRC_H

#include "config.h"
#include "infer.h"
#include "tables.h"

/* cfgsrc_files: the FILE records of t as config_files (at most cap into buf, borrowed from t);
 * recorded = 1 when the trace's format minor is >= 2 (its writer records files). */
void cfgsrc_files(const tables *t, int minor, config_recfile *buf, int cap, config_files *out);

/* cfgsrc_apply_hf: the recorded config.json of a directory argument (a Hugging Face model
 * directory): n_layer / num_hidden_layers, n_embd / hidden_size, n_head / num_attention_heads,
 * vocab_size set keys that no argument set (CONFIG_SRC_FILE, where "DIR/config.json:
 * hidden_size"); n_positions / max_position_embeddings only a block_size still at its
 * default (the trace's T replaces it later: it is the model's maximum, not the run's). A file
 * that is not a JSON object is a note. */
void cfgsrc_apply_hf(nano_config *c, const config_files *f);

/* cfgsrc_apply_inferred: values the trace's tensors say (ir may be NULL) for keys that no
 * argument or file set: for a non-nanoGPT program every known value replaces the assumed one
 * (CONFIG_SRC_TRACE, where = how it was inferred); for nanoGPT a default stays unless the
 * trace says otherwise (then the trace's value, and `where` says the default differed). A
 * block_size taken from config.json's maximum context is replaced by the trace's T. */
void cfgsrc_apply_inferred(nano_config *c, const infer_result *ir);

/* cfgsrc_versions: PyTorch's and its CUDA's versions from the recorded torch/version.py
 * (`__version__ = '2.11.0+cu130'`, `cuda: Optional[str] = '13.0'`) into c; "" when unknown. */
void cfgsrc_versions(nano_config *c, const config_files *f);

/* X(option, key) — `vramtrace report` options that set one key: each becomes the override
 * "key=value" (model_opts.overrides), CONFIG_SRC_FLAG, "given on vramtrace's command line". */
#define VT_CFGSRC_OPTIONS(X)                                                                       \
    X("n-layer", CFG_n_layer)                                                                      \
    X("n-embd", CFG_n_embd)                                                                        \
    X("n-head", CFG_n_head)                                                                        \
    X("batch-size", CFG_batch_size)                                                                \
    X("block-size", CFG_block_size)                                                                \
    X("vocab-size", CFG_vocab_size)                                                                \
    X("grad-accum", CFG_gradient_accumulation_steps)

/* cfgsrc_option_key: the key of a report option name ("n-layer", no dashes before), or -1. */
int cfgsrc_option_key(const char *name);

#endif
