#include "config.h"
/* main.c -- choose the mode from the command line. */
#include <stdio.h>
int main(void) { puts("tielab " PACKAGE_VERSION); return 0; }
