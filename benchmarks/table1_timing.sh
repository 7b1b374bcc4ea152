#!/usr/bin/env bash
# Wall time of the full Table 1 on this machine (issue 15, part 3), with the load average beside
# every step. Fresh fit cache, two fits side by side (--n-jobs 2), one thread per fit.
#
#   bash benchmarks/table1_timing.sh OUTDIR [steps]
#
# steps (default "fair baselines svm cached"): fair = FairLR, LR, FairGP, GP; baselines = Kamiran,
# Agarwal, ZafarFairness, ZafarAccuracy; svm = the RBF SVM; cached = everything again from the cache.
# Each step runs for adult-sex then adult-race, 10 repeats. Writes OUTDIR/timing.tsv (step, set-up,
# seconds, load average before and after) and the sweep CSVs.
set -u
case ${1:-} in -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
out=${1:?OUTDIR}
steps=${2:-"fair baselines svm cached"}
mkdir -p "$out"
export FAIRDASH_CACHE_DIR="$out/cache" FAIRDASH_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
py=${PYTHON:-.venv/bin/python}
tsv="$out/timing.tsv"
[ -f "$tsv" ] || printf 'step\tsetup\tseconds\tload_before\tload_after\tnproc\n' > "$tsv"

models_of() {
  case $1 in
    fair) echo fair-lr,lr,fair-gp,gp ;;
    baselines) echo kamiran,agarwal,zafar-fairness,zafar-accuracy ;;
    svm) echo svm ;;
    cached) echo all ;;
  esac
}

for step in $steps; do
  for setup in adult-sex adult-race; do
    before=$(cut -d' ' -f1-3 /proc/loadavg)
    t0=$(date +%s.%N)
    "$py" -m fairdash sweep --paper "$setup" --models "$(models_of "$step")" --repeats 10 --n-jobs 2 \
      --out "$out/$step-$setup.csv" > "$out/$step-$setup.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    after=$(cut -d' ' -f1-3 /proc/loadavg)
    printf '%s\t%s\t%.1f\t%s\t%s\t%s\n' "$step" "$setup" "$(echo "$t1 - $t0" | bc)" "$before" "$after" "$(nproc --all)" >> "$tsv"
    [ $rc -eq 0 ] || echo "step $step $setup failed (rc $rc), see $out/$step-$setup.log" >&2
  done
done
cat "$tsv"
