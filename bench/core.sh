#!/bin/sh
# Scoring-core benchmark: runs bench_core and `adaptmon score` on the TICO-19
# dev set and prints a Markdown report (copy it into bench/README.md).
set -e
BIN=${1:-build/bench/bench_core}
D=data/tico19-enfr-dev
echo "## bench-core, $(date -u +%Y-%m-%d)"
echo
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB, $(uname -m), $(cc --version | head -1)"
echo
"$BIN" --data data --runs 7
echo
echo "End to end (\`adaptmon score\`, process start included; median of 5 wall-clock runs):"
echo
for profile in standard alam2021; do
    times=""
    for i in 1 2 3 4 5; do
        t0=$(date +%s.%N)
        ./adaptmon score --profile $profile --source-lang en --target-lang fr \
            --sgm-src $D/dev.en-fr.en.sgm --sgm-ref $D/dev.en-fr.fr.sgm \
            --sgm-hyp $D/en-fr.dev.txt.truecased.sgm >/dev/null
        t1=$(date +%s.%N)
        times="$times $(echo "$t1 - $t0" | bc -l)"
    done
    med=$(echo $times | tr ' ' '\n' | sort -n | sed -n 3p)
    rss=$( { /usr/bin/time -f %M ./adaptmon score --profile $profile --source-lang en --target-lang fr \
            --sgm-src $D/dev.en-fr.en.sgm --sgm-ref $D/dev.en-fr.fr.sgm \
            --sgm-hyp $D/en-fr.dev.txt.truecased.sgm >/dev/null; } 2>&1 | tail -1)
    printf -- "- %s: %.3f s, peak RSS %s KiB\n" "$profile" "$med" "$rss"
done
