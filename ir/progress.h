/*
 * A progress line on stderr for commands that can take a while (a compile
 * of a large model, tvmcc tune): shown only when stderr is a terminal and
 * only once the command has run for PROGRESS_AFTER_S seconds, so short
 * compiles and every pipe or log file see nothing. The line is rewritten
 * in place ("\r", then erase to the end of the line) and erased by
 * progress_clear, which every message printed meanwhile calls first (the
 * diagnostics do), so it never interleaves with other output.
 */
#ifndef TVMCC_PROGRESS_H
#define TVMCC_PROGRESS_H

#define PROGRESS_AFTER_S 2.0

/* Starts timing the command `what` ("tvmcc", "tvmcc tune"); progress_note
 * prints nothing before this is called. */
void progress_start(const char *what);
/* The command is at `stage`, done of total steps (total 0: no count). */
void progress_note(const char *stage, long done, long total);
/* Erases the progress line if one is shown. */
void progress_clear(void);
/* Nested work that reports progress of its own (tvmcc tune emitting a
 * benchmark program) is muted: progress_note is ignored while on. */
void progress_mute(int on);
/* progress_clear, and no more progress lines until progress_start. */
void progress_stop(void);

#endif
