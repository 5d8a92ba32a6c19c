#!/bin/sh
# Builds the libFuzzer harnesses fuzz/fuzz_*.c with clang
# (-fsanitize=fuzzer,address,undefined; the project's objects compiled with
# -fsanitize=fuzzer-no-link,address,undefined into $FUZZ_BUILD) and runs each
# for FUZZ_SECONDS on a copy of its seed corpus fuzz/corpus/<name>/.
# New inputs found stay in $FUZZ_BUILD/corpus/<name>/; a crash leaves
# crash-* / leak-* files in $FUZZ_BUILD/artifacts/<name>/ and fails the run.
# Usage: sh fuzz/run.sh [NAME...]      (default: every harness)
# Environment: FUZZ_SECONDS (60), FUZZ_BUILD (build-fuzz), FUZZ_JOBS (1).
set -e
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
SAN="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
make -s BUILD="$FUZZ_BUILD" CC=clang OPT=-O1 SAN="-fsanitize=fuzzer-no-link $SAN" \
    "$FUZZ_BUILD/libamcore.a" "$FUZZ_BUILD/libamserver.a"
PKGS="libmicrohttpd jansson sqlite3 libutf8proc libxml-2.0"
CFLAGS="-std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -O1 -g -Icore -Iserver -Iserver/base -Iserver/store -Iserver/live -Iserver/http -Iserver/api -Iserver/output -Icli -Ifuzz \
$(pkg-config --cflags $PKGS)"
LIBS="$FUZZ_BUILD/libamserver.a $FUZZ_BUILD/libamcore.a $(pkg-config --libs $PKGS) -lstemmer -lpthread -lm"
names=${*:-$(for f in fuzz/fuzz_*.c; do n=${f#fuzz/fuzz_}; echo "${n%.c}"; done)}
summary=""
status=0
for n in $names; do
    bin="$FUZZ_BUILD/fuzz/fuzz_$n"
    mkdir -p "$FUZZ_BUILD/fuzz" "$FUZZ_BUILD/corpus/$n" "$FUZZ_BUILD/artifacts/$n"
    # shellcheck disable=SC2086
    if ! clang $CFLAGS -fsanitize=fuzzer $SAN -o "$bin" "fuzz/fuzz_$n.c" $LIBS; then
        status=1
        summary="${summary}fuzz_$n: BUILD FAILED
"
        continue
    fi
    log="$FUZZ_BUILD/fuzz/fuzz_$n.log"
    echo "== fuzz_$n: ${FUZZ_SECONDS}s on fuzz/corpus/$n (+ $FUZZ_BUILD/corpus/$n)"
    rc=0
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        "$bin" -max_total_time="$FUZZ_SECONDS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$FUZZ_BUILD/artifacts/$n/" \
        "$FUZZ_BUILD/corpus/$n" "fuzz/corpus/$n" >"$log" 2>&1 || rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -E '^#[0-9]+' "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\).*/\1/p')
    if [ "$rc" -ne 0 ]; then
        status=1
        tail -60 "$log"
        line="fuzz_$n: FAILED (exit $rc) after ${execs:-?} executions; see $log"
    else
        line="fuzz_$n: ${execs:-?} executions in ${FUZZ_SECONDS}s, coverage ${cov:-?} edges, no crash"
    fi
    echo "$line"
    summary="$summary$line
"
done
echo "== fuzz summary"
printf "%s" "$summary"
exit $status
