# The wrapper's own writes and sizes: its log lines (awl_log), records written atomically (awl_put), and the sizes of
# the watched files (awl_stat, awl_size). A fragment of wrapper.sh (spliced in by src/wrapper/shell-text.ts).
# shellcheck shell=sh
awl_log() { printf 'awaitless wrapper: %s\n' "$*" >&2; }

# awl_put FILE LINE... : write lines to FILE atomically: FILE.tmp made fresh with noclobber (O_EXCL, so no symlink
# is followed, dangling or not), then renamed over FILE unless FILE is a symlink or a directory (`mv` in the C
# locale, as awl_sleep's `sleep`: a heartbeat is a quiet job's one other process).
awl_put() {
  awl_f=$1
  shift
  # Tested first: a heartbeat costs no extra process when nothing is left over.
  if [ -e "$awl_f.tmp" ] || [ -h "$awl_f.tmp" ]; then rm -f "$awl_f.tmp"; fi
  set -C
  printf '%s\n' "$@" >"$awl_f.tmp"
  awl_rc=$?
  set +C
  [ "$awl_rc" = 0 ] || return 1
  if [ -h "$awl_f" ] || [ -d "$awl_f" ]; then
    rm -f "$awl_f.tmp"
    awl_log "$awl_f is a symlink or a directory; not writing through it"
    return 1
  fi
  LC_ALL=C mv -f "$awl_f.tmp" "$awl_f"
}

# The watched files (awl_sizes reads their lines), split on the spaces where they are listed.
awl_watched='stdout stderr progress stdout.prev stderr.prev'

# awl_list_sizes FILE [background]: the `ls -ln` listing of the watched files, into FILE; with `background` it runs
# beside the caller (awl_ls_pid), as one process: a function or a group put in the background is a subshell, which
# would fork again for `ls` (1.8 ms more on a quick job's end). stderr is redirected first, so that a FILE that
# cannot be made is not said in the wrapper's log either.
# shellcheck disable=SC2086 # awl_watched: fixed names without patterns, one word each
awl_list_sizes() {
  if [ "${2-}" = background ]; then
    LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln $awl_watched 2>/dev/null >"$1" &
    awl_ls_pid=$!
  else
    LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln $awl_watched 2>/dev/null >"$1"
  fi
}

# awl_stat: sizes of the watched files, one `ls` for all (missing files count 0). Its listing goes through the file
# monitor.ls rather than a command substitution (see awl_monitor, job/monitor.sh, on bash's traps); with no room for that file (a
# full disk), through a command substitution after all. A listing started already in the background (awl_ls_pid,
# into exit.ls: awl_job_end) is waited for and read instead.
awl_ls_pid=''
awl_stat() {
  sz_out=0 sz_err=0 sz_prog=0 sz_outp=0 sz_errp=0 awl_seen=0
  if [ -n "$awl_ls_pid" ]; then
    wait "$awl_ls_pid"
    awl_ls_pid=''
    { awl_sizes <exit.ls; } 2>/dev/null
    [ "$awl_seen" = 0 ] || return 0
  fi
  awl_list_sizes monitor.ls
  { awl_sizes <monitor.ls; } 2>/dev/null
  [ "$awl_seen" = 0 ] || return 0
  # shellcheck disable=SC2086 # as in awl_list_sizes
  awl_ls=$(LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln $awl_watched 2>/dev/null)
  awl_sizes <<EOF
$awl_ls
EOF
}

# awl_sizes: reads an `ls -ln` listing of the watched files on stdin into sz_*.
awl_sizes() {
  while read -r awl_x awl_x awl_x awl_x awl_sz awl_rest; do
    case $awl_rest in
    *' stdout') sz_out=$awl_sz awl_seen=1 ;;
    *' stderr') sz_err=$awl_sz ;;
    *' progress') sz_prog=$awl_sz ;;
    *' stdout.prev') sz_outp=$awl_sz ;;
    *' stderr.prev') sz_errp=$awl_sz ;;
    esac
  done
}

# awl_size FILE: sets awl_sz to its size in bytes.
awl_size() {
  # shellcheck disable=SC2046 # the listing's fields, split
  set -- $(LC_ALL=C BLOCK_SIZE=1 LS_BLOCK_SIZE=1 ls -ln "$1" 2>/dev/null)
  awl_sz=${5:-0}
}

