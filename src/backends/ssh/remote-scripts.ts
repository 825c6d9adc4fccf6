// The small POSIX sh programs run on SSH hosts. Each is fed to `sh -s` on stdin (so the login shell only ever
// sees `sh -s`, and nothing secret appears in a process list); arguments travel in a quoted `set --` line.
import { shellQuote } from "../../wrapper/protocol.ts";

/** The exec command line for every script. */
export const REMOTE_SHELL_COMMAND = "sh -s";

export function script(body: string, args: readonly string[]): string {
  return `set -- ${args.map(shellQuote).join(" ")}\n${body}`;
}

// Expands remote_job_dir: `~` is the remote home; a relative path is relative to it.
export const ROOT = `r=$1
case $r in "~") r=$HOME ;; "~/"*) r=$HOME/\${r#"~/"} ;; esac
case $r in /*) ;; *) r=$HOME/$r ;; esac
`;

const BOOT = `b=''
[ -r /proc/sys/kernel/random/boot_id ] && read -r b </proc/sys/kernel/random/boot_id
`;

/** Args: remote_job_dir, wrapper file name. Creates root/jobs and root/bin (0700); reports key=value lines. */
export const PREPARE = `${ROOT}umask 077
mkdir -p "$r/jobs" "$r/bin" || { echo "error=cannot create $r/jobs"; exit 3; }
chmod 700 "$r" "$r/jobs" "$r/bin" 2>/dev/null
echo "root=$r"
[ -f "$r/bin/$2" ] && echo "wrapper=present"
${BOOT}echo "boot_id=$b"
`;

/** A heredoc delimiter that does not occur as a line of `text`. */
export function heredocDelimiter(text: string): string {
  const lines = new Set(text.split("\n"));
  for (let i = 0; ; i++) {
    const d = `AWL_END_${Math.random().toString(36).slice(2, 10)}_${i}`;
    if (!lines.has(d)) return d;
  }
}

/**
 * Args: job dir, wrapper path. Writes spec.sh (from a quoted heredoc: taken literally), then starts the wrapper in
 * its own session (setsid; else immune to SIGHUP) with the login shell when it is a POSIX one, else sh. The
 * launcher records the wrapper's pid in wrapper.pid before exec, so a forking setsid cannot mislead us.
 */
export function launchScript(specText: string): string {
  const delim = heredocDelimiter(specText);
  return `d=$1 w=$2
umask 077
mkdir "$d" || { echo "error=cannot create the job directory $d"; exit 3; }
cat >"$d/spec.sh.tmp" <<'${delim}'
${specText.endsWith("\n") ? specText : `${specText}\n`}${delim}
mv -f "$d/spec.sh.tmp" "$d/spec.sh" || { echo "error=cannot write $d/spec.sh"; exit 3; }
case \${SHELL##*/} in sh | dash | bash | ash | ksh | mksh | busybox) s=$SHELL ;; *) s=sh ;; esac
[ -x "$s" ] || s=sh
cd "$HOME" 2>/dev/null || cd /
l='echo "$$" >"$1/wrapper.pid.tmp" && mv -f "$1/wrapper.pid.tmp" "$1/wrapper.pid"; exec "$0" "$2" "$1"'
if command -v setsid >/dev/null 2>&1; then
  setsid "$s" -c "$l" "$s" "$d" "$w" </dev/null >>"$d/wrapper.log" 2>&1 &
else
  (trap '' HUP; exec "$s" -c "$l" "$s" "$d" "$w") </dev/null >>"$d/wrapper.log" 2>&1 &
fi
i=0
while [ ! -s "$d/wrapper.pid" ] && [ $i -lt 200 ]; do
  sleep 0.02 2>/dev/null || sleep 1
  i=$((i + 1))
done
p=''
[ -r "$d/wrapper.pid" ] && read -r p <"$d/wrapper.pid"
[ -n "$p" ] || { echo "error=the wrapper did not start (see $d/wrapper.log)"; exit 4; }
echo "wrapper_pid=$p"
f22() { set -- \${1##*") "}; [ $# -ge 20 ] && shift 19 && echo "$1"; }
[ -r "/proc/$p/stat" ] && read -r x <"/proc/$p/stat" && echo "proc_start=$(f22 "$x")"
${BOOT}echo "boot_id=$b"
echo "shell=$s"
`;
}

/**
 * Args: a jobs directory to scan ('' for none), then job dirs. For each asked dir, and each scanned dir without an
 * exit record: `@@job DIR`, `alive=0|1 pid= start=` (checked before the records are read, so a wrapper that exits
 * meanwhile leaves its exit record visible), then `@@file NAME` sections with the record texts (started, heartbeat,
 * exit, and a queued job's place in line, `queued`).
 */
export const OBSERVE = `${BOOT}echo "boot=$b"
f22() { set -- \${1##*") "}; [ $# -ge 20 ] && shift 19 && echo "$1"; }
obs() {
  d=$1
  printf '\\n@@job %s\\n' "$d"
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
      if [ -r "/proc/$p/stat" ] && read -r x <"/proc/$p/stat"; then
        st=\${x##*") "}
        case $st in Z*) a=0 ;; *) s=$(f22 "$x") ;; esac
      fi
    fi
    echo "alive=$a pid=$p start=$s"
  fi
  for f in started heartbeat exit queued; do
    if [ -f "$d/$f" ]; then printf '\\n@@file %s\\n' "$f"; cat "$d/$f"; fi
  done
}
scan=$1
shift
for d in "$@"; do obs "$d"; done
if [ -n "$scan" ]; then
  for d in "$scan"/job_*; do [ -d "$d" ] && [ ! -f "$d/exit" ] && obs "$d"; done
fi
exit 0
`;

/**
 * Args: job dir, grace seconds, queue dir ('' when the job never queued). Persists the cancel intent, takes a waiting
 * job out of line (its wrapper then never starts the command), then TERMs the group while the wrapper still lives.
 */
export const CANCEL = `d=$1
[ -d "$d" ] || exit 0
umask 077
printf '%s\\n' "$2" >"$d/cancel.tmp" && mv -f "$d/cancel.tmp" "$d/cancel"
[ -z "$3" ] || rm -f "$3/waiting/"*".\${d##*/}"
[ -f "$d/exit" ] && exit 0
w='' pid='' pgid=''
[ -r "$d/wrapper.pid" ] && read -r w <"$d/wrapper.pid"
[ -n "$w" ] && ! kill -0 "$w" 2>/dev/null && exit 0
[ -r "$d/started" ] || exit 0
while IFS='=' read -r k v; do case $k in pid) pid=$v ;; pgid) pgid=$v ;; esac; done <"$d/started"
if [ -n "$pgid" ]; then kill -TERM -"$pgid" 2>/dev/null; elif [ -n "$pid" ]; then kill -TERM "$pid" 2>/dev/null; fi
exit 0
`;

/**
 * Args: job dir, stream, max bytes, mode (tail|full). First line: `head_file prev live dropped` sizes; then for
 * `full` with dropped bytes, exactly min(head_file, dropped, max) head bytes; then up to max (or more, if the live
 * file grows meanwhile) trailing bytes of prev + live.
 */
export const READ_LOG = `d=$1 s=$2 n=$3
sz() { set -- $(LC_ALL=C ls -ln "$1" 2>/dev/null); echo "\${5:-0}"; }
h=$(sz "$d/$s.head") p=$(sz "$d/$s.prev") l=$(sz "$d/$s") dr=0
[ -r "$d/$s.dropped" ] && read -r dr <"$d/$s.dropped"
dr=\${dr:-0}
echo "$h $p $l $dr"
if [ "$4" = full ] && [ "$dr" -gt 0 ]; then
  hb=$h
  [ "$dr" -lt "$hb" ] && hb=$dr
  [ "$n" -lt "$hb" ] && hb=$n
  [ "$hb" -gt 0 ] && head -c "$hb" "$d/$s.head"
fi
if [ "$l" -ge "$n" ]; then
  tail -c "$n" "$d/$s"
else
  [ "$p" -gt 0 ] && tail -c $((n - l)) "$d/$s.prev"
  [ "$l" -gt 0 ] && cat "$d/$s"
fi
exit 0
`;

/**
 * Args: cwd, then patterns. Per pattern `P`; per file `F<TAB>size<TAB>mtime<TAB>sha256<TAB>realpath`, or
 * `O<TAB>realpath` when it resolves outside the cwd; `E<TAB>why` when the cwd itself is unusable.
 */
export const ARTIFACTS = `cd "$HOME" 2>/dev/null
cd "$1" 2>/dev/null || { printf 'E\\tcannot enter %s\\n' "$1"; exit 0; }
shift
base=$(pwd -P)
if command -v sha256sum >/dev/null 2>&1; then sha() { sha256sum <"$1" | cut -c1-64; }
elif command -v shasum >/dev/null 2>&1; then sha() { shasum -a 256 <"$1" | cut -c1-64; }
elif command -v openssl >/dev/null 2>&1; then sha() { openssl dgst -sha256 <"$1" | sed 's/^.*= *//'; }
elif command -v busybox >/dev/null 2>&1; then sha() { busybox sha256sum <"$1" | cut -c1-64; }
else sha() { echo -; }
fi
real() { realpath "$1" 2>/dev/null || readlink -f "$1" 2>/dev/null || echo "$base/$1"; }
one() {
  rp=$(real "$1")
  case $rp in "$base"/*) ;; *) printf 'O\\t%s\\n' "$rp"; return ;; esac
  [ -f "$rp" ] || return
  sz=$(wc -c <"$rp")
  mt=$(date -r "$rp" +%s 2>/dev/null || stat -c %Y "$rp" 2>/dev/null)
  printf 'F\\t%s\\t%s\\t%s\\t%s\\n' $((sz)) "$mt" "$(sha "$rp")" "$rp"
}
IFS=''
for pat in "$@"; do
  echo P
  for f in $pat; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    if [ -d "$f" ] && [ ! -L "$f" ]; then
      find "$f" -type f | while IFS= read -r g; do one "$g"; done
    else
      one "$f"
    fi
  done
done
`;

/** Args: file path, max bytes. The file's first max+1 bytes (the caller tells "too big" from the length). */
export const READ_FILE = `head -c $(($2 + 1)) "$1"`;

/** Args: job dir. Removes it (gc), refusing anything that is not a job directory. */
export const REMOVE = `case $1 in */jobs/job_*) rm -rf "$1" ;; *) echo "refusing to remove $1" >&2; exit 2 ;; esac`;

/**
 * Args: interval (decimal seconds), lifetime (s), then job dirs (prefixed `+` to watch output sizes too). Prints
 * `c INDEX SIGNATURE` whenever a job's lifecycle files (started, exit, cancel, queued) appear or go, all of them once at start,
 * and `.` every tick: when the client is gone the write fails and the loop ends instead of lingering.
 */
export const WATCH = `iv=$1 life=$2
shift 2
end=$(($(date +%s) + life))
first=1
while :; do
  i=0
  for e in "$@"; do
    i=$((i + 1))
    d=\${e#+}
    g=''
    [ -f "$d/started" ] && g=\${g}s
    [ -f "$d/exit" ] && g=\${g}x
    [ -f "$d/cancel" ] && g=\${g}c
    [ -f "$d/queued" ] && g=\${g}q
    [ -d "$d" ] || g=\${g}m
    [ "$e" != "$d" ] && g="$g $(LC_ALL=C ls -ln "$d/stdout" "$d/stderr" 2>/dev/null | while read -r a b c x z y; do printf '%s.' "$z"; done)"
    eval "o=\\\${s_$i-}"
    if [ "$first" = 1 ] || [ "$g" != "$o" ]; then
      echo "c $i $g" || exit 0
      eval "s_$i=\\$g"
    fi
  done
  first=0
  echo . || exit 0
  [ "$(date +%s)" -lt "$end" ] || exit 0
  sleep "$iv" 2>/dev/null || sleep 1
done
`;
