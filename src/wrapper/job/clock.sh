# The wrapper's clocks and naps: epoch seconds (awl_now), a monotonic clock without forks (awl_clock, awl_epoch), and the
# one sleep a trapped signal cuts short (awl_sleep, woken by awl_wake), with the back-off of a wait on someone else
# (awl_hold_nap: dependencies, queue admission). A fragment of wrapper.sh.
# shellcheck shell=sh

awl_now() { awl_t=$(date +%s); }

# awl_clock: sets awl_cs to centiseconds on a monotonic clock, without a fork where /proc/uptime exists (else
# `date +%s`, whole seconds). awl_epoch: sets awl_t to epoch seconds derived from it (the wrapper's start time plus
# the monotonic time since), so the monitor's records never need `date`.
awl_clock() {
  if [ "$awl_up_ok" = 1 ] && { read -r awl_u awl_x </proc/uptime; } 2>/dev/null; then
    awl_cs=$((${awl_u%.*} * 100 + 1${awl_u#*.} - 100))
  else
    awl_now
    awl_cs=$((awl_t * 100))
  fi
}

awl_epoch() { awl_t=$((awl_started_at + (awl_cs - awl_started_cs) / 100)); }

# awl_wake (from a trap: USR1, USR2): ends the nap in progress (its `sleep` child) and makes the next one return at
# once, so a signal that lands just before a nap's `wait` is not slept through.
awl_woke=0 awl_nap_pid=''
# shellcheck disable=SC2317 # called by traps
awl_wake() {
  awl_woke=1
  [ -z "$awl_nap_pid" ] || kill "$awl_nap_pid" 2>/dev/null
}

# awl_sleep SECONDS: one `sleep` child waited for with `wait`, which a trapped signal interrupts (awl_wake then kills
# the child); none when a wake came since the caller last set awl_woke=0. awl_slept: the child's status (1: sleep
# refused SECONDS), 0 when there was none. In the C locale: a quiet job's `sleep` and `mv` are most of its cost, and
# with a UTF-8 locale each loads the locale's files first (1.5 instead of 1.2 ms of CPU for an `mv` here).
awl_slept=0
awl_sleep() {
  awl_slept=0
  [ "$awl_woke" = 0 ] || return 0
  LC_ALL=C sleep "$1" 2>/dev/null &
  awl_nap_pid=$!
  [ "$awl_woke" = 1 ] || { wait "$awl_nap_pid" || awl_slept=$?; }
  if [ "$awl_woke" = 1 ] || [ "$awl_slept" != 0 ]; then
    kill "$awl_nap_pid" 2>/dev/null
    wait "$awl_nap_pid" 2>/dev/null
  fi
  awl_nap_pid=''
}

# awl_hold_nap CAP: one nap of a wait for someone else (a parent's end, a queue's turn), who wakes this wrapper with
# USR1 when something changed (a client's cancel: USR2): awl_hold seconds (AWL_TICK at first), at most CAP and never
# less than AWL_TICK. The next nap is AWL_TICK again after a wake, else twice as long: the back-off alone catches
# what nobody wakes this wrapper for (a killed wrapper's place in line, a parent's wrapper killed).
awl_hold=0
awl_hold_nap() {
  awl_c=$1
  [ "$awl_c" -ge "$AWL_TICK" ] || awl_c=$AWL_TICK
  [ "$awl_hold" -gt 0 ] || awl_hold=$AWL_TICK
  [ "$awl_hold" -le "$awl_c" ] || awl_hold=$awl_c
  awl_sleep "$awl_hold"
  if [ "$awl_woke" = 1 ]; then awl_hold=$AWL_TICK; else awl_hold=$((awl_hold * 2)); fi
  awl_woke=0
}
