/*
** cast_check.c -- checks an asciicast v2 file as asciinema reads it, for
** tests/ui/test_record.sh.
**
**   cast_check FILE.cast WIDTH HEIGHT [OUT]
**
** The first line must be the header object: version 2, the given width and
** height, an integer timestamp, an env object. Every later line must be an
** array [time, code, data]: time a number not below the one before, code
** "o" (output) or "r" (resize, data "WxH"), data a string. With OUT, the
** data of every "o" event is written there, in order: what a terminal
** playing the cast receives. Prints one line saying what is wrong, or
** "events N seconds T bytes B steady S": S is the output bytes per second
** after the first second (past the first full paint). Exits 0 when the
** file is valid.
*/
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(int line, const char *what) {
  printf("line %d: %s\n", line, what);
  return 1;
}

static int check_header(json_t *h, long width, long height) {
  if (!json_is_object(h)) return bad(1, "the header is not an object");
  if (json_integer_value(json_object_get(h, "version")) != 2) return bad(1, "version is not 2");
  if (json_integer_value(json_object_get(h, "width")) != width) return bad(1, "width is not the terminal's");
  if (json_integer_value(json_object_get(h, "height")) != height) return bad(1, "height is not the terminal's");
  if (!json_is_integer(json_object_get(h, "timestamp"))) return bad(1, "no integer timestamp");
  if (!json_is_object(json_object_get(h, "env"))) return bad(1, "no env object");
  return 0;
}

static int check_resize(const char *data) {
  int w, h;
  char end;
  return sscanf(data, "%dx%d%c", &w, &h, &end) == 2 && w > 0 && h > 0;
}

/* One event line; '*last' is the time of the one before. */
static int check_event(json_t *e, int line, double *last, FILE *out, double bytes[2]) {
  if (!json_is_array(e) || json_array_size(e) != 3) return bad(line, "not an array of 3");
  json_t *t = json_array_get(e, 0);
  const char *code = json_string_value(json_array_get(e, 1));
  json_t *data = json_array_get(e, 2);
  if (!json_is_number(t)) return bad(line, "the time is not a number");
  if (json_number_value(t) < *last) return bad(line, "the time goes back");
  *last = json_number_value(t);
  if (!code || (strcmp(code, "o") != 0 && strcmp(code, "r") != 0)) return bad(line, "the code is not \"o\" or \"r\"");
  if (!json_is_string(data)) return bad(line, "the data is not a string");
  if (code[0] == 'r' && !check_resize(json_string_value(data))) return bad(line, "a resize is not WxH");
  if (code[0] == 'o') {
    bytes[0] += (double)json_string_length(data);
    if (*last >= 1) bytes[1] += (double)json_string_length(data);
    if (out) fwrite(json_string_value(data), 1, json_string_length(data), out);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: cast_check FILE.cast WIDTH HEIGHT [OUT]\n");
    return 2;
  }
  FILE *in = fopen(argv[1], "r");
  FILE *out = argc > 4 ? fopen(argv[4], "w") : NULL;
  if (!in || (argc > 4 && !out)) {
    perror(in ? argv[4] : argv[1]);
    return 2;
  }
  char *text = NULL;
  size_t cap = 0;
  int line = 0, rc = 0;
  double last = 0, bytes[2] = {0, 0};
  while (rc == 0 && getline(&text, &cap, in) > 0) {
    json_error_t je;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
    line++;
    if (!v) rc = bad(line, je.text);
    else if (line == 1) rc = check_header(v, atol(argv[2]), atol(argv[3]));
    else rc = check_event(v, line, &last, out, bytes);
    json_decref(v);
  }
  if (rc == 0 && line < 2) rc = bad(line, "no events");
  if (rc == 0)
    printf("events %d seconds %.3f bytes %.0f steady %.0f\n", line - 1, last, bytes[0],
           last > 1 ? bytes[1] / (last - 1) : 0);
  free(text);
  fclose(in);
  if (out) fclose(out);
  return rc;
}
