/*
** num.h -- numbers as text in files: written and read in the "C" locale
** whatever LC_NUMERIC the process runs under, so that a checkpoint or an
** export written under a decimal-comma locale reads back anywhere.
**
** Parsing is strict: the whole string is the number, with no space before
** or after, no hexadecimal, no "inf" or "nan"; a value is finite.
*/
#ifndef TIELAB_BASE_NUM_H
#define TIELAB_BASE_NUM_H

#include <stddef.h>

/* Longest text num_format writes, with its NUL. */
#define NUM_TEXT_MAX 32

/* The shortest decimal text that reads back as exactly 'v' ("%.17g" at
** most): "0.0025", "1e-08"; "nan", "inf", "-inf" for the others. Returns
** 'buf'; 'cap' of NUM_TEXT_MAX always suffices. */
char *num_format(char *buf, size_t cap, double v);

/* A finite decimal number ("-1.5e-3", "42", ".5") into '*out'; 0, or -1
** leaving '*out' alone. */
int num_parse(const char *s, double *out);

/* A byte count for a message, in the unit that shows it best: "1 byte",
** "812 bytes", "3.4 KiB", "1.5 MiB", "2.0 GiB". Returns 'buf'; 'cap' of
** NUM_TEXT_MAX always suffices. */
char *num_bytes(char *buf, size_t cap, unsigned long long n);

/* A whole decimal number in [lo, hi]: an optional '-', then digits only. */
int num_parse_long(const char *s, long lo, long hi, long *out);

#endif
