/* model_dataflag.c — the flag that sizes the data a program keeps on the device (model_oom.h):
 * a replay buffer of --buffer-size entries is that many times an entry's bytes, so its bytes are
 * a multiple of the flag's value, and the recorded script passes the flag's value to what makes
 * it (run_facts.oom_data_names). Read from the command line, else from the recorded script's
 * integer defaults; nothing is executed. */
#include "model_oom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scriptflags.h"

/* whole: s is a whole decimal integer of 2 or more ("240000"), its value; else 0 */
static long long whole(const char *s, size_t n)
{
    if (!n || n > 18)
        return 0;
    long long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        v = v * 10 + (s[i] - '0');
    }
    return v >= 2 ? v : 0;
}

/* divides: v divides every nonzero b[k], one of them at least */
static int divides(long long v, const uint64_t *b, int nb)
{
    int any = 0;
    for (int k = 0; k < nb; k++) {
        if (!b[k])
            continue;
        if (b[k] % (uint64_t)v)
            return 0;
        any = 1;
    }
    return any;
}

/* reaches: the flag spelled a (n bytes: "--buffer-size"), whose dest is the script's dest= where
 * fl (k of them) gives one, else its name's (argparse's: the dashes after the first two read as
 * '_'), is among the names whose values reach the data (f->oom_data_names: a DQN's
 * DeviceReplayBuffer(args.buffer_size, ...), where any flag whose value divided the data's bytes,
 * --batch-size 32 of a dataset kept whole on the device, had been named as what sized it) */
static int reaches(const run_facts *f, const script_flag *fl, int k, const char *a, size_t n)
{
    char dest[64] = "";
    for (int i = 0; i < k && !dest[0]; i++)
        for (int j = 0; j < fl[i].nnames && !dest[0]; j++)
            if (strlen(fl[i].names[j]) == n && !strncmp(fl[i].names[j], a, n) && fl[i].dest[0])
                snprintf(dest, sizeof dest, "%s", fl[i].dest);
    if (!dest[0]) {
        size_t m = 0;
        for (size_t i = 2; i < n && m + 1 < sizeof dest; i++)
            dest[m++] = a[i] == '-' ? '_' : a[i];
        dest[m] = '\0';
    }
    char w[68];
    snprintf(w, sizeof w, " %s ", dest);
    return dest[0] && strstr(f->oom_data_names, w) != NULL;
}

long long model_data_flag(const nano_config *c, const run_facts *f, const uint64_t *b, int nb,
                          char *name, size_t len, int *from_default)
{
    long long best = 0;
    name[0] = '\0';
    *from_default = 0;
    const config_recfile *rf = config_recorded_script(c, f->argc, f->argv);
    script_flag *fl = rf ? malloc(SCRIPT_FLAGS_MAX * sizeof *fl) : NULL;
    int k = fl ? scriptflags_parse(rf->data, rf->len, fl, SCRIPT_FLAGS_MAX) : 0;
    /* the command line's "--name V" and "--name=V" */
    for (int i = 0; f->argv && i < f->argc; i++) {
        const char *a = f->argv[i];
        if (!a || a[0] != '-' || a[1] != '-')
            continue;
        const char *eq = strchr(a, '=');
        const char *v = eq ? eq + 1 : i + 1 < f->argc ? f->argv[i + 1] : NULL;
        long long x = v ? whole(v, strlen(v)) : 0;
        size_t nl = eq ? (size_t)(eq - a) : strlen(a);
        if (x > best && divides(x, b, nb) && nl < len && reaches(f, fl, k, a, nl)) {
            best = x;
            memcpy(name, a, nl);
            name[nl] = '\0';
        }
    }
    /* the recorded script's integer defaults of flags the command line does not give */
    for (int i = 0; i < k; i++) {
        const char *nm = NULL; /* (its long spelling: "--buffer-size", not "-b") */
        for (int j = 0; j < fl[i].nnames && !nm; j++)
            nm = !strncmp(fl[i].names[j], "--", 2) ? fl[i].names[j] : NULL;
        if (!nm || !fl[i].has_default || fl[i].def < 2 || fl[i].def <= best || strlen(nm) >= len ||
            !divides(fl[i].def, b, nb) || !reaches(f, fl, k, nm, strlen(nm)))
            continue;
        if (scriptflags_given(&fl[i], f->argc, f->argv))
            continue;
        best = fl[i].def;
        snprintf(name, len, "%s", nm);
        *from_default = 1;
    }
    free(fl);
    return best;
}
