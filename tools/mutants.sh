#!/bin/sh
# tools/mutants.sh — plants each deliberate bug of tests/mutants/*.patch, one
# at a time, and expects the tests that guard it to fail (`make mutants`;
# not part of `make test`). The rewrite of the write path (group commit,
# POST) and of the request gate must keep these tests able to see the bugs
# they were written against (issue 25).
#
# Usage: tools/mutants.sh [NAME ...]     (default: every patch)
#        MUTANT_TEST='CMD' tools/mutants.sh …  runs CMD instead of each patch's
#        own test (what another suite sees of the same bugs)
#
# Each patch starts with a header that git apply skips:
#   Mutant: NAME
#   Planted bug: what the patch breaks (wrapped lines)
#   Test: a shell command, run from the tree's root, that must fail
# The tree (tracked and untracked files, not ignored ones) is copied into a
# temporary directory with its build directory (mtimes kept, so a mutant
# rebuilds one object); the working tree is never touched. There the tests
# of every mutant first run on the unchanged code and must pass (else the
# run stops: a failure would prove nothing), then each patch is applied
# (git apply), the server rebuilt (make all), its test run with a timeout
# (MUTANT_TIMEOUT, 600 s; a hang counts as caught and is marked), and the
# patch reverted (git apply -R). Patches apply with one line of context
# (-C1), so that edits near a planted bug do not stop it. A mutant that
# does not apply or build is an error, not a catch: the patch no longer
# matches the code and must be updated. Prints one line per mutant and a table; exits 0 only when every
# mutant was caught.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
TIMEOUT=${MUTANT_TIMEOUT:-600}
KEEP=${MUTANT_KEEP:-0}

cd "$ROOT" || exit 2
if [ $# -gt 0 ]; then
    patches=""
    for n in "$@"; do
        p=tests/mutants/${n%.patch}.patch
        [ -f "$p" ] || { echo "mutants: no patch $p" >&2; exit 2; }
        patches="$patches $p"
    done
else
    patches=$(ls tests/mutants/*.patch 2>/dev/null)
fi
[ -n "$patches" ] || { echo "mutants: no patches in tests/mutants/" >&2; exit 2; }

# The header fields of a patch (Test: MUTANT_TEST when set).
field() {
    if [ "$2" = Test ] && [ -n "${MUTANT_TEST:-}" ]; then
        echo "$MUTANT_TEST"
    else
        sed -n "s/^$2: //p" "$1" | head -1
    fi
}
for p in $patches; do
    [ -n "$(field "$p" Test)" ] || { echo "mutants: $p has no 'Test:' line" >&2; exit 2; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/adaptmon-mutants.XXXXXX") || exit 2
[ "$KEEP" = 1 ] || trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
tree=$work/tree
mkdir "$tree"
# the files of the tree as they are now (uncommitted edits included)
git ls-files -z -c -o --exclude-standard | tar -cf - --null -T - | tar -xf - -C "$tree" || exit 2
[ -d "$BUILD" ] && cp -a "$BUILD" "$tree/$BUILD"
log=$work/log

build() {
    (cd "$tree" && make BUILD="$BUILD" all) >"$log" 2>&1
}

# runs the test of patch $1 in the copy; returns its exit status (124: timeout)
run_test() {
    (cd "$tree" && ADAPTMON="$tree/adaptmon" BUILD="$BUILD" \
        timeout "$TIMEOUT" sh -c "$(field "$ROOT/$1" Test)") >"$log" 2>&1
}

echo "== mutants: building the unchanged tree in $tree"
if ! build; then
    tail -30 "$log"
    echo "mutants: the unchanged tree does not build" >&2
    exit 2
fi
# each distinct test once on the unchanged code
seen=""
for p in $patches; do
    t=$(field "$p" Test)
    case "$seen" in *"|$t|"*) continue ;; esac
    seen="$seen|$t|"
    echo "== baseline: $t"
    if ! run_test "$p"; then
        tail -40 "$log"
        echo "mutants: the test fails without a mutant; fix that first: $t" >&2
        exit 2
    fi
done

table=$work/table
caught=0
missed=0
errors=0
for p in $patches; do
    name=$(field "$p" Mutant)
    [ -n "$name" ] || name=$(basename "$p" .patch)
    t0=$(date +%s)
    why=""
    if ! (cd "$tree" && git apply -C1 "$ROOT/$p") >"$log" 2>&1; then
        verdict="ERROR (does not apply)"
        cat "$log"
        errors=$((errors + 1))
    elif ! build; then
        verdict="ERROR (does not build)"
        tail -20 "$log"
        errors=$((errors + 1))
        (cd "$tree" && git apply -C1 -R "$ROOT/$p")
    else
        run_test "$p"
        rc=$?
        if [ "$rc" -eq 124 ]; then
            verdict="caught (timeout ${TIMEOUT}s)"
            caught=$((caught + 1))
        elif [ "$rc" -ne 0 ]; then
            verdict="caught"
            caught=$((caught + 1))
            # the first assertion that failed, for the reader
            why=$(grep -m1 -E '^(AssertionError|[A-Za-z]*Error):' "$log" | cut -c1-200)
        else
            verdict="MISSED"
            missed=$((missed + 1))
            tail -5 "$log"
        fi
        if ! (cd "$tree" && git apply -C1 -R "$ROOT/$p") >"$log" 2>&1; then
            cat "$log"
            echo "mutants: could not revert $p; stopping" >&2
            exit 2
        fi
    fi
    secs=$(($(date +%s) - t0))
    echo "-- $name: $verdict (${secs}s)"
    [ -z "$why" ] || echo "   $why"
    printf '%-26s %-28s %5ss  %s\n' "$name" "$verdict" "$secs" "$(field "$p" Test)" >>"$table"
done

echo
printf '%-26s %-28s %6s  %s\n' "mutant" "verdict" "time" "test"
cat "$table"
echo "$caught caught, $missed missed, $errors errors"
[ "$missed" -eq 0 ] && [ "$errors" -eq 0 ]
