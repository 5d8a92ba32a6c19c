#!/bin/sh
# Runs the adaptmon binary under valgrind (tests/run.sh VALGRIND=1 points
# ADAPTMON here). The real binary: $ADAPTMON_REAL (default
# build-valgrind/adaptmon). One log per process in $VALGRIND_LOGDIR (default
# /tmp); tests/run.sh counts the logs that report errors as failures, so an
# error in a server that a test SIGKILLs is not lost. Memcheck errors and
# definite leaks also make the process exit with status 99.
here=$(cd "$(dirname "$0")/../.." && pwd)
real=${ADAPTMON_REAL:-$here/build-valgrind/adaptmon}
logdir=${VALGRIND_LOGDIR:-/tmp}
exec valgrind --fair-sched=try --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
    --show-leak-kinds=definite --num-callers=30 \
    --log-file="$logdir/adaptmon.%p.vg.log" "$real" "$@"
