#!/bin/sh
# test_manpage.sh -- the man page tielab(1) keeps up with the program: every
# option 'tielab --help' prints is in it (an underscore alias by its dashed
# name), every environment variable the sources read with getenv() or
# --help names is in its ENVIRONMENT section, every exit status of
# src/base/err.h is in EXIT STATUS, the search path for scripts is in SCRIPTS,
# and mandoc -Tlint (where installed) finds nothing to say.
tap_name=manpage; . "${srcdir:-.}/tests/lib/tap.sh"
src=${top_srcdir:-.}
page="${top_builddir:-.}/docs/tielab.1"
test -s "$page"
ok $? "docs/tielab.1 is there"
! grep -q '%[A-Z]*%' "$page" && grep -q "^\.TH TIELAB 1 .*\"$("${top_builddir:-.}/tielab" -V)\"" "$page"
ok $? "make filled in its folders and the version of the program: $(grep '^\.TH' "$page")"

# The page's text with the escapes that matter here undone: \- and fonts.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(em/--/g' "$page" >"$tmp/page"
section() { awk -v s=".SH $1" '$0 == s || $0 == s "\"" {on = 1; next} /^\.SH/ {on = 0} on' "$tmp/page"; }
has() { grep -qE -- "(^|[^a-zA-Z0-9_-])$1([^a-zA-Z0-9_-]|\$)" "$2"; }
# The words of file $1 that file $2 does not have, into 'missing'.
missing_from() {
  missing=""
  while read -r word; do
    has "$word" "$2" || missing="$missing $word"
  done <"$1"
}

"$tielab" --help >"$tmp/help" 2>&1
ok $? "tielab --help"
# The option column: each line that starts with an option, cut at the
# description (two spaces or more); --[no-]NAME gives --NAME and --no-NAME.
sed -n 's/^  *\(-[^ ].*\)/\1/p' "$tmp/help" | sed 's/   *.*//' |
  grep -oE -- '-(-(\[no-\])?[a-zA-Z0-9_-]+|[a-zA-Z])' |
  sed -e 's/^--\[no-\]\(.*\)/--\1\n--no-\1/' -e 's/_/-/g' | sort -u >"$tmp/options"
count=$(wc -l <"$tmp/options")
[ "$count" -ge 40 ]
ok $? "--help lists the options ($count)"
missing_from "$tmp/options" "$tmp/page"
[ -z "$missing" ]
ok $? "every option of --help is in the man page (missing:$missing)"
has -h "$tmp/page" && has --help "$tmp/page"
ok $? "so are -h and --help"

section ENVIRONMENT >"$tmp/env"
{
  grep -rhoE 'getenv\("[A-Za-z_0-9]+"\)' "$src/src" | sed 's/getenv("\(.*\)")/\1/'
  grep -oE '\b[A-Z][A-Z0-9]*_[A-Z0-9_]*[A-Z0-9]\b' "$tmp/help"
} | sort -u >"$tmp/vars"
count=$(wc -l <"$tmp/vars")
[ "$count" -ge 5 ]
ok $? "the sources read environment variables ($count: $(tr '\n' ' ' <"$tmp/vars"))"
missing_from "$tmp/vars" "$tmp/env"
[ -z "$missing" ]
ok $? "each is in the ENVIRONMENT section (missing:$missing)"

section "EXIT STATUS" >"$tmp/exit"
grep -oE 'EXIT_[A-Z]+ *= *[0-9]+' "$src/src/base/err.h" | sed 's/.*= *//' | sort -u >"$tmp/codes"
[ -s "$tmp/codes" ]
ok $? "src/base/err.h names the exit statuses ($(tr '\n' ' ' <"$tmp/codes"))"
missing=""
while read -r code; do
  grep -qx "\.B $code" "$tmp/exit" || missing="$missing $code"
done <"$tmp/codes"
[ -z "$missing" ]
ok $? "each is in EXIT STATUS (missing:$missing)"

section SCRIPTS >"$tmp/scripts"
grep -q 'working directory' "$tmp/scripts" && grep -q 'XDG_DATA_HOME/tielab' "$tmp/scripts" &&
  grep -q 'local/share/tielab' "$tmp/scripts" && grep -q 'data directory' "$tmp/scripts"
ok $? "SCRIPTS gives the search path"
for s in FILES "SEE ALSO" OPTIONS SYNOPSIS; do
  [ -n "$(section "$s")" ]
  ok $? "the page has $s"
done

if have mandoc; then
  mandoc -Tlint "$page" >"$tmp/lint" 2>&1
  st=$?
  [ "$st" -eq 0 ] && [ ! -s "$tmp/lint" ]
  ok $? "mandoc -Tlint is clean (status $st: $(head -n 3 "$tmp/lint" | tr '\n' ' '))"
else
  skip "mandoc -Tlint: mandoc is not installed (Debian package mandoc)"
fi
tap_done
