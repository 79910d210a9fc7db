#!/usr/bin/env bash
# The package as a user gets it: build the wheel and sdist once, check their metadata with
# twine, then for each Python (default 3.13 and 3.11: both TensorFlow stacks) install the
# wheel by its distribution name into a fresh venv under a temporary folder, run `pip check`,
# and run a tiny version of the README's tour with the installed programs (t2t-datagen,
# t2t-trainer for 20 steps, t2t-decoder on a 3-line file, t2t.load from Python). Each venv is deleted after its
# stack, the temporary folder at the end (also on failure).
#
# The stacks run side by side: most of an install is waiting on files and the index, and
# each program is one busy Python process, so two stacks on 2 cores take little longer than
# one. Each stack's lines are printed when it ends, with the time of each phase.
#
#   scripts/check_package.sh PYTHON       # PYTHON has the release extra (build, twine);
#                                         # `make check-package` passes the venv's
#   CHECK_PYTHONS="3.12" scripts/check_package.sh .venv/bin/python   # other stacks
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_PYTHON=${1:?usage: scripts/check_package.sh PYTHON (a Python with build and twine)}
PYTHONS=${CHECK_PYTHONS:-3.13 3.11}
DIST_NAME=t2t-toolkit
PROBLEM=algorithmic_reverse_binary40_test
MODEL_FLAGS=(--problem=$PROBLEM --model=transformer --hparams_set=transformer_tiny)
export TF_CPP_MIN_LOG_LEVEL=3

work=$(mktemp -d "${TMPDIR:-/tmp}/t2t_check_package.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
say() { echo "check_package: $*"; }

say "building the sdist and wheel into $work/dist"
"$BUILD_PYTHON" -m build --sdist --wheel --outdir "$work/dist" . >"$work/build.log" 2>&1 \
  || { tail -40 "$work/build.log"; exit 1; }
"$BUILD_PYTHON" -m twine check --strict "$work"/dist/*
wheel=$(ls "$work"/dist/t2t_toolkit-*-py3-none-any.whl)
version=${wheel##*/t2t_toolkit-}
version=${version%%-*}
ls "$work/dist/t2t_toolkit-$version.tar.gz" >/dev/null
say "built and checked in $((SECONDS - start)) s"

# One stack: fresh venv, install by name, pip check, the tour. Prints its lines; exit != 0
# on the first failure, with the failing step's output.
check_stack() {
  local wanted=$1 python venv tour phase_start stack_start=$SECONDS
  python=$(bash scripts/find_python.sh "$wanted") \
    || { say "no Python $wanted found (on PATH or in pyenv)"; return 1; }
  venv="$work/venv-$wanted"
  tour="$work/tour-$wanted"
  phase() {
    local cpu
    times >"$work/times-$wanted"  # line 2: user and system CPU of the stack's programs
    cpu=$(tail -1 "$work/times-$wanted")
    say "Python $wanted: $1 in $((SECONDS - phase_start)) s (CPU of its programs so far:" \
      "${cpu% *} user, ${cpu#* } sys)"
    phase_start=$SECONDS
  }
  phase_start=$SECONDS
  "$python" -m venv "$venv"
  # --no-compile: byte-compiling all of TensorFlow at install time costs more than the
  # modules the tour imports compile on first use.
  "$venv/bin/python" -m pip install -q --no-compile --find-links "$work/dist" \
    "$DIST_NAME==$version" 2> >(grep -v "^WARNING: Location" >&2)
  "$venv/bin/python" -m pip check
  phase "fresh venv, pip install $DIST_NAME==$version (the built wheel), pip check clean"
  mkdir -p "$tour"
  # The wheel, not this clone: the installed t2t lives in the venv.
  (cd "$tour" && "$venv/bin/python" -c '
import sys, t2t, importlib.metadata as m
assert t2t.__file__.startswith(sys.prefix), t2t.__file__
print("check_package: import t2t from", t2t.__file__.rsplit("/", 2)[0],
      "| t2t-toolkit", m.version("t2t-toolkit"))')
  # The README's tour, small: as a user runs it, with the venv activated (check_stack runs
  # in a process of its own, so the cd and the activation stay there).
  cd "$tour"
  # shellcheck disable=SC1091
  . "$venv/bin/activate"
  t2t-datagen --problem=$PROBLEM --data_dir=data --tmp_dir=tmp 2>datagen.log \
    || { tail -20 datagen.log; return 1; }
  phase "t2t-datagen"
  t2t-trainer "${MODEL_FLAGS[@]}" --data_dir=data --output_dir=train --train_steps=20 \
    --schedule=train --random_seed=1 --hparams=batch_size=512 2>trainer.log \
    || { tail -20 trainer.log; return 1; }
  [ -f train/model.ckpt-20.index ] || { say "no model.ckpt-20"; return 1; }
  phase "t2t-trainer, 20 steps"
  printf '1 0 0 1 1\n0 1\n1 1 1 0 1 0\n' >inputs.txt
  # The training folder holds what decoding needs: no --problem, --model or --data_dir.
  t2t-decoder --output_dir=train --decode_hparams='beam_size=2,alpha=0.6' \
    --decode_from_file=inputs.txt --decode_to_file=decodes.txt >decoder.log 2>&1 \
    || { tail -20 decoder.log; return 1; }
  lines=$(wc -l <decodes.txt)
  [ "$lines" -eq 3 ] || { say "decodes.txt has $lines lines, not 3"; return 1; }
  phase "t2t-decoder, 3 lines"
  python -c 'import t2t; print("check_package: t2t.load decodes", t2t.load("train").decode(
    ["1 0 0 1 1", "0 1"], beam_size=2))' 2>load.log || { tail -20 load.log; return 1; }
  phase "t2t.load(train).decode, 2 lines"
  deactivate
  cd "$work"
  rm -rf "$venv" "$tour"
  say "Python $wanted: done in $((SECONDS - stack_start)) s"
}

pids=()
for wanted in $PYTHONS; do
  say "Python $wanted: a fresh venv, the wheel, the tour (log: printed when it ends)"
  check_stack "$wanted" >"$work/stack-$wanted.log" 2>&1 &
  pids+=($!)
done
failed=0
set -- $PYTHONS
for pid in "${pids[@]}"; do
  wanted=$1
  shift
  if ! wait "$pid"; then
    failed=1
    say "Python $wanted: FAILED"
  fi
  cat "$work/stack-$wanted.log"
done
[ "$failed" = 0 ] || exit 1
say "done in $((SECONDS - start)) s"
