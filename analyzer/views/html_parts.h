/* html_parts.h — what the files of the HTML page share (not for other views): the palette and
 * escaping helpers (html_common.c), and each file's part of the page: html.c (the page, its
 * header, timeline data, breakdown and sites), html_flame.c (the icicle), html_model.c (summary,
 * OOM, advice, formula), html_config.c (configuration, what was trained, by module). */
#ifndef VT_ANALYZER_HTML_PARTS_H
#define VT_ANALYZER_HTML_PARTS_H

#include <stdint.h>
#include <stdio.h>

#include "html.h"

/* html_cat_color: the colour of category c (categories.h order; an Okabe–Ito-based
 * colour-blind-safe set, the allocator cache drawn hatched). */
const char *html_cat_color(int c);

/* html_esc: s escaped for HTML (escape_html) into out. */
void html_esc(FILE *out, const char *s);
/* html_bytes: "11.99 GiB" / "512.0 MiB", as the text report writes bytes. */
const char *html_bytes(uint64_t b, char *buf, size_t len);
/* html_swatch: a small square of category c's colour. */
void html_swatch(FILE *out, int c);

/* html_too_short: why r is too short to diagnose (no allocation of PyTorch's recorded; cut or
 * ended early), into buf, or NULL when it has allocations to diagnose. */
const char *html_too_short(const replay_result *r, char *buf, size_t len);

/* html_flame_data: ,"flame":{nodes, names} of the bytes live at r's peak (html_flame.c). */
void html_flame_data(FILE *out, replay_result *r);

/* html_summary: the diagnosis at a glance (peak, card, OOM cause, the recommendation), with
 * links to the sections below (html_model.c). */
void html_summary(FILE *out, const report_ctx *c);
/* the diagnosis sections, each a <section> with its id: the OOM diagnosis (#oom, only for a
 * run that ran out), the advice (#advice), the formula comparison or why none applies
 * (#formula) — html_model.c; the configuration (#config), what was trained (#trained), where
 * the activations come from by module (#modules) — html_config.c. */
void html_oom(FILE *out, const report_ctx *c);
void html_advice(FILE *out, const report_ctx *c);
void html_config(FILE *out, const report_ctx *c);
void html_trained(FILE *out, const report_ctx *c);
void html_formula(FILE *out, const report_ctx *c);
void html_modules(FILE *out, const report_ctx *c);
/* html_growth: long runs (#growth): a bounded trace's keeping, the live bytes per step, what
 * grows and when it reaches the card (html_growth.c); nothing for a run without steps. */
void html_growth(FILE *out, const report_ctx *c);

#endif
