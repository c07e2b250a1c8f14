#!/usr/bin/env bash
# make slurm-test: docs/slurm.md's scripts, as the page prints them, on a
# real one-node Slurm started here (munged, slurmctld, slurmd with their
# configuration and state in a temporary folder). A 4-task array runs the
# smoke config (built-in agents, no GPU); task 2 is requeued mid-run and
# must resume; the merge, submitted with afterok on the array, must equal an
# unsharded run of the same config. Every wait is bounded, and everything
# started is stopped and removed at the end, pass or fail.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
start=$SECONDS

say() { echo "slurm-test: $*" >&2; }

# Every Slurm client here talks to the test's cluster only: nothing of a
# cluster the lane itself may run in (SLURM_CONF, a job's SLURM_* and
# SBATCH_* options) leaks into it.
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SQUEUE|SINFO|SCONTROL)_' || true)

# Debian's packages, when missing (jq compares the records). The versions
# are printed so that a CI log says which Slurm the docs' scripts ran on.
if [ "$(id -u)" != 0 ]; then
  say "slurmd must run as root to start jobs; run make slurm-test as root (CI does)"
  exit 1
fi
need=()
command -v slurmctld >/dev/null 2>&1 || need+=(slurm-wlm)
command -v munged >/dev/null 2>&1 || need+=(munge)
command -v jq >/dev/null 2>&1 || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} (apt-get)"
  timeout 600 apt-get update -qq
  DEBIAN_FRONTEND=noninteractive timeout 900 apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
say "$(slurmctld -V), $(munged --version | head -1)"

make -s build
granite=$repo/bin/granite

work=$(mktemp -d /tmp/granite-slurm.XXXXXX)
chmod 711 "$work" # munged wants its socket reachable
pids=()
cleanup() {
  local rc=$?
  if [ $rc != 0 ] && [ -d "$work/log" ]; then
    SLURM_CONF=$work/slurm.conf timeout 10 scontrol show job 2>/dev/null | grep -oE 'JobId=[^ ]+|JobState=[A-Z_]+|Restarts=[0-9]+|EligibleTime=[^ ]+' | paste - - - - >&2 || true
    for f in "$work"/log/*.log "$work"/jobs/*.out; do
      [ -f "$f" ] || continue
      echo "--- $f (last 30 lines)" >&2
      tail -n 30 "$f" >&2
    done
  fi
  # Jobs still running end through Slurm; the unsharded run and the
  # daemons by their own ids, slurmd first, then the controller, then munge.
  if [ -f "$work/slurm.conf" ]; then
    export SLURM_CONF=$work/slurm.conf
    timeout 15 scancel --full --quiet --user=root 2>/dev/null || true
    timeout 30 bash -c 'while [ -n "$(squeue -h 2>/dev/null)" ]; do sleep 0.5; done' || true
  fi
  [ -z "${whole:-}" ] || kill "$whole" 2>/dev/null || true
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
    timeout 20 tail --pid="${pids[i]}" -f /dev/null 2>/dev/null || kill -9 "${pids[i]}" 2>/dev/null || true
  done
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# wait_for SECONDS WHAT COMMAND...: run COMMAND every half second until it
# succeeds, or fail the lane naming WHAT. The Slurm clients a COMMAND
# calls are bounded themselves (sq), so a wedged daemon cannot hold a
# check past the deadline.
wait_for() {
  local limit=$1 what=$2
  shift 2
  local deadline=$((SECONDS + limit))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      say "timed out after ${limit}s waiting for $what"
      return 1
    fi
    sleep 0.5
  done
}

# sq CLIENT ARGS...: a Slurm client call that gives up after 15 s.
sq() { timeout 15 "$@"; }

mkdir -p "$work"/{munge,ctld,spool,log,jobs,results}
host=$(hostname -s)
# Ports of the test's own, so that a Slurm already on the machine is left alone.
ctld_port=$((17000 + RANDOM % 2000))
slurmd_port=$((ctld_port + 1))

# munge: a key and a socket of the test's own.
mungekey --create --keyfile="$work/munge/munge.key" >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$work/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$work/munge/munge.key"
munged --foreground --force --key-file="$work/munge/munge.key" --socket="$work/munge/munge.sock" \
  --pid-file="$work/munge/munged.pid" --seed-file="$work/munge/seed" \
  --log-file="$work/log/munged.log" >>"$work/log/munged.log" 2>&1 &
pids+=($!)
wait_for 20 "munged's socket" test -S "$work/munge/munge.sock"

cat >"$work/slurm.conf" <<EOF
ClusterName=granitetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/munge.sock
StateSaveLocation=$work/ctld
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/ctld/slurmctld.pid
SlurmdPidFile=$work/spool/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
JobRequeue=1
MinJobAge=600
KillWait=5
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 RealMemory=200000 Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
# Four GPUs by stand-in device files, so that the script's --gres=gpu:1
# is scheduled as written and four tasks run at once.
touch "$work"/gpu{0..3}
echo "NodeName=$host Name=gpu File=$work/gpu[0-3]" >"$work/gres.conf"
export SLURM_CONF=$work/slurm.conf

slurmctld -D -i -f "$SLURM_CONF" >>"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
ctld_up() { sq scontrol ping 2>/dev/null | grep -q "is UP"; }
wait_for 30 "slurmctld to answer" ctld_up
slurmd -D -f "$SLURM_CONF" -N "$host" >>"$work/log/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { [ "$(sq sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; }
wait_for 60 "node $host to be idle in sinfo" node_idle
say "cluster up in $((SECONDS - start))s"

# The scripts as docs/slurm.md prints them: the fenced block after each
# <!-- file: NAME --> marker.
for name in granite-array.sbatch granite-merge.sbatch; do
  awk -v marker="<!-- file: $name -->" '
    $0 == marker { found = 1; next }
    found == 1 && /^```/ { found = 2; next }
    found == 2 && /^```/ { exit }
    found == 2 { print }
  ' docs/slurm.md >"$work/jobs/$name"
  if [ ! -s "$work/jobs/$name" ]; then
    say "docs/slurm.md has no block after <!-- file: $name -->"
    exit 1
  fi
done

# The smoke config, with enough repetitions that a task runs for seconds
# and can be killed mid-run.
sed 's/^repetitions: .*/repetitions: 8/; s/^name: .*/name: slurm-smoke/' specs/experiments/smoke.yaml >"$work/slurm-smoke.yaml"
grep -q '^repetitions: 8$' "$work/slurm-smoke.yaml"

export GRANITE=$granite CONFIG=$work/slurm-smoke.yaml RESULTS=$work/results MODEL_SERVER=none
cd "$work/jobs"
array=$(sq sbatch --parsable granite-array.sbatch)
array=${array%%;*}
say "array job $array submitted"

# The unsharded run to compare with, on the same machine meanwhile.
"$granite" run --config "$CONFIG" --out "$work/whole" >"$work/log/whole.log" 2>&1 &
whole=$!

# Task 2 is killed and requeued once it has recorded some trials but not
# all of them.
journal=$RESULTS/shard-2/trials.jsonl
has_records() { [ -f "$journal" ] && [ "$(wc -l <"$journal")" -ge 10 ]; }
wait_for 120 "task ${array}_2 to record 10 trials" has_records
sq scontrol requeue "${array}_2"
say "task ${array}_2 requeued after $(wc -l <"$journal") records"
# Slurm holds a requeued job back for two minutes (its begin time) and
# then waits for the next scheduling pass; the test starts it at once.
requeued() { sq scontrol show job "${array}_2" | grep -q 'JobState=PENDING'; }
wait_for 60 "task ${array}_2 to be back in the queue" requeued
say "task ${array}_2 pending, $(sq scontrol show job "${array}_2" | grep -oE '(EligibleTime|StartTime)=[^ ]*' | paste -sd ' ') (now $(date +%T)); starting it now"
wait_for 30 "task ${array}_2 to take StartTime=now" sq scontrol update JobId="${array}_2" StartTime=now

merge=$(sq sbatch --parsable --dependency="afterok:$array" granite-merge.sbatch)
merge=${merge%%;*}
say "merge job $merge submitted, after the array"

job_done() {
  local state
  state=$(sq scontrol show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | sort -u)
  [ -n "$state" ] && ! grep -qE 'PENDING|RUNNING|REQUEUED|CONFIGURING|COMPLETING|SUSPENDED' <<<"$state"
}
wait_for 240 "array job $array to end" job_done "$array"
wait_for 120 "merge job $merge to end" job_done "$merge"
whole_done() { ! kill -0 "$whole" 2>/dev/null; }
wait_for 180 "the unsharded run" whole_done
wait "$whole" || {
  say "the unsharded run failed"
  exit 1
}

fail=0
states=$(sq scontrol show job "$array" | grep -o 'JobState=[A-Z_]*' | sort | uniq -c | tr -s ' ')
if [ "$(sq scontrol show job "$array" | grep -c 'JobState=COMPLETED')" != 4 ]; then
  say "the array's tasks ended as:$states; expected 4 COMPLETED"
  fail=1
fi
if ! sq scontrol show job "$merge" | grep -q 'JobState=COMPLETED'; then
  say "the merge job ended as $(sq scontrol show job "$merge" | grep -o 'JobState=[A-Z_]*'); expected COMPLETED"
  fail=1
fi
if [ "$(sq scontrol show job "${array}_2" | grep -o 'Restarts=[0-9]*')" != Restarts=1 ]; then
  say "task ${array}_2: $(sq scontrol show job "${array}_2" | grep -o 'Restarts=[0-9]*'); expected Restarts=1 after the requeue"
  fail=1
fi

# The requeued task's log holds both runs: the first cut off before its
# summary line, the second resuming it with trials recorded before and
# trials run then.
log=$work/jobs/granite-${array}_2.out
summary=$(grep -E '^[0-9]+ trials in shard 2/4: ' "$log" || true)
if [ "$(grep -c . <<<"$summary")" != 2 ] || ! grep -q 'interrupted; finished trials are recorded' "$log" ||
  ! tail -n 1 <<<"$summary" | grep -qE ': [1-9][0-9]* run now, [1-9][0-9]* recorded before'; then
  say "task ${array}_2 was not cut off and then resumed; its summary lines:"
  echo "${summary:-none}" >&2
  fail=1
fi

# Same trials, same verdicts.
verdicts() {
  jq -c '[.trial_id, .stop_reason, .error_class, (.metrics | del(.wall_s, .energy_j))]' "$1" | sort
}
if [ ! -f "$RESULTS/merged/trials.jsonl" ]; then
  say "the merge wrote no $RESULTS/merged/trials.jsonl"
  fail=1
elif ! diff <(verdicts "$work/whole/trials.jsonl") <(verdicts "$RESULTS/merged/trials.jsonl") >"$work/log/verdicts.diff"; then
  say "merged trials differ from the unsharded run's: $(grep -c '^[<>]' "$work/log/verdicts.diff") lines of diff, e.g."
  head -n 4 "$work/log/verdicts.diff" | cut -c1-300 >&2
  fail=1
fi
if [ ! -s "$RESULTS/merged/report/report.md" ]; then
  say "the merge job wrote no report ($RESULTS/merged/report/report.md)"
  fail=1
fi
[ $fail = 0 ] || exit 1
n=$(wc -l <"$RESULTS/merged/trials.jsonl")
say "ok: 4 shards, task 2 requeued and resumed, $n merged trials equal the unsharded run's, report written; $((SECONDS - start))s"
