/*
** textesc.h -- bytes a model wrote, escaped for display.
**
** A byte-level tokenizer's tokens may end inside a character, and a model
** strings them as it likes: its text can hold control bytes and bytes that
** form no UTF-8 character. Shown as they are, these become U+FFFD or '?'
** on the screen, or act on the terminal. Here each complete character the
** terminal can draw stays itself; every other byte becomes a visible
** escape, "\x80", so a reader sees what the model wrote. Pure text: no
** curses (the locale's LC_CTYPE decides what is printable, as it does for
** curses).
*/
#ifndef TIELAB_UI_TEXTESC_H
#define TIELAB_UI_TEXTESC_H

#include <stddef.h>

/* Bytes an escape takes: "\xNN". */
#define TEXTESC_BYTES 4

/* Room that always holds 'n' bytes escaped, with a 'newline' of up to
** TEXTESC_BYTES bytes, and the NUL. */
#define TEXTESC_CAP(n) ((n) * TEXTESC_BYTES + 1)

/* Escape 'len' bytes of 'in' (which may hold a 0) into 'out', room for
** 'cap' bytes, always NUL-terminated when cap > 0:
**  - a newline becomes 'newline' (a visible mark; NULL: "\n" itself);
**  - a complete UTF-8 character stays itself when 'utf8' (the terminal
**    draws UTF-8) and it is printable, else each of its bytes is escaped
**    (U+FFFD too: on screen it would read as a byte lost on the way);
**  - printable ASCII stays itself;
**  - everything else is escaped a byte at a time: C0 controls, DEL, C1
**    controls (U+0080..U+009F), a lone continuation byte, the start of a
**    sequence cut short, an overlong form, a surrogate, a code point above
**    U+10FFFF.
** The output is cut when full, never inside an escape or a character.
** Returns the bytes written, without the NUL. The output is valid UTF-8,
** holds no U+FFFD and no control character. */
size_t textesc(const char *in, size_t len, const char *newline, int utf8, char *out, size_t cap);

#endif
