#!/usr/bin/env bash
# Usage: fuzz/run.sh [SECONDS] [HARNESS...]   (make fuzz; FUZZ_SECONDS=600 make fuzz)
# Builds the harnesses with libFuzzer and the address sanitizer (into .build/fuzz, apart from the
# normal build), then fuzzes each harness (all of fuzz/corpus/* by default) for SECONDS (default 60),
# starting from its corpus in fuzz/corpus/<harness>. Afterwards the inputs that added coverage are
# merged into that corpus, and any crash is saved there as crash-<sha1>, so the test suite replays it
# from then on. Prints libFuzzer's final figures per harness; exits 1 when a harness crashed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
[ $# -gt 0 ] && shift
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=($(ls fuzz/corpus)); fi

swift build --build-path .build/fuzz --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFUZZING --product trifactor-fuzz 2>&1 \
    | grep -v "Cannot export local symbol" >&2
fuzzer=.build/fuzz/debug/trifactor-fuzz
failed=()
for harness in "${harnesses[@]}"; do
    corpus=fuzz/corpus/$harness
    work=.build/fuzz/work/$harness
    mkdir -p "$corpus" "$work"
    echo "== $harness: ${seconds}s from $(ls "$corpus" | wc -l) inputs" >&2
    set +e
    TRIFACTOR_FUZZ_TARGET=$harness "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
        -artifact_prefix="$corpus/crash-" -print_final_stats=1 "$work" "$corpus" >"$work.log" 2>&1
    status=$?
    set -e
    grep -E "^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)|ERROR: |SUMMARY: " "$work.log" >&2 || true
    if [ $status -ne 0 ]; then
        failed+=("$harness")
        echo "!! $harness crashed: see $work.log; the input is in $corpus/crash-*" >&2
    fi
    # Keep only what adds coverage to the committed corpus.
    TRIFACTOR_FUZZ_TARGET=$harness "$fuzzer" -merge=1 "$corpus" "$work" >"$work.merge.log" 2>&1 || true
    echo "   corpus now $(ls "$corpus" | wc -l) inputs" >&2
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: crashes in ${failed[*]}" >&2
    exit 1
fi
