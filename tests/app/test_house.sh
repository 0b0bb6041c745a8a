#!/bin/sh
# test_house.sh -- the sources keep the rules that make them easy to change:
# no file in src/ is over 900 lines; a setting's name is written as a string
# (or as an escaped string inside a C string, a JSON key in a format) only
# in the settings table's files (src/lab/settings*, src/lab/recipe*,
# src/core/settings_model*), every other file naming a setting by its id;
# the documents the sources cite (docs/architecture.md, docs/export.md,
# README.md, ...) are files of the repository, never one outside it. The
# settings come from the program itself (lab.settings()), so a new one is
# covered at once. The checkers run first on small trees with a known
# fault, so that a checker that cannot fail fails this test.
tap_name=house; . "${srcdir:-.}/tests/lib/tap.sh"
TIELAB=${top_builddir:-.}/tielab
[ -x "$TIELAB" ] || bail_out "$TIELAB was not built"
TOP=${srcdir:-.}
SRC=$TOP/src

# Setting names that are also words of another vocabulary, each with the
# files (under src/) where the other meaning is meant: a Lua field's or a
# Lua debug record's "name" (and the journal's format, in journal.h's
# comment), the seed of r:sample and the rate of a lens fit (lrun.c), the
# rate a lens fit reports (lmetrics.c), the method r:batch, the value
# "layers" of TIELAB_ALLREDUCE, the "vocab" object of a released model's
# tokenizer.json. Only these files may write these words; anywhere else
# they are setting names like every other.
SHARED_USES="name:lab/journal.h name:luaapi/lrepl.c name:luaapi/lsandbox.c name:luaapi/llab.c
seed:luaapi/lrun.c lr:luaapi/lrun.c lr:luaapi/lmetrics.c batch:luaapi/lrun.c layers:dist/mpi.c
vocab:core/hftok_json.c"

# Files over 900 lines under $1, one a line: FILE LINES.
long_files() {
  find "$1" -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 900 {print $2, $1}'
}

# Lines under $1 that write one of the names in $2 as a string, "name" or
# \"name\" inside another string, outside the settings table's files and
# the SHARED_USES a name has, one a line: FILE:LINE:TEXT.
named_outside() {
  for name in $2; do
    grep -rn --include='*.c' --include='*.h' -e "\"$name\"" -e "\\\\\"$name\\\\\"" "$1" |
      while IFS= read -r hit; do
        file=${hit%%:*}
        case " $(echo $SHARED_USES) " in *" $name:${file#"$1"/} "*) continue ;; esac
        echo "$hit"
      done
  done | grep -v -e '/lab/settings' -e '/lab/recipe' -e '/core/settings_model' | sort -u
}

# The documents cited under $1 (NAME.md, or a path to one) that are not
# files of the repository at $2, one a line: FILE:LINE: CITED. A path is
# read from the repository's top, a bare name from there or from docs/; a
# path that leaves the repository (../shared/DESIGN.md) is never in it.
outside_docs() {
  grep -rnoE --include='*.[ch]' '([A-Za-z0-9_-]+/)*[A-Za-z][A-Za-z0-9_-]+\.md\b' "$1" |
    while IFS=: read -r file line cited; do
      [ -f "$2/$cited" ] || [ -f "$2/docs/$cited" ] || echo "$file:$line: $cited"
    done
}

# The checkers on a little tree with each fault, then without.
mkdir -p "$tmp/src/lab" "$tmp/src/ui" "$tmp/src/luaapi" "$tmp/docs"
: >"$tmp/docs/architecture.md"
: >"$tmp/README.md"
printf 'static const char *k = "in_scale";\n' >"$tmp/src/lab/settings.c"
printf 'int x; /* docs/architecture.md, architecture.md, README.md; e.md is a field */\n' >"$tmp/src/ui/ok.c"
printf 'static const luaL_Reg m[] = {{"batch", lbatch}};\n' >"$tmp/src/luaapi/lrun.c"
[ -z "$(named_outside "$tmp/src" "in_scale name batch")" ]
ok $? "the checker passes a tree whose setting names are in the table's files, or are another word where allowed"
[ -z "$(outside_docs "$tmp/src" "$tmp")" ]
ok $? "and a tree that cites only the repository's own documents"
printf 'set("in_scale", 2); /* see DESIGN.md */\n' >"$tmp/src/ui/bad.c"
seq 901 | sed 's/.*/;/' >>"$tmp/src/ui/bad.c"
named_outside "$tmp/src" "in_scale name batch" | grep -q 'ui/bad.c:1:'
ok $? "and finds a setting named outside them"
printf 'printf("{\\"in_scale\\":%%g}", x); /* STYLE.md, ../shared/TERMINAL.md */\n' >"$tmp/src/ui/fmt.c"
named_outside "$tmp/src" "in_scale name batch" | grep -q 'ui/fmt.c:1:'
ok $? "and one written escaped inside a C string"
printf 'lua_getfield(L, 2, "batch");\n' >"$tmp/src/luaapi/lload.c"
named_outside "$tmp/src" "in_scale name batch" | grep -q 'luaapi/lload.c:1:'
ok $? "and a word of another vocabulary used as a setting's name outside the files where it is the other word"
long_files "$tmp/src" | grep -q 'ui/bad.c 902'
ok $? "and a file over 900 lines"
outside_docs "$tmp/src" "$tmp" | grep -q 'ui/bad.c:1: DESIGN.md'
ok $? "and a citation of a document the repository does not hold"
cited=$(outside_docs "$tmp/src" "$tmp" | grep 'ui/fmt.c:1:')
[ "$(echo "$cited" | grep -c -e ': STYLE.md$' -e ': shared/TERMINAL.md$')" -eq 2 ]
ok $? "whatever its name, by name or by a path out of the repository${cited:+: $(echo $cited)}"

long=$(long_files "$SRC")
[ -z "$long" ]
ok $? "no file in src/ is over 900 lines${long:+: $(echo $long)}"

cat >"$tmp/names.lua" <<'LUA'
for _, s in ipairs(lab.settings()) do print(s.name) end
LUA
names=$("$TIELAB" --headless "$tmp/names.lua" 2>"$tmp/names.err")
[ "$(echo "$names" | wc -w)" -ge 30 ]
ok $? "the program lists its settings ($(echo "$names" | wc -w); $(head -c 200 "$tmp/names.err"))"
outside=$(named_outside "$SRC" "$names")
[ -z "$outside" ]
ok $? "a setting's name is written only in the settings table's files${outside:+:
$(echo "$outside" | sed 's/^/#   /')}"

cited=$(outside_docs "$SRC" "$TOP")
[ -z "$cited" ] && [ -f "$TOP/docs/architecture.md" ]
ok $? "the sources cite only documents the repository holds, docs/architecture.md among them${cited:+:
$(echo "$cited" | sed 's/^/#   /')}"
tap_done
