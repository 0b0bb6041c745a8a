/*
** width.h -- the columns UTF-8 text takes on the terminal, and where it
** may be cut: the one measure of the screen (term.c, fit.c, names.c and
** the charts' legends). Pure text: no curses. How a character is measured
** and what a cluster is: docs/architecture.md, 'Text widths'.
*/
#ifndef TIELAB_UI_WIDTH_H
#define TIELAB_UI_WIDTH_H

#include <stddef.h>
#include <wchar.h>

/* Columns of the character 'wc'. */
int width_wchar(wchar_t wc);

/* One character of 's' ('len' > 0 bytes): returns its bytes, the
** character in '*wc' and its columns in '*cols'. Bad UTF-8 is its maximal
** subpart, '?', one column; a byte the locale cannot decode otherwise is
** one byte, '?', one column. */
size_t width_char(const char *s, size_t len, wchar_t *wc, int *cols);

/* The cluster 's' begins with ('len' > 0 bytes): returns its bytes, and
** its columns in '*cols'. */
size_t width_cluster(const char *s, size_t len, int *cols);

/* Columns of the first 'len' bytes of 's'. */
int width_cols(const char *s, size_t len);

/* Bytes of the longest beginning of s[0, len) that is whole clusters in
** at most 'cols' columns. */
size_t width_prefix(const char *s, size_t len, int cols);

/* Where the longest end of s[0, len) that is whole clusters in at most
** 'cols' columns begins ('len' when none fits). */
size_t width_suffix(const char *s, size_t len, int cols);

/* Where the cluster holding byte 'at' of s[0, len) begins; '*end' (unless
** NULL) is where it ends. */
size_t width_cluster_at(const char *s, size_t len, size_t at, size_t *end);

#endif
