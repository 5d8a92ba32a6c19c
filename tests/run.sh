#!/bin/sh
# Runs every test suite and ends with the line "N passed, N failed".
#  - cmocka unit binaries in $BUILD/tests/test_*
#  - black-box suites tests/*/test_*.py (python3: cli, api, browser, fleet, …),
#    each printing its own "N passed, N failed" line last.
#  - the api and reliability suites record every response they receive
#    (APITEST_RECORD_DIR, tests/api/harness.py); tests/api/response_check.mjs
#    then validates each against openapi.yaml, which counts as one test.
#  - VALGRIND=1: the unit binaries run under valgrind (memcheck errors and
#    definite leaks fail them), and the black-box suites run the server
#    through tests/reliability/valgrind-adaptmon.sh; every valgrind log that
#    reports an error counts as one more failure. VALGRIND_SUITES=GLOB
#    limits the python suites (default: all of them).
#  - SUITES=GLOBS: only these python suites (make check: the CLI and API
#    ones); the unit binaries always run.
#  - JOBS=N (default 1): N lanes run the items (unit binaries and suites) at
#    once. Each lane takes the next item not yet taken, longest first by the
#    durations file ($DURATIONS; default tests/durations.txt, or
#    tests/durations-valgrind.txt with VALGRIND=1: the "-- ITEM: N s" lines
#    of an earlier run's output; an item it does not name is taken first, as
#    its length is unknown), so the lanes finish close together. An item's
#    output goes to its own file and is printed whole when it ends; the
#    totals are summed at the end, so the last line is the same whatever N.
#    The suites do not collide: each server gets a free port and a temporary
#    directory (tests/api/harness.py), recordings and valgrind logs are named
#    by process id. SERIAL_ITEMS=GLOBS: items that run alone after the
#    parallel part (timing-sensitive ones; default none).
#  - the PostgreSQL pass (issue 28): the suites of tests/pg-suites.txt run
#    once more, labelled "(PostgreSQL)", with ADAPTMON_TEST_PG=1 against one
#    primary with one synchronous standby on loopback (tests/pgutil.py start;
#    stopped at exit, also on a signal), counted in the same final line. It
#    runs when neither SUITES nor VALGRIND is set, or PG_PASS=1 (PG_PASS=0:
#    never); without PostgreSQL's binaries it is one "skip:" line and each of
#    its suites counts as skipped. Its items are lanes' items like the others
#    ("pg:SUITE" in the durations file); PG_JOBS=N (default 2) lanes run
#    them when that is more than JOBS, after the JOBS lanes' items and
#    before SERIAL_ITEMS (each suite's databases are its own, named by its
#    process id, so two suites share the cluster). They also get
#    ADAPTMON_TEST_PG_QUICK=1: smaller sizes where the store's path is the
#    same at any size (tests/api/harness.py pg_quick, rel.scale; `make
#    test-pg` runs the full ones).
BUILD=${BUILD:-build}
ADAPTMON=${ADAPTMON:-./adaptmon}
JOBS=${JOBS:-1}
PG_JOBS=${PG_JOBS:-2}
export ADAPTMON BUILD
work=$(mktemp -d)
vgdir=""
recdir=$(mktemp -d)
pgstate=$(mktemp)
trap 'rm -rf "$work" "$recdir"; [ -n "$vgdir" ] && rm -rf "$vgdir"; [ -s "$pgstate" ] && python3 tests/pgutil.py stop "$pgstate"; rm -f "$pgstate"' EXIT
trap 'exit 130' INT TERM HUP
VG=""
suites=${SUITES:-"tests/*/test_*.py"}
DURATIONS=${DURATIONS:-tests/durations.txt}
if [ "${VALGRIND:-0}" = 1 ]; then
    # --fair-sched: valgrind runs one thread at a time, and its default lock
    # can starve a thread (a store test with spinning readers hung a CI run)
    VG="valgrind --fair-sched=try --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
    vgdir=$(mktemp -d)
    ADAPTMON_REAL=$(cd "$(dirname "$ADAPTMON")" && pwd)/$(basename "$ADAPTMON")
    ADAPTMON=$(pwd)/tests/reliability/valgrind-adaptmon.sh
    VALGRIND_LOGDIR=$vgdir
    export ADAPTMON ADAPTMON_REAL VALGRIND_LOGDIR VALGRIND
    suites=${VALGRIND_SUITES:-$suites}
    [ "$DURATIONS" = tests/durations.txt ] && DURATIONS=tests/durations-valgrind.txt
fi
case $JOBS in '' | *[!0-9]* | 0) echo "JOBS=$JOBS: not a positive number" >&2; exit 2 ;; esac
case $PG_JOBS in '' | *[!0-9]* | 0) echo "PG_JOBS=$PG_JOBS: not a positive number" >&2; exit 2 ;; esac

# count_cmocka LOG: "PASSED FAILED" of a cmocka binary's output
count_cmocka() {
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$1" | tail -1)
    echo "${p:-0} ${f:-0} 0"
}

# count_suite LOG: "PASSED FAILED SKIPPED" of a python suite's last summary line
count_suite() {
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$1" | tail -1)
    [ -n "$line" ] || { echo "0 0 0"; return; }
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    s=0
    case $line in *skipped) s=${line##*, }; s=${s%% skipped} ;; esac
    echo "$p $f $s"
}

# run_item N ITEM: runs one unit binary or suite with its output in
# $work/N.log, then its counts in $work/N.res, then prints the log whole
# (under a lock: two lanes' logs do not interleave).
run_item() {
    out=$work/$1.log
    t0=$(date +%s)
    pg=0
    py=${2#pg:}
    [ "$py" != "$2" ] && pg=1
    {
        [ $pg = 1 ] && echo "== $py (PostgreSQL)" || echo "== $2"
        case "$2" in
        *.py)
            case "$py" in
            tests/api/* | tests/reliability/*)
                ADAPTMON_TEST_PG=$pg ADAPTMON_TEST_PG_QUICK=$pg APITEST_RECORD_DIR=$recdir \
                    python3 "$py" ;;
            *) ADAPTMON_TEST_PG=$pg ADAPTMON_TEST_PG_QUICK=$pg python3 "$py" ;;
            esac ;;
        *) $VG "$2" ;;
        esac
    } <&3 >"$out" 2>&1
    rc=$?
    case "$2" in
    *.py) set -- "$1" "$2" $(count_suite "$out") ;;
    *) set -- "$1" "$2" $(count_cmocka "$out") ;;
    esac
    f=$4
    echo "-- $2: $(($(date +%s) - t0)) s" >>"$out"
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $2 exited with status $rc" >>"$out"
        f=1
    fi
    echo "$3 $f $5" >"$work/$1.res"
    until mkdir "$work/print.lock" 2>/dev/null; do sleep 0.2; done
    cat "$out"
    rmdir "$work/print.lock"
}

# lane LIST: takes the items of LIST (lines "N ITEM") in order, each one
# not yet claimed by another lane (mkdir is atomic), and runs it.
# Runs in a subshell: its variables (and run_item's) are its own.
lane() (
    while read -r ln item; do
        mkdir "$work/$ln.claim" 2>/dev/null || continue
        run_item "$ln" "$item"
    done <"$1"
)

pgsuites=""
[ -z "${SUITES:-}" ] && [ "${VALGRIND:-0}" != 1 ] && PG_PASS=${PG_PASS:-1}
if [ "${PG_PASS:-0}" = 1 ]; then
    pglist=$(sed 's/#.*//' tests/pg-suites.txt)
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        np=$(echo $pglist | wc -w)
        echo "skip: the PostgreSQL pass ($np suites): no PostgreSQL server binaries (tools/deps.sh installs postgresql-15)"
        pgskipped=$np
    elif port=$(python3 tests/pgutil.py start "$pgstate" 2>"$work/pgstart.log"); then
        export ADAPTMON_TEST_PG_SHARED=$port
        for t in $pglist; do pgsuites="$pgsuites pg:$t"; done
    else
        echo "!! the PostgreSQL pass: the cluster did not start"; cat "$work/pgstart.log"
        pgfailed=1
    fi
fi

# Every item, numbered in the serial order (unit binaries, then suites, then
# the PostgreSQL pass's): the totals and the final listing keep that order.
n=0
for t in "$BUILD"/tests/test_* $suites $pgsuites; do
    case "$t" in
    *.py) [ -f "${t#pg:}" ] || continue ;;
    *) [ -x "$t" ] || continue ;;
    esac
    n=$((n + 1))
    serial=0
    set -f # SERIAL_ITEMS' globs are patterns here, not file names to expand
    for g in ${SERIAL_ITEMS:-}; do
        # shellcheck disable=SC2254
        case "$t" in $g) serial=1 ;; esac
    done
    set +f
    # phase: 0 the JOBS lanes, 1 the PostgreSQL pass's own PG_JOBS lanes
    # (when it has more of them), 2 alone at the end (SERIAL_ITEMS)
    phase=0 nl=$JOBS
    case "$t" in pg:*) [ "$PG_JOBS" -gt "$JOBS" ] && phase=1 nl=$PG_JOBS ;; esac
    [ $serial = 1 ] && phase=2 nl=1
    # the earlier duration, or a large one when unknown (taken first)
    d=$(sed -n "s|^-- $t: \([0-9]*\) s\$|\1|p" "$DURATIONS" 2>/dev/null | tail -1)
    [ "$nl" -gt 1 ] || d=0
    echo "$phase ${d:-100000} $n $t" >>"$work/all"
done
[ -f "$work/all" ] || : >"$work/all"
# sort: by phase, longest first; ties keep the serial order
sort -k1,1n -k2,2nr -k3,3n "$work/all" >"$work/sorted"
for ph in 0 1 2; do
    awk -v ph=$ph '$1 == ph { print $3, $4 }' "$work/sorted" >"$work/phase$ph"
done

# the items read their standard input from fd 3 (the script's own), as a
# lane's comes from its list
exec 3<&0
# lanes N LIST: N lanes on LIST, until every item of it has ended
lanes() {
    i=0
    while [ "$i" -lt "$1" ]; do
        lane "$2" &
        i=$((i + 1))
    done
    wait
}
lanes "$JOBS" "$work/phase0"
lanes "$PG_JOBS" "$work/phase1"
lane "$work/phase2"

passed=0
failed=${pgfailed:-0}
skipped=${pgskipped:-0}
i=1
while [ "$i" -le "$n" ]; do
    if [ -f "$work/$i.res" ]; then
        read -r p f s <"$work/$i.res"
    else
        p=0; f=1; s=0
        echo "!! item $i did not report (its lane died)"
    fi
    passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
    i=$((i + 1))
done

log=$work/check.log
if [ -n "$(ls "$recdir")" ]; then
    echo "== every recorded response against openapi.yaml (tests/api/response_check.mjs)"
    [ -d tests/api/node_modules/ajv ] ||
        npm ci --prefix tests/api --no-audit --no-fund --loglevel=error >"$log" 2>&1 || cat "$log"
    if node tests/api/response_check.mjs openapi.yaml "$recdir" >"$log" 2>&1; then
        tail -1 "$log"
        passed=$((passed + 1))
    else
        cat "$log"
        failed=$((failed + 1))
    fi
fi

if [ -n "$vgdir" ]; then
    nlogs=$(ls "$vgdir" | wc -l)
    bad=0
    for f in "$vgdir"/*.vg.log; do
        [ -f "$f" ] || continue
        if grep -qE 'ERROR SUMMARY: [1-9]|== (Invalid (read|write|free)|Conditional jump|Use of uninitialised|Syscall param|Mismatched free|Source and destination overlap)|definitely lost in' "$f"; then
            echo "!! valgrind reported errors in the server ($f):"
            sed -n '1,80p' "$f"
            bad=$((bad + 1))
        fi
    done
    echo "== valgrind: $nlogs server processes, $bad with errors"
    failed=$((failed + bad))
fi

if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
