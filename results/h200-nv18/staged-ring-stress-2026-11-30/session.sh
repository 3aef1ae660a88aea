#!/usr/bin/env bash
# On a node of two GPUs: the three thread-ranks' staged ring (StagedGroup.RingOfThreeRanksOnOneNode,
# the three ranks on one GPU, as the suite runs it) in LOOPS loops at once, ROUNDS fresh processes
# each, loop i on GPU i mod 2: the stall seen once in a suite of six tests at once, looked for
# under load. Every run's verdict and time in ring-runs.txt; a failed run's output kept, its
# fault naming what the host memory held beside what the waiting GPU last read. First the
# staged tests once (the fault's message among them).
# Usage: session.sh OUT_DIR [ROUNDS] [LOOPS]
set -uo pipefail
source "$(dirname "$0")/../../../scripts/lib/node-session.sh"
rounds=${2:-40} loops=${3:-4}
session_open session.sh "${1:-}"
session_build session.sh
session_step staged-tests 60 env CUDA_VISIBLE_DEVICES=0 build-gpu/tests/baselines/test_baselines_gpu --gtest_filter='StagedGroup.*'
session_step ring 420 "$(dirname "$0")/ring-loops.sh" "$work" "$rounds" "$loops"
tail -"$((loops + 1))" "$work/ring-runs.txt" >>"$summary"
finish_steps session.sh
