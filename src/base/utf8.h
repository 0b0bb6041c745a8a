/*
** utf8.h -- UTF-8 read and written by the rules of Unicode (chapter 3,
** table 3-7): no overlong forms, no surrogates (U+D800..U+DFFF), nothing
** above U+10FFFF. Every file that reads or writes UTF-8 by hand goes
** through here, so that tielab has one idea of what valid text is.
**
** The policy for what is not valid: each maximal ill-formed subsequence
** (the longest start of a well-formed character, or else one byte) counts
** as one bad character, which a writer shows as U+FFFD -- Unicode's
** "substitution of maximal subparts", the same as browsers and Python.
*/
#ifndef TIELAB_BASE_UTF8_H
#define TIELAB_BASE_UTF8_H

#include <stddef.h>
#include <stdint.h>

#define UTF8_MAX 4                 /* bytes of the longest character */
#define UTF8_REPLACEMENT 0xFFFDu   /* what a bad character is shown as */
#define UTF8_INVALID 0xFFFFFFFFu   /* utf8_decode's code point for a bad character */

/* Whether byte 'c' continues a character (10xxxxxx) rather than begins one. */
static inline int utf8_is_continuation(unsigned char c) { return (c & 0xc0) == 0x80; }

/* Bytes of the valid character 's' begins with ('n' bytes left), or 0 when
** it begins none: a lone continuation byte, a sequence cut short, an
** overlong form, a surrogate or a code point above U+10FFFF. Bytes are
** read one at a time and never past the first that does not fit, so a
** NUL-terminated string may be passed with n = UTF8_MAX. */
size_t utf8_char(const char *s, size_t n);

/* The character at 's' ('n' > 0 bytes left): its code point in '*cp' and
** its bytes. When 's' begins no valid character, '*cp' is UTF8_INVALID
** and the return is the bytes of the maximal ill-formed subsequence there
** (at least 1), the bytes one U+FFFD stands for. Returns 0 only when n is 0.
** Like utf8_char, it reads no byte past one that does not fit. */
size_t utf8_decode(const char *s, size_t n, uint32_t *cp);

/* How many bytes of 's' ('n' left) start a well-formed character, with
** '*need' set to that character's length (0 when the first byte starts
** none). Returned == *need: a whole character; less and == n: cut short
** by the end of the bytes; otherwise: ill-formed (the maximal subpart). */
size_t utf8_prefix(const char *s, size_t n, size_t *need);

/* 'cp' as UTF-8 into 'out' (room for UTF8_MAX bytes, no NUL written);
** returns its bytes. A surrogate or a value above U+10FFFF is no
** character and is written as U+FFFD. */
size_t utf8_encode(uint32_t cp, char *out);

/* Nonzero when all 'n' bytes of 's' are valid UTF-8. */
int utf8_valid(const char *s, size_t n);

/* Bytes at the end of 's' that begin a character not yet complete (0 to
** 3): text that comes in pieces is handled whole characters at a time. */
size_t utf8_incomplete_tail(const char *s, size_t n);

#endif
