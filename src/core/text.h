/*
** text.h -- text that is safe to show on a terminal.
**
** Error messages and a script's output can carry bytes that a terminal acts
** on instead of showing: escape sequences that clear the screen, retitle the
** window or move the cursor over earlier output. Everything tielab shows on
** a screen from a source it does not control (file names and metadata in
** error messages, what a Lua script prints) passes through here first.
*/
#ifndef TIELAB_TEXT_H
#define TIELAB_TEXT_H

#include <stddef.h>

/* Nonzero when 'n' bytes of 's' hold a control character (C0 but tab,
** newline and carriage return, DEL, C1) or a byte that is not part of valid UTF-8. */
int text_needs_escape(const char *s, size_t n);

/* Copy 'n' bytes of 's' into 'out' (room for 'cap' bytes, always
** NUL-terminated when cap > 0), showing C0 controls as ^X (ESC as ^[), DEL
** as ^?, and C1 controls and invalid bytes as \xNN. Tab, newline and
** carriage return pass.
** Returns the bytes written, without the NUL; the copy is cut, never in the
** middle of an escape, when 'out' is too small (4n+1 bytes always suffice). */
size_t text_escape(const char *s, size_t n, char *out, size_t cap);

/* Bytes at the end of 's' that begin a UTF-8 character not yet complete
** (0 to 3): text written piece by piece is escaped whole characters at a
** time. */
size_t text_incomplete_tail(const char *s, size_t n);

#endif
