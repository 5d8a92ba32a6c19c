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
#  - the PostgreSQL pass (issue 28): the suites of tests/pg-suites.txt run
#    once more, labelled "(PostgreSQL)", with ADAPTMON_TEST_PG=1 against one
#    primary with one synchronous standby on loopback (tests/pgutil.py start;
#    stopped at exit, also on a signal), counted in the same final line. It
#    runs when neither SUITES nor VALGRIND is set, or PG_PASS=1 (PG_PASS=0:
#    never); without PostgreSQL's binaries it is one "skip:" line and each of
#    its suites counts as skipped.
BUILD=${BUILD:-build}
ADAPTMON=${ADAPTMON:-./adaptmon}
export ADAPTMON BUILD
passed=0
failed=0
skipped=0
log=$(mktemp)
vgdir=""
recdir=$(mktemp -d)
pgstate=$(mktemp)
trap 'rm -f "$log"; rm -rf "$recdir"; [ -n "$vgdir" ] && rm -rf "$vgdir"; [ -s "$pgstate" ] && python3 tests/pgutil.py stop "$pgstate"; rm -f "$pgstate"' EXIT
trap 'exit 130' INT TERM HUP
VG=""
suites=${SUITES:-"tests/*/test_*.py"}
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
fi

count_cmocka() {
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    echo "${p:-0} ${f:-0}"
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "== $t"
    t0=$(date +%s)
    $VG "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    echo "-- $t: $(($(date +%s) - t0)) s"
    set -- $(count_cmocka)
    p=$1; f=$2
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $t exited with status $rc"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

pgsuites=""
[ -z "${SUITES:-}" ] && [ "${VALGRIND:-0}" != 1 ] && PG_PASS=${PG_PASS:-1}
if [ "${PG_PASS:-0}" = 1 ]; then
    pglist=$(sed 's/#.*//' tests/pg-suites.txt)
    if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        n=$(echo $pglist | wc -w)
        echo "skip: the PostgreSQL pass ($n suites): no PostgreSQL server binaries (tools/deps.sh installs postgresql-15)"
        skipped=$((skipped + n))
    elif port=$(python3 tests/pgutil.py start "$pgstate" 2>"$log"); then
        export ADAPTMON_TEST_PG_SHARED=$port
        for t in $pglist; do pgsuites="$pgsuites pg:$t"; done
    else
        echo "!! the PostgreSQL pass: the cluster did not start"; cat "$log"
        failed=$((failed + 1))
    fi
fi

for t in $suites $pgsuites; do
    pg=0
    case $t in pg:*) t=${t#pg:}; pg=1 ;; esac
    export ADAPTMON_TEST_PG=$pg
    [ -f "$t" ] || continue
    [ $pg = 1 ] && echo "== $t (PostgreSQL)" || echo "== $t"
    t0=$(date +%s)
    case "$t" in
    tests/api/*|tests/reliability/*) APITEST_RECORD_DIR=$recdir python3 "$t" >"$log" 2>&1 ;;
    *) python3 "$t" >"$log" 2>&1 ;;
    esac
    rc=$?
    cat "$log"
    echo "-- $t: $(($(date +%s) - t0)) s"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1)
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
    s=0
    case $line in *skipped) s=${line##*, }; s=${s%% skipped} ;; esac
    [ -n "$line" ] || { p=0; f=0; s=0; }
    skipped=$((skipped + s))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $t exited with status $rc"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

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
