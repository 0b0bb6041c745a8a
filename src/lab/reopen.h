/*
** reopen.h -- 'tielab --resume': the runs of the newest autosave folder
** (autosave.h) brought back into a lab, and what did not come back, said.
** One bad file never costs the rest; the note it writes:
** docs/architecture.md, 'Resuming'.
*/
#ifndef TIELAB_REOPEN_H
#define TIELAB_REOPEN_H

#include <stdio.h>

#include "lab/lab.h"

typedef struct Reopened {
  char *note;   /* malloc'd; what falls short, then "resumed ... from DIR" */
  int short_;   /* something the save held did not come back whole */
} Reopened;

/* Every run of the newest autosave folder into 'lab', once its writer is
** done (waiting for it is said on 'say', as autosave_latest says). What
** falls short is said on 'say' too. -1 with 'err' when there is no folder
** or nothing in it came back ('err' then says what fell short). */
int reopen_latest(Lab *lab, FILE *say, Reopened *out, Err *err);
void reopen_free(Reopened *r);

#endif
