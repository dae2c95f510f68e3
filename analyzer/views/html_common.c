/* html_common.c — what the parts of the HTML page share (html_parts.h): the category palette,
 * escaping and byte formatting, the colour swatch, and whether a trace is too short to diagnose.
 * Calls nothing of the page's other files. */
#include <inttypes.h>
#include <string.h>

#include "cards.h"
#include "escape.h"
#include "html_parts.h"

/* one colour per category (categories.h order): Okabe–Ito's eight hues for the categories
 * that usually hold the most, then colour-blind-safe tints and greys; the allocator cache is
 * hatched (reserved, holding nothing) */
static const char *const cat_colors[] = {
    "#0072B2", /* parameters: blue */
    "#E69F00", /* gradients: orange */
    "#CC79A7", /* optimizer: reddish purple */
    "#009E73", /* activations: bluish green */
    "#56B4E9", /* logits/loss: sky blue */
    "#F0E442", /* attention: yellow */
    "#D55E00", /* autocast copies: vermillion */
    "#882255", /* backward: wine */
    "#999933", /* library workspaces: olive */
    "#9FD8C4", /* temporaries: light bluish green */
    "#F6C97F", /* inputs: light orange */
    "#4D4D4D", /* CUDA context: dark grey */
    "#999999", /* kernel code: grey */
    "#D6D6D6", /* allocator cache: light grey, hatched */
    "#7A5230", /* other / external: brown */
    "#000000", /* unknown: black */
};
_Static_assert(sizeof cat_colors / sizeof *cat_colors == CAT_COUNT, "a colour per category");
const char *html_cat_color(int c)
{
    return c >= 0 && c < CAT_COUNT ? cat_colors[c] : "#bbbbbb";
}

void html_esc(FILE *out, const char *s)
{
    if (s)
        escape_html_fputs(out, s, strlen(s));
}

const char *html_bytes(uint64_t b, char *buf, size_t len)
{
    return card_format_bytes(b, buf, len);
}

void html_swatch(FILE *out, int c)
{
    fprintf(out, "<i class=\"sw c-%s\"></i>", category_key((category)c));
}

const char *html_too_short(const replay_result *r, char *buf, size_t len)
{
    if (r->tensor_mode || r->segment_mode)
        return NULL;
    if (r->status == READER_TRUNCATED)
        snprintf(buf, len,
                 "The trace is cut (%.200s) before PyTorch's first allocation: %" PRIu64
                 " events. It is too short to diagnose or advise: trace the run again and let it "
                 "reach its first training step.",
                 r->status_msg[0] ? r->status_msg : "no trailer", r->n_events);
    else
        snprintf(buf, len,
                 "The trace holds no allocation of PyTorch's (%" PRIu64
                 " events: only contexts, kernel code or other driver memory). It is too short to "
                 "diagnose or advise: trace a run that reaches its first training step.",
                 r->n_events);
    return buf;
}
