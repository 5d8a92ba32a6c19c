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
BUILD=${BUILD:-build}
ADAPTMON=${ADAPTMON:-./adaptmon}
export ADAPTMON BUILD
passed=0
failed=0
skipped=0
log=$(mktemp)
vgdir=""
recdir=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$recdir"; [ -n "$vgdir" ] && rm -rf "$vgdir"' EXIT
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

for t in $suites; do
    [ -f "$t" ] || continue
    echo "== $t"
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
