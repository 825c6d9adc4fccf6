# Host program `observe`: Args: a jobs directory to scan ('' for none), then job dirs.
# Output (parsed by parseObserveReport, src/backends/ssh/ssh-observe.ts; test/unit/host-programs.test.ts runs both):
#   boot=BOOT_ID
# then for each asked dir, and each scanned dir without an exit record:
#   @@job DIR
#   missing=1                       (no such directory; nothing else follows for it)
#   alive=0|1 pid=PID start=START   (checked before the records are read, so a wrapper that exits meanwhile leaves
#                                    its exit record visible; start: field 22 of /proc/PID/stat, '' when unknown)
#   command_alive=0|1               (only with an exit record while the wrapper is alive: is the command's own
#                                    process, started's pid with its pid_start, still running? reconcile rule 2a)
#   @@file NAME                     then the record's text, for each of started, heartbeat, exit, queued, leftovers
#                                    present
# shellcheck shell=sh
# awaitless:include prelude.sh
awl_read_boot_id
echo "boot=$awl_boot_id"
obs() {
  d=$1
  printf '\n@@job %s\n' "$d"
  if [ ! -d "$d" ]; then echo missing=1; return; fi
  p=''
  [ -r "$d/wrapper.pid" ] && read -r p <"$d/wrapper.pid"
  if [ -z "$p" ] && [ -r "$d/started" ]; then
    while IFS='=' read -r k v; do [ "$k" = wrapper_pid ] && p=$v; done <"$d/started"
  fi
  if [ -n "$p" ]; then
    a=0 s=''
    if kill -0 "$p" 2>/dev/null; then
      a=1
      if awl_proc_stat "$p"; then
        case $awl_st in Z) a=0 ;; *) s=$awl_start ;; esac
      fi
    fi
    echo "alive=$a pid=$p start=$s"
    if [ "$a" = 1 ] && [ -f "$d/exit" ] && [ -r "$d/started" ]; then
      c='' cs=''
      while IFS='=' read -r k v; do
        case $k in
        pid) c=$v ;;
        pid_start) cs=$v ;;
        esac
      done <"$d/started"
      ca=0
      case $c in '' | *[!0-9]*) ;; *) awl_pid_alive "$c" "$cs" && ca=1 ;; esac
      echo "command_alive=$ca"
    fi
  fi
  for f in started heartbeat exit queued leftovers; do
    if [ -f "$d/$f" ]; then printf '\n@@file %s\n' "$f"; cat "$d/$f"; fi
  done
}
scan=$1
shift
for d in "$@"; do obs "$d"; done
if [ -n "$scan" ]; then
  for d in "$scan"/job_*; do [ -d "$d" ] && [ ! -f "$d/exit" ] && obs "$d"; done
fi
exit 0
