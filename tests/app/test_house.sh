#!/bin/sh
# test_house.sh -- the sources keep the rules that make them easy to change:
# no file in src/ is over 900 lines; a setting's name is written as a string
# only in the settings table's files (src/lab/settings*, src/lab/recipe*,
# src/core/settings_model*), every other file naming a setting by its id;
# the sources cite the design page the repository holds
# (docs/architecture.md), never one outside it. The settings come from the
# program itself (lab.settings()), so a new one is covered at once. The
# checkers run first on small trees with a known fault, so that a checker
# that cannot fail fails this test.
tap_name=house; . "${srcdir:-.}/tests/lib/tap.sh"
TIELAB=${top_builddir:-.}/tielab
[ -x "$TIELAB" ] || bail_out "$TIELAB was not built"
SRC=${srcdir:-.}/src

# Words that are setting names and also words of another vocabulary, where
# the other meaning is meant: a Lua field or a Lua debug record's "name", the
# seed of r:sample, the rate of a lens fit, the method r:batch, the value
# "layers" of TIELAB_ALLREDUCE, the "vocab" object of a released model's
# tokenizer.json. A string of these says nothing of which a file means, so
# they are left to the reader; every other name is checked.
SHARED_WORDS="name seed lr batch layers vocab"

# Files over 900 lines under $1, one a line: FILE LINES.
long_files() {
  find "$1" -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 900 {print $2, $1}'
}

# Lines under $1 that write one of the names in $2 as a string outside the
# settings table's files, one a line: FILE:LINE:TEXT.
named_outside() {
  for name in $2; do
    case " $SHARED_WORDS " in *" $name "*) continue ;; esac
    grep -rn --include='*.c' --include='*.h' "\"$name\"" "$1"
  done | grep -v -e '/lab/settings' -e '/lab/recipe' -e '/core/settings_model' | sort -u
}

# Files under $1 that cite a design document outside the repository.
outside_docs() { grep -rln --include='*.[ch]' 'DESIGN\.md' "$1"; }

# The checkers on a little tree with each fault, then without.
mkdir -p "$tmp/src/lab" "$tmp/src/ui"
printf 'static const char *k = "in_scale";\n' >"$tmp/src/lab/settings.c"
printf 'int x;\n' >"$tmp/src/ui/ok.c"
[ -z "$(named_outside "$tmp/src" "in_scale name")" ]
ok $? "the checker passes a tree whose setting names are in the table's files"
printf 'set("in_scale", 2); /* see DESIGN.md */\n' >"$tmp/src/ui/bad.c"
seq 901 | sed 's/.*/;/' >>"$tmp/src/ui/bad.c"
named_outside "$tmp/src" "in_scale name" | grep -q 'ui/bad.c:1:'
ok $? "and finds a setting named outside them"
long_files "$tmp/src" | grep -q 'ui/bad.c 902'
ok $? "and a file over 900 lines"
outside_docs "$tmp/src" | grep -q 'ui/bad.c'
ok $? "and a citation of a document the repository does not hold"

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

cited=$(outside_docs "$SRC")
[ -z "$cited" ] && [ -f "${srcdir:-.}/docs/architecture.md" ]
ok $? "the sources cite docs/architecture.md, which the repository holds${cited:+: $(echo $cited)}"
tap_done
