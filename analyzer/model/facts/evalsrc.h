/* evalsrc.h — an evaluation written inline in a training loop, read from the recorded script's
 * source: the lines of a `with torch.no_grad():` (or inference_mode(), set_grad_enabled(False))
 * block that a `.eval()` call opens, inside a function that trains. A stack whose Python frames
 * pass through such a line is an evaluation's (phases' eval), as one under a function named
 * evaluate is. */
#ifndef VT_ANALYZER_EVALSRC_H
#define VT_ANALYZER_EVALSRC_H

#include <stddef.h>
#include <stdint.h>

#include "tables.h"

/* evalsrc_lines: the physical lines (1-based) of src (len bytes) inside such blocks, set in
 * out[line] for line < n (out zeroed first): 1, or 2 where the block's outputs feed the step
 * (the last rule below broken alone: a rollout or generation pass under model.eval() and
 * no_grad whose outputs a later backward reads, a pass of its own batch but no evaluation); the
 * count of lines set. A block is taken when
 *  - its `with` names torch.no_grad( / inference_mode( / set_grad_enabled(False),
 *  - R.eval() is called in its body or before it in the block around it (model.eval()),
 *  - R.train( is called in the function around it (the model goes back to training: a frozen
 *    teacher's no_grad forward, never trained, is the step's, not an evaluation),
 *  - no .backward( is in its body nor after it in the block around it (the teacher's forward,
 *    the step's backward after it, is the step's),
 *  - the function around it calls .backward( elsewhere (it trains: an evaluation-only script's
 *    forwards stay the forward),
 *  - no name it binds is read, directly or through names bound from it, by a later line of the
 *    function that calls .backward( (evalsrc_flow.h: a rollout or generation pass whose outputs
 *    the step trains on is the step's).
 * And the body of a function decorated @torch.no_grad() / @torch.inference_mode() that is named
 * like such a pass (sample, generate, evaluate, predict, ...), has no .backward( and is called
 * with none after the call in the caller's function, in a script that calls .backward( (a
 * sampling pass of a diffusion model during training). */
size_t evalsrc_lines(const char *src, size_t len, uint8_t *out, size_t n);

/* What one trace's recorded scripts say, built the first time a stack asks (the FILE records come
 * before the events) and again while their count grows. Zero it to start; evalsrc_free. */
typedef struct evalsrc {
    size_t nfiles_seen;
    struct evalsrc_file {
        const char *path, *name; /* the FILE record's (the tables' strings) */
        uint8_t *line;           /* line[l]: l lies in an inline evaluation */
        size_t nlines;
        size_t fi; /* its index among the tables' files (its contents) */
    } f[4];
    int n;
    uint8_t *code; /* by code id: 0 not looked at, 1 + the file's index, 255 none of them */
    size_t ncode;
} evalsrc;

/* evalsrc_stack: 1 when a Python frame of stack (its frames as recorded: native, then Python)
 * lies on a line of an inline evaluation of a recorded script, 2 on one of a no-grad pass whose
 * outputs the step uses (evalsrc_lines' 2), else 0. */
int evalsrc_stack(evalsrc *e, tables *t, const tables_stack *st);
/* evalsrc_frames: the same for a resolved stack (frames with their lines). */
int evalsrc_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n);
void evalsrc_free(evalsrc *e);
/* evalsrc_optim_ctor: 1 when a Python frame of stack lies on a line of a recorded script that
 * constructs an optimizer (NAME( of a class an optimizer's name names: phases_optim_name), the
 * frame it called is a bare __init__ (no class named: Python 3.10's frames) and every frame inside
 * it is a recorded script's (a module's construction passes torch's files): what a program's own
 * optimizer's constructor made, else 0; evalsrc_optim_ctor_frames: the same of resolved frames. */
int evalsrc_optim_ctor(evalsrc *e, tables *t, const tables_stack *st);
int evalsrc_optim_ctor_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n);
/* evalsrc_data_at: 1 when Python frame raw lies in a recorded script on a line where storage
 * filled with a constant is the program's data kept on the device, not a weight (datasrc.h: a
 * plain class's, or a function's that names no weight), else 0. */
int evalsrc_data_at(evalsrc *e, tables *t, uint64_t raw);
/* evalsrc_data_frames: the same of the Python frame numbered py (0 the innermost; -1: none) of a
 * resolved stack. */
int evalsrc_data_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n, int py);
/* evalsrc_opt_at / evalsrc_opt_frames: the same of a line in the body of the program's own
 * optimizer class (optsrc.h: what its methods make and keep is its state) */
int evalsrc_opt_at(evalsrc *e, tables *t, uint64_t raw);
int evalsrc_opt_frames(evalsrc *e, const tables *t, const tables_frame *f, size_t n, int py);
/* evalsrc_data_made: 1 when stack stack_id made such data (stack_facts.data: storage filled by a
 * call of torch's from such a line, no copy), else 0. */
int evalsrc_data_made(evalsrc *e, tables *t, uint32_t stack_id);
/* evalsrc_data_reaching: of the data stack stack_id made, the names whose values reach it in the
 * recorded script (datasrc_reaching: those its line reads, and what the frame beyond passes to
 * that line's function as a parameter the line reads), each between spaces into out (n bytes);
 * their count, 0 when none is known (out ""). */
int evalsrc_data_reaching(evalsrc *e, tables *t, uint32_t stack_id, char *out, size_t n);

/* evalsrc_pass_flag: the batch flag of a no-grad pass whose outputs the step uses (evalsrc_lines'
 * 2): the first `--KEY VALUE` / `--KEY=VALUE` of argv (argc of them) whose key (dashes after the
 * first two read as '_') holds "batch" (not "batches"), with a positive whole value, and is read
 * as a name (`args.KEY`, `KEY`, outside a comment) on a line of such a pass in a recorded script
 * (--rollout_batch_size, which a PPO loop's rollout reads there: the script ties that flag to
 * that pass); "--KEY VALUE" into flag, its value returned; 0 when none. */
uint64_t evalsrc_pass_flag(evalsrc *e, tables *t, int argc, const char *const *argv, char *flag,
                           size_t len);
/* evalsrc_cast16: what made the tensor of stack stack_id, as the innermost of its Python frames
 * that lies in a recorded script says: 1 a line that casts to 16 bits by name (castsrc.h: .half(),
 * .to(dtype=torch.float16)), 2 by a variable that holds 16 bits where the run's precision does
 * (castsrc_lines' var: diffusers' weight_dtype), 0 neither (or no such frame); where:
 * "train.py:386" (n bytes) when not 0. */
int evalsrc_cast16(evalsrc *e, tables *t, uint32_t stack_id, char *where, size_t n);

#endif
