# slurm.sh -- a private one-node Slurm cluster on this machine, for tests
# of what runs under a batch system. Everything lives in a fresh folder:
# its own munge key and munged socket, a slurm.conf with free ports of its
# own, the state, spool, pid and log files; SLURM_CONF points sbatch,
# squeue and scontrol at it, so a cluster already on the machine is never
# seen nor touched. Sourced after tap.sh, with 'slurm_name' naming the test:
#
#   tap_name=slurm; . "${srcdir:-.}/tests/lib/tap.sh"
#   slurm_name=slurm; . "${srcdir:-.}/tests/lib/slurm.sh"
#   slurm_start              # or the test skips, saying why
#   sbatch --wait job.sh
#
# Where the cluster cannot be had (a binary missing, munged or a Slurm
# daemon that does not start, a node that never comes up idle) the test
# prints a skipped plan saying which, with the end of that daemon's log.
# At exit, jobs still queued are cancelled, slurmd, slurmctld and munged
# are stopped (killed if they do not end in time), and the folder and
# tap.sh's 'tmp' are removed. It sets SLURM_DIR, SLURM_CONF, SLURM_NODE.
#
# By hand, from the source tree: a shell that sees the cluster (SLURM_CONF
# is exported to it); leaving it stops the cluster and removes its folder.
#
#   sh -c '. tests/lib/slurm.sh; slurm_start; echo "SLURM_CONF=$SLURM_CONF"; bash -i'

# The daemons live in sbin, off a user's PATH.
PATH=$PATH:/usr/sbin:/sbin
# The socket's path must fit in a sockaddr_un, so the folder is short.
SLURM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/slurm-${slurm_name:-test}.XXXXXX") || exit 1
[ ${#SLURM_DIR} -gt 80 ] && { rmdir "$SLURM_DIR"; SLURM_DIR=$(mktemp -d /tmp/slurm.XXXXXX) || exit 1; }
# Nothing from the caller's environment (a job's, on a real cluster) may
# point Slurm's commands elsewhere or change what they print.
for v in $(env | sed -n 's/^\(SLURM_[A-Za-z0-9_]*\|SBATCH_[A-Za-z0-9_]*\|SQUEUE_[A-Za-z0-9_]*\|SINFO_[A-Za-z0-9_]*\)=.*/\1/p'); do
  unset "$v"
done
SLURM_CONF=$SLURM_DIR/slurm.conf
export SLURM_CONF
slurm_munged= slurm_ctld= slurm_slurmd=

# slurm_skip WHY [LOG]: the test skipped, LOG's last lines as comments.
slurm_skip() {
  [ -n "${2:-}" ] && [ -f "$2" ] && tail -n 8 "$2" | sed 's/^/# /'
  skip_all "no Slurm cluster: $1"
}

# slurm_port: a TCP port nothing listens on, nor connects from.
slurm_port() {
  while :; do
    p=$(( $(od -An -N2 -tu2 /dev/urandom) % 30000 + 20000 ))
    hex=$(printf ':%04X ' "$p")
    cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -q "$hex" || { echo "$p"; return; }
  done
}

# slurm_wait SECONDS PID COMMAND...: until COMMAND succeeds, polling;
# fails at the deadline, or at once when the process PID has ended.
slurm_wait() {
  t=$(( $1 * 10 )) pid=$2; shift 2
  while [ "$t" -gt 0 ]; do
    "$@" >/dev/null 2>&1 && return 0
    alive "$pid" || return 1
    sleep 0.1
    t=$((t - 1))
  done
  return 1
}
alive() { kill -0 "$1" 2>/dev/null; }
dead() { ! alive "$1"; }
# why PID SECONDS WHAT: how a daemon failed, for the skip message.
why() { if alive "$1"; then echo "$3 within $2 s"; else echo "ended at start"; fi; }
munge_up() { munge -S "$SLURM_DIR/munge.socket" -n </dev/null | unmunge -S "$SLURM_DIR/munge.socket"; }
node_idle() { scontrol show node "$SLURM_NODE" 2>/dev/null | grep -q 'State=IDLE'; }

slurm_start() {
  for b in munged munge unmunge slurmctld slurmd sbatch squeue scontrol scancel; do
    have $b || slurm_skip "$b is not installed (Debian packages slurm-wlm and munge)"
  done
  d=$SLURM_DIR
  mkdir -p "$d/state" "$d/spool" || exit 1
  chmod 700 "$d"
  # munge: a key of its own, its socket in the folder.
  dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 2>/dev/null && chmod 400 "$d/munge.key"
  munged -F --force --socket="$d/munge.socket" --key-file="$d/munge.key" --pid-file="$d/munged.pid" \
    --log-file="$d/munged.log" --seed-file="$d/munge.seed" >"$d/munged.out" 2>&1 &
  slurm_munged=$!
  slurm_wait 10 $slurm_munged munge_up || { cat "$d/munged.out" >>"$d/munged.log"; slurm_skip "munged $(why $slurm_munged 10 "does not answer")" "$d/munged.log"; }

  # The daemons run as the caller, root or not (jobs can then run as the
  # caller only, which is all a test submits). The node as slurmd sees it,
  # under this machine's short name, reached on the loopback address, so
  # that no name needs resolving.
  SLURM_NODE=$(hostname -s)
  hw=$(timeout 10 slurmd -C 2>/dev/null | head -n 1 | sed 's/^NodeName=[^ ]* //')
  case $hw in *CPUs=*RealMemory=*) ;; *) slurm_skip "slurmd -C does not describe this machine: $hw" ;; esac
  ctld_port=$(slurm_port)
  slurmd_port=$(slurm_port)
  while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(slurm_port); done
  cat >"$SLURM_CONF" <<EOF
ClusterName=tielab
SlurmctldHost=$SLURM_NODE(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.socket
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/slurmctld.log
SlurmdLogFile=$d/slurmd.log
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
# sbatch --wait polls every 2 s only while that is under half of this (its
# sleeps grow to 8 s and 32 s otherwise); ended jobs are still kept for
# longer than a poll, so that none is purged before it is seen done.
MinJobAge=4
MailProg=/bin/true
NodeName=$SLURM_NODE NodeAddr=127.0.0.1 $hw State=UNKNOWN
PartitionName=debug Nodes=$SLURM_NODE Default=YES MaxTime=INFINITE State=UP
EOF
  : >"$d/plugstack.conf"

  slurmctld -D -i -f "$SLURM_CONF" >"$d/slurmctld.out" 2>&1 &
  slurm_ctld=$!
  if ! slurm_wait 30 $slurm_ctld scontrol ping; then
    cat "$d/slurmctld.out" >>"$d/slurmctld.log"
    slurm_skip "slurmctld $(why $slurm_ctld 30 "does not answer scontrol ping")" "$d/slurmctld.log"
  fi
  slurmd -D -f "$SLURM_CONF" -N "$SLURM_NODE" >"$d/slurmd.out" 2>&1 &
  slurm_slurmd=$!
  if ! slurm_wait 30 $slurm_slurmd node_idle; then
    cat "$d/slurmd.out" >>"$d/slurmd.log"
    scontrol show node "$SLURM_NODE" 2>&1 | grep -E 'State=|Reason=' >>"$d/slurmd.log"
    slurm_skip "slurmd $(why $slurm_slurmd 30 "does not bring node $SLURM_NODE up idle")" "$d/slurmd.log"
  fi
}

# slurm_kill PID: TERM, then KILL after 10 s.
slurm_kill() {
  [ -n "$1" ] && alive "$1" || return 0
  kill -TERM "$1" 2>/dev/null
  slurm_wait 10 $$ dead "$1" || kill -KILL "$1" 2>/dev/null
  wait "$1" 2>/dev/null
}
jobs_gone() { [ -z "$(squeue -h -o %i 2>/dev/null)" ]; }
slurm_stop() {
  if [ -n "$slurm_ctld" ] && alive "$slurm_ctld"; then
    scancel --quiet --user="$(id -un)" >/dev/null 2>&1
    slurm_wait 10 $$ jobs_gone
  fi
  slurm_kill "$slurm_slurmd"
  slurm_kill "$slurm_ctld"
  slurm_kill "$slurm_munged"
  slurm_slurmd= slurm_ctld= slurm_munged=
}
trap 'slurm_stop; rm -rf "$SLURM_DIR" ${tmp:+"$tmp"}' EXIT
# A signal ends the test through its exit, so the cluster never outlives it.
trap 'exit 1' INT TERM HUP PIPE
