/* model_factored.c — Adafactor's state estimated from the weights' sizes and the script's call
 * (model_factored.h). A T5 with torch.optim.Adafactor out of memory before its first step had
 * been counted 1 B per parameter, 212.6 MiB, where its step keeps 1.85 MiB (factored second
 * moments, no first moment). */
#include "model_factored.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pysrc.h"

/* ident: c is an identifier's character */
static int ident(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
}

/* beta1_set: the call whose arguments begin at c[i] (after its '(') sets beta1= to a value other
 * than None */
static int beta1_set(const char *c, size_t len, size_t i)
{
    int depth = 0;
    for (; i < len && depth >= 0; i++) {
        if (c[i] == '(' || c[i] == '[' || c[i] == '{')
            depth++;
        else if (c[i] == ')' || c[i] == ']' || c[i] == '}')
            depth--;
        else if (depth == 0 && i + 5 < len && !memcmp(c + i, "beta1", 5) && !ident(c[i - 1]) &&
                 !ident(c[i + 5])) {
            size_t j = i + 5;
            while (j < len && (c[j] == ' ' || c[j] == '\t' || c[j] == '\n'))
                j++;
            if (j >= len || c[j] != '=' || (j + 1 < len && c[j + 1] == '='))
                continue;
            for (j++; j < len && (c[j] == ' ' || c[j] == '\t' || c[j] == '\n');)
                j++;
            return !(j + 4 <= len && !memcmp(c + j, "None", 4) &&
                     (j + 4 == len || !ident(c[j + 4])));
        }
    }
    return 0;
}

int model_adafactor_beta1(const config_files *fs, char *where, size_t cap)
{
    for (int f = 0; fs && f < fs->n; f++) {
        const config_recfile *cf = &fs->f[f];
        if (cf->kind != VT_FILE_ARG || cf->flags || !cf->data)
            continue;
        char *c = pysrc_clean(cf->data, cf->len); /* (a comment's or a string's is no call) */
        if (!c)
            return 0;
        for (size_t i = 0; i + 10 <= cf->len; i++)
            if (!memcmp(c + i, "Adafactor(", 10) && (i == 0 || !ident(c[i - 1])) &&
                (i < 6 || memcmp(c + i - 6, "class ", 6)) && beta1_set(c, cf->len, i + 10)) {
                snprintf(where, cap, "%.60s:%zu", pysrc_name(cf->name ? cf->name : "the script"),
                         pysrc_line_at(c, i));
                free(c);
                return 1;
            }
        free(c);
    }
    return 0;
}

double model_factored_bpp(const infer_result *ir, int beta1)
{
    if (!ir->factored_of)
        return 0;
    /* fp32 rows and columns (transformers' keeps them fp32; torch's in the gradients' dtype, at
     * most 4 B), and a first moment of each weight's elements where beta1 is set */
    double bytes = 4.0 * (double)ir->factored_elems + (beta1 ? 4.0 * (double)ir->factored_of : 0);
    return bytes / (double)ir->factored_of;
}

void model_factored_state(model_result *m, const run_facts *f)
{
    const run_recognition *r = &m->rec;
    const infer_result *ir = f->inferred;
    gpt_shape *s = &m->shape;
    if (!m->opt_bound || r->optim != OPT_FACTORED || optim_factored_kernels(r) || !ir ||
        !ir->factored_elems || !ir->factored_of || m->lora_assumed ||
        (s->train_frac > 0 && s->train_frac < 1))
        return;
    char at[80] = "";
    int beta1 = model_adafactor_beta1(m->cfg.files, at, sizeof at);
    s->opt_bpp = model_factored_bpp(ir, beta1);
    m->opt_bound = 0;
    snprintf(m->opt_est, sizeof m->opt_est,
             OPTIM_NOTE_PREFIX ": Adafactor's state is estimated from the weights' sizes: a row "
                               "and a column of each of the %u matrices of d × k (d = %lld, the "
                               "width), the %u other tensors whole, %llu fp32 elements (%.2f "
                               "MiB)%s%s%s",
             (unsigned)ir->factored_mats, (long long)ir->v[INFER_n_embd].value,
             (unsigned)ir->factored_whole, (unsigned long long)ir->factored_elems,
             4.0 * (double)ir->factored_elems / 1048576.0,
             beta1 ? ", and a first moment of every weight's size (beta1 set at " : "",
             beta1 ? at : "", beta1 ? ")" : "; no first moment (no beta1 set)");
}
