#!/bin/sh
# Runs every test suite and ends with the line "N passed, N failed".
#  - cmocka unit binaries in $BUILD/tests/test_*
#  - black-box suites tests/*/test_*.py (python3: cli, api, browser, fleet, …),
#    each printing its own "N passed, N failed" line last.
BUILD=${BUILD:-build}
ADAPTMON=${ADAPTMON:-./adaptmon}
export ADAPTMON
passed=0
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

count_cmocka() {
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    echo "${p:-0} ${f:-0}"
}

for t in "$BUILD"/tests/test_*; do
    [ -x "$t" ] || continue
    echo "== $t"
    "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    set -- $(count_cmocka)
    p=$1; f=$2
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $t exited with status $rc"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

for t in tests/*/test_*.py; do
    [ -f "$t" ] || continue
    echo "== $t"
    python3 "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
    p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
    [ -n "$line" ] || { p=0; f=0; }
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        echo "!! $t exited with status $rc"
        f=1
    fi
    passed=$((passed + p)); failed=$((failed + f))
done

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
