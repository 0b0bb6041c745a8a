/*
** text.h -- text that is safe to show on a terminal.
**
** Error messages and a script's output can carry bytes that a terminal acts
** on instead of showing: escape sequences that clear the screen, retitle the
** window or move the cursor over earlier output. Everything tielab shows on
** a screen from a source it does not control (file names and metadata in
** error messages, what a Lua script prints) passes through here first.
*/
#ifndef TIELAB_BASE_TEXT_H
#define TIELAB_BASE_TEXT_H

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

/* Append 'item', the i-th of 'n', to the list in 'buf' (room for 'cap'
** bytes, NUL-terminated; empty when i is 0): after ", ", or 'last' before
** the last item (" and ", " or ", or ", " for a plain list). A list too
** long for 'buf' is cut, never overrun. */
void text_list_add(char *buf, size_t cap, size_t i, size_t n, const char *last, const char *item);

/* Valid UTF-8 out of bytes that come in pieces (the tokens of a byte-level
** BPE, which may end inside a character): each piece is appended to 'out'
** whole characters at a time, an incomplete character at its end held back
** until the next piece completes it. Each maximal ill-formed subsequence
** becomes one U+FFFD (as Unicode's "substitution of maximal subparts"), and
** so does a character still incomplete at text_utf8_end. The text is cut
** between characters when 'out' is full, and always NUL-terminated. */
typedef struct TextUtf8 {
  char *out;
  size_t cap, len;   /* room for cap bytes, the NUL included; len written */
  int full;          /* something was left out for want of room */
  unsigned char held[4];
  size_t n_held;
} TextUtf8;

void text_utf8_begin(TextUtf8 *u, char *out, size_t cap);
void text_utf8_put(TextUtf8 *u, const char *piece, size_t n);
size_t text_utf8_end(TextUtf8 *u);   /* returns the length written */

#endif
