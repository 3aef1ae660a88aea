# Step bookkeeping for the check scripts (sourced, not run): every step's exit status is recorded
# under its name, and the script ends with a verdict that names each step that failed and an exit
# status that is not 0 when one did.
#
#   source "$(dirname "$0")/lib/steps.sh"     (scripts/lib/steps.sh from the repository root)
#   summary=OUT/summary.txt                   optional: note() and the verdict also go there
#   note "text"                               prints a line (and appends it to $summary)
#   run_step NAME CMD [ARG...]                runs CMD, records its status under NAME, returns it
#   record_step NAME STATUS [DETAIL]          records a status obtained otherwise ("NAME: exit 3 (DETAIL)")
#   finish_steps SCRIPT                       prints "SCRIPT: PASSED" or "SCRIPT: FAILED: a (exit 1), b (exit 2)"
#                                             and exits 0 or 1 (1 where no step was recorded)
# A step records "NAME: ok" or "NAME: FAILED (exit N)" as it ends, so a log cut short still says
# how far the script got.

failed_steps=()
steps_recorded=0

note() {
  if [ -n "${summary:-}" ]; then echo "$*" | tee -a "$summary"; else echo "$*"; fi
}

record_step() {  # NAME STATUS [DETAIL]
  local name=$1 status=$2 detail=${3:-}
  steps_recorded=$((steps_recorded + 1))
  if [ "$status" -eq 0 ]; then
    note "$name: ok${detail:+ ($detail)}"
  else
    failed_steps+=("$name (exit $status)")
    note "$name: FAILED (exit $status)${detail:+ ($detail)}"
  fi
  return "$status"
}

run_step() {  # NAME CMD [ARG...]
  local name=$1 status=0
  shift
  "$@" || status=$?
  record_step "$name" "$status"
}

finish_steps() {  # SCRIPT
  if ((steps_recorded == 0)); then  # a check that ran nothing did not pass
    note "$1: FAILED: no step ran"
    exit 1
  fi
  if ((${#failed_steps[@]} == 0)); then
    note "$1: PASSED"
    exit 0
  fi
  local joined
  joined=$(printf '%s, ' "${failed_steps[@]}")
  note "$1: FAILED: ${joined%, }"
  exit 1
}
