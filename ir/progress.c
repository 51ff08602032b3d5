/*
 * The progress line (progress.h). One per process: the state is static.
 * Updates are throttled to ten a second so that a stage with many small
 * steps (one per constant, per kernel) costs nothing measurable.
 */
#define _POSIX_C_SOURCE 200809L
#include "progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct {
    int on;                 /* started, and stderr is a terminal */
    int shown;              /* a line is on the terminal now */
    int muted;              /* progress_mute(1) is in effect */
    const char *what;
    double t0, last;        /* start, last update (seconds) */
    double after;           /* seconds before the first line */
    const char *last_stage;
} pg;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void progress_start(const char *what)
{
    const char *env;
    memset(&pg, 0, sizeof pg);
    pg.on = isatty(2);
    pg.what = what;
    pg.t0 = now_s();
    pg.after = PROGRESS_AFTER_S;
    /* a test hook: TVMCC_PROGRESS_AFTER=S shows the line after S seconds,
     * so that a test need not depend on how fast this machine is */
    if ((env = getenv("TVMCC_PROGRESS_AFTER")) && *env)
        pg.after = atof(env);
}

void progress_note(const char *stage, long done, long total)
{
    double t;
    if (!pg.on || pg.muted)
        return;
    t = now_s();
    if (t - pg.t0 < pg.after)
        return;
    if (pg.shown && t - pg.last < 0.1 && pg.last_stage == stage && done != total)
        return;
    pg.last = t;
    pg.last_stage = stage;
    if (total > 0)
        fprintf(stderr, "\r\033[K%s: %s %ld/%ld (%.0f s)", pg.what, stage, done, total, t - pg.t0);
    else
        fprintf(stderr, "\r\033[K%s: %s (%.0f s)", pg.what, stage, t - pg.t0);
    fflush(stderr);
    pg.shown = 1;
}

void progress_clear(void)
{
    if (!pg.shown)
        return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pg.shown = 0;
}

void progress_mute(int on)
{
    pg.muted = on;
}

void progress_stop(void)
{
    progress_clear();
    pg.on = 0;
}
