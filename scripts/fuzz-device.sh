#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A long fuzz campaign on a many-core machine (the GPU host has 16 cores and no clang): the
# libFuzzer binaries are built here by scripts/fuzz.sh (clang 14, ASan+UBSan) and packed with
#   tar czf .device/fuzz/fuzz.tgz build-fuzz/fuzz_* Tests/Fuzz/corpus Tests/Fuzz/*.dict
# then this script runs there from the repository root: several workers per target share one
# corpus, until RUNS executions per target (default 1e7) or SECONDS_LIMIT seconds. PLAN
# ("target:workers:runs ...") runs a second round for the targets that fell short. It prints
# executions and crashes per target and leaves logs, crash inputs and the corpus under $OUT.
set -u
secs=${SECONDS_LIMIT:-520}
w=/tmp/fz; rm -rf $w; mkdir -p $w && tar xzf .device/fuzz/fuzz.tgz -C $w && { [ -f .device/fuzz/corpus1.tgz ] && tar xzf .device/fuzz/corpus1.tgz -C $w; cd $w; }
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
declare -A workers=([timos_mesh]=3 [timos_opt]=1 [timos_source]=3 [mmc_node]=2 [mmc_elem]=2 [mmc_prop]=1 [mci]=2 [mco]=3 [mesh_build]=5 [mmc_inp]=1 [mmc_json]=1)
declare -A runs=()
if [ -n "${PLAN:-}" ]; then  # "target:workers:runs ..." (a second round for targets short of RUNS)
  workers=()
  for p in $PLAN; do IFS=: read -r t k r <<< "$p"; workers[$t]=$k; runs[$t]=$r; done
fi
mkdir -p art logs
for t in "${!workers[@]}"; do
  k=${workers[$t]}; total=${runs[$t]:-${RUNS:-10000000}}; per=$(( (total + k - 1) / k ))
  case $t in mci|mco) dict=-dict=Tests/Fuzz/mcml.dict;; mmc_json) dict=-dict=Tests/Fuzz/mmc_json.dict;; mesh_build) dict=;; *) dict=-dict=Tests/Fuzz/numbers.dict;; esac
  mkdir -p corpus/$t build-fuzz/corpus/$t
  for i in $(seq 1 $k); do
    ./build-fuzz/fuzz_$t -runs=$per -max_total_time=$secs -timeout=5 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
      $dict -artifact_prefix=art/$t-$i- corpus/$t build-fuzz/corpus/$t Tests/Fuzz/corpus/$t > logs/$t-$i.log 2>&1 &
  done
done
wait
printf '%-14s %12s %8s %8s\n' target executions crashes workers | tee $OUT/fuzz_summary.txt
for t in "${!workers[@]}"; do
  e=$(cat logs/$t-*.log | grep -o 'stat::number_of_executed_units: *[0-9]*' | grep -o '[0-9]*$' | awk '{s += $1} END {print s + 0}')
  c=$(ls art | grep -c "^$t-")
  printf '%-14s %12s %8s %8s\n' $t "$e" "$c" "${workers[$t]}" | tee -a $OUT/fuzz_summary.txt
done
nproc | sed 's/^/cores: /' | tee -a $OUT/fuzz_summary.txt
tar czf $OUT/fuzz_art_logs.tgz art logs 2>/dev/null
tar czf $OUT/fuzz_corpus.tgz corpus 2>/dev/null
