/*
** progress.h -- how far long work has come, shown on stderr: the headless
** scripts (lab.progress) and the built-in loops. The line on a terminal and
** the plain lines elsewhere: docs/architecture.md, 'The progress line'.
*/
#ifndef TIELAB_PROGRESS_H
#define TIELAB_PROGRESS_H

#include <stddef.h>
#include <stdio.h>

typedef struct Progress Progress;

/* A report on 'f' (stderr); NULL when out of memory (the work goes on
** without one: every function below takes NULL). */
Progress *progress_new(FILE *f, int plain);
/* The line cleared, the timer stopped, and the report freed. */
void progress_free(Progress *p);

/* Start counting from now towards 'total' units (<= 0: unknown, then the
** line has no count, percent nor ETA), and draw the line at once. */
void progress_start(Progress *p, long total);
/* The work has reached 'done' units; 'label' (NULL: keep the last) says
** what it does. */
void progress_set(Progress *p, long done, const char *label);
/* Text shown after the label until the next note (NULL: none): a part of
** the work that has its own count (a lens fit). */
void progress_note(Progress *p, const char *note);
/* The end of the work: the line cleared (a last plain line when not on a
** terminal); a later progress_start begins again. */
void progress_finish(Progress *p);
int progress_active(const Progress *p);

/* Write 's' to 'to' with the line out of the way (cleared, redrawn later
** once the output ends a line): every other output of the program while
** a report lives goes through here. */
void progress_write(Progress *p, FILE *to, const char *s, size_t n);
void progress_printf(Progress *p, FILE *to, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Columns of the terminal 'fd' is on, else $COLUMNS, else 80. */
int progress_columns(int fd);

#endif
