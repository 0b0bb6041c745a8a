#!/bin/sh
# timing.sh -- what make check says before its first test: how many tests
# it runs and roughly how long they take, so that nobody waits blind.
#
#   tests/lib/timing.sh SELECTED ALL        (MAKEFLAGS from make's environment)
#
# The time is this build tree's own last whole run when there was one: a
# run that wrote a result (.trs) for every test after the start this
# script kept in tests/check-timing, and then test-suite.log, took from
# that start to test-suite.log's time. Otherwise it is what the whole
# suite took where it was measured, with make -j2 on two cores, which the
# machine at hand may well beat or miss. It never fails make check.
selected=$1 all=$2 makeflags=${MAKEFLAGS:-}
state=tests/check-timing
measured="about 6 min with make -j2 on 2 idle cores; 17 min on 2 busy shared ones"

# minutes SECONDS: "4 min 52 s"
minutes() { echo "$(($1 / 60)) min $(($1 % 60)) s"; }

# How many tests at once: make's -j, as MAKEFLAGS carries it.
case " $makeflags " in
  *" -j "*) jobs=all ;;
  *" -j"[0-9]*) jobs=$(echo " $makeflags " | sed 's/.* -j\([0-9]*\) .*/\1/') ;;
  *) jobs=1 ;;
esac
case $jobs in
  1) how="one at a time (make -j2 check runs two at once)" ;;
  all) how="all at once" ;;
  *) how="$jobs at once" ;;
esac

# The last whole run, from the start kept then and test-suite.log's time.
last= last_jobs=
if [ -f "$state" ]; then
  read -r start selected_then all_then jobs_then last_then last_jobs <"$state"
  last=$last_then
  if [ "$selected_then" = "$all_then" ] && [ -f test-suite.log ] && [ test-suite.log -nt "$state" ] &&
     [ "$(find tests -name '*.trs' -newer "$state" 2>/dev/null | wc -l)" -ge "$all_then" ] &&
     end=$(date -r test-suite.log +%s 2>/dev/null) && [ "$end" -gt "$start" ] 2>/dev/null; then
    last=$((end - start)) last_jobs=$jobs_then
  fi
fi
mkdir -p tests && echo "$(date +%s) $selected $all $jobs $last $last_jobs" >"$state"

if [ "$selected" != "$all" ]; then
  echo "make check: $selected of the suite's $all tests, $how (all $all take $measured)"
elif [ -n "$last" ]; then
  echo "make check: $all tests, $how; the last whole run here, $last_jobs at once, took $(minutes "$last") ($measured)"
else
  echo "make check: $all tests, $how; the whole suite takes $measured"
fi
