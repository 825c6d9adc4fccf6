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

/**
 * Shell functions: `trusted DIR` succeeds when DIR is owned by us or root and not group/other-writable unless
 * sticky, else prints `error=` and `fix=` lines; `chain DIR` checks DIR (a physical path) and every ancestor.
 * Parses `ls -ldn` (POSIX; busybox has it), so hosts without GNU stat work too.
 */
export const TRUST = `me=$(id -u)
trusted() {
  x=$(ls -ldn "$1" 2>/dev/null) || { echo "error=cannot inspect $1"; return 1; }
  set -f
  set -- "$1" $x
  set +f
  case $4 in "$me" | 0) ;; *)
    echo "error=$1 is owned by another user (uid $4), so they could replace what awaitless runs there"
    echo "fix=choose a directory you own"
    return 1 ;;
  esac
  case $2 in
  ?????????[tT]*) ;;
  ?????w* | ????????w*)
    echo "error=$1 is writable by other users or its group and not sticky, so they could replace what awaitless runs there"
    echo "fix=run chmod go-w $1 on the host, or choose a directory you own"
    return 1 ;;
  esac
}
chain() {
  c=$1
  while :; do
    trusted "$c" || return 1
    [ "$c" = / ] && return 0
    c=\${c%/*}
    [ -n "$c" ] || c=/
  done
}
`;

/**
 * Args: remote_job_dir, wrapper file name. Checks the nearest existing ancestor (physically) and every one above it
 * (TRUST), creates root/jobs and root/bin (0700), resolves the root to its physical path (no link on the way can be
 * swapped later) and checks it, jobs/ and bin/; reports key=value lines (`untrusted=1` with error= and fix=).
 */
export const PREPARE = `${ROOT}umask 077
${TRUST}a=$r
while [ ! -d "$a" ]; do a=\${a%/*}; [ -n "$a" ] || a=/; done
a=$(cd "$a" && pwd -P) || { echo "error=cannot enter $a"; exit 3; }
chain "$a" || { echo untrusted=1; exit 5; }
mkdir -p "$r/jobs" "$r/bin" || { echo "error=cannot create $r/jobs"; exit 3; }
r=$(cd "$r" && pwd -P) || { echo "error=cannot enter $r"; exit 3; }
{ chain "$r" && trusted "$r/jobs" && trusted "$r/bin"; } || { echo untrusted=1; exit 5; }
chmod 700 "$r" "$r/jobs" "$r/bin" || { echo "error=chmod 700 failed on $r, $r/jobs or $r/bin"; exit 3; }
echo "root=$r"
[ -f "$r/bin/$2" ] && echo "wrapper=present"
${BOOT}echo "boot_id=$b"
`;

/**
 * Sets `sum` to the SHA-256 (hex) of file $w with sha256sum, shasum, openssl or busybox, whichever the host has
 * ('' when the file cannot be read); with none of them, reports `nohash=1` and exits.
 */
const WRAPPER_SUM = `sum=''
if command -v sha256sum >/dev/null 2>&1; then sum=$(sha256sum <"$w" 2>/dev/null) && sum=\${sum%% *}
elif command -v shasum >/dev/null 2>&1; then sum=$(shasum -a 256 <"$w" 2>/dev/null) && sum=\${sum%% *}
elif command -v openssl >/dev/null 2>&1; then sum=$(openssl dgst -sha256 <"$w" 2>/dev/null) && sum=\${sum##* }
elif command -v busybox >/dev/null 2>&1; then sum=$(busybox sha256sum <"$w" 2>/dev/null) && sum=\${sum%% *}
else printf '%s\\n' "error=no sha256sum, shasum, openssl or busybox on the host to check the wrapper with" nohash=1; exit 3
fi
`;

/** Below this much free space on the host a launch is refused before it writes anything (as locally). */
const LAUNCH_HEADROOM_KIB = 64;

// free DIR: sets avail_kib and size_kib of DIR's file system ('' when df cannot tell).
const FREE_SPACE = `free() {
  avail_kib='' size_kib=''
  set -- $(df -Pk "$1" 2>/dev/null | tail -n 1)
  case \${4:-x} in *[!0-9]*) ;; *) avail_kib=$4 size_kib=$2 ;; esac
}
`;

/** A heredoc delimiter that does not occur as a line of `text`. */
export function heredocDelimiter(text: string): string {
  const lines = new Set(text.split("\n"));
  for (let i = 0; ; i++) {
    const d = `AWL_END_${Math.random().toString(36).slice(2, 10)}_${i}`;
    if (!lines.has(d)) return d;
  }
}

/** Arg: a job directory. `present=1` when it exists, `present=0` when it certainly does not, else `present=unknown`. */
export const JOB_DIR_PRESENT = `d=$1 p=\${1%/*}
if [ -e "$d" ] || [ -h "$d" ]; then echo present=1
elif [ -d "$p" ] && [ -x "$p" ]; then echo present=0
else echo present=unknown; fi
`;

/**
 * Args: job dir, wrapper path, the wrapper's SHA-256. First checks the wrapper: our own file, not writable by others,
 * with that hash; otherwise reports `wrapper=stale` and exits 6 before anything is made (the client uploads it again
 * and retries). So a changed wrapper is never run and the check costs no round trip of its own. Then writes spec.sh
 * (from a quoted heredoc: taken literally) and starts the wrapper in its own session (setsid; else immune to SIGHUP)
 * with the login shell when it is a POSIX one, else sh. The launcher records the wrapper's pid in wrapper.pid before
 * exec, so a forking setsid cannot mislead us.
 */
export function launchScript(specText: string): string {
  const delim = heredocDelimiter(specText);
  return `d=$1 w=$2 h=$3
umask 077
${WRAPPER_SUM}o=$(ls -ln "$w" 2>/dev/null) || o=''
set -f
set -- $o
set +f
case $1 in ?????w* | ????????w*) sum='' ;; esac
if [ "$sum" != "$h" ] || [ "\${3-}" != "$(id -u)" ]; then echo wrapper=stale; exit 6; fi
${FREE_SPACE}free "\${d%/*}"
if [ -n "$avail_kib" ] && [ "$avail_kib" -lt ${LAUNCH_HEADROOM_KIB} ]; then
  printf '%s\\n' "error=less than ${LAUNCH_HEADROOM_KIB} KiB free" nospace=1 "avail_kib=$avail_kib" "size_kib=$size_kib"
  exit 3
fi
mkdir "$d" || { [ -d "$d" ] && echo "exists=1"; echo "error=cannot create the job directory $d"; exit 3; }
# spec.sh, then the exit record's reservation (see wrapper.sh); on any failure nothing is left behind.
if ! { cat >"$d/spec.sh.tmp" <<'${delim}'
${specText.endsWith("\n") ? specText : `${specText}\n`}${delim}
} || ! mv -f "$d/spec.sh.tmp" "$d/spec.sh" || ! printf '%511s\\n' '' >"$d/exit.tmp"; then
  rm -rf "$d"
  free "\${d%/*}"
  printf '%s\\n' "error=cannot write $d/spec.sh" "avail_kib=$avail_kib" "size_kib=$size_kib"
  [ "\${avail_kib:-999999}" -ge ${LAUNCH_HEADROOM_KIB} ] || echo nospace=1
  exit 3
fi
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
 * Args: job dir, stream, max bytes. First line: `head_file prev live dropped` sizes; then up to max (or more, if
 * the live file grows meanwhile) trailing bytes of prev + live.
 */
export const READ_LOG = `d=$1 s=$2 n=$3
sz() { set -- $(LC_ALL=C ls -ln "$1" 2>/dev/null); echo "\${5:-0}"; }
h=$(sz "$d/$s.head") p=$(sz "$d/$s.prev") l=$(sz "$d/$s") dr=0
[ -r "$d/$s.dropped" ] && read -r dr <"$d/$s.dropped"
dr=\${dr:-0}
echo "$h $p $l $dr"
if [ "$l" -ge "$n" ]; then
  tail -c "$n" "$d/$s"
else
  [ "$p" -gt 0 ] && tail -c $((n - l)) "$d/$s.prev"
  [ "$l" -gt 0 ] && cat "$d/$s"
fi
exit 0
`;

/**
 * Args: cwd, lines (the most listing rows per declaration), then four per declaration: the lexically normalised
 * path (relative to the cwd, or absolute), the glob's static prefix ('' for a literal path), the most path segments
 * under the prefix a match can have ('' when unbounded, `**`), and whether dot entries can match (1 or 0; when 0
 * they are pruned). Only lists and resolves: matching, confinement and limits are the client's (ssh-artifacts.ts).
 *
 * Output lines, fields separated by TAB; a free-text field is `-` (none), `p` + the text, or `x` + its bytes in hex
 * when it holds a TAB or a newline (so every row stays one line without a non-POSIX NUL framing):
 * - `E  ENOENT|ENOTDIR|EACCES` when the cwd cannot be entered (nothing else follows);
 * - `B  base` the cwd's physical path (`pwd -P`);
 * - per declaration `@  A` (an absolute path outside the cwd, nothing more), or `@  ok  rel  relPrefix` (both made
 *   relative to the cwd), then `L  kind  target  realpath` for the path itself; when it is a directory inside the
 *   cwd, its listing follows; when it does not exist and has a prefix, `P  kind  target  realpath` for the prefix
 *   and, when that is a directory, its listing (the client decides what resolves where);
 * - listing rows `kind  target  realpath  sub` from `find` (not following symbolic links below the listed
 *   directory), cut by `head` after `lines` rows: kind f (regular), d (directory), u (directory that cannot be
 *   read; `.` for the listed directory itself), o (other), l (symbolic link, with the type it points to — f, d, o,
 *   or `-` when it points nowhere — and its realpath).
 * kind in L/P is the type of the path itself (`-` missing); target is what it resolves to, with its realpath.
 */
export const ARTIFACTS = `unset CDPATH
set -f
cd "$HOME" 2>/dev/null
if ! cd "$1" 2>/dev/null; then
  if [ ! -e "$1" ]; then e=ENOENT; elif [ ! -d "$1" ]; then e=ENOTDIR; else e=EACCES; fi
  printf 'E\\t%s\\n' "$e"
  exit 0
fi
n=$2
shift 2
F='nl=$(printf "\\nx"); nl=\${nl%x}; tb=$(printf "\\tx"); tb=\${tb%x}
enc() { case $1 in *"$tb"* | *"$nl"*) printf x; printf %s "$1" | od -An -v -tx1 | tr -d " $nl" ;; *) printf p%s "$1" ;; esac; }
rp() {
  R=$({ realpath "$1" || readlink -f "$1" || { [ -d "$1" ] && cd -P "$1" && pwd -P; }; } 2>/dev/null && echo x)
  case $R in /*x) R=\${R%x}; R=\${R%"$nl"} ;; *) R= ;; esac
}
ty() { y=- r=; [ -e "$1" ] || return 0; rp "$1"; r=$R; if [ -d "$1" ]; then y=d; elif [ -f "$1" ]; then y=f; else y=o; fi; }
row() { printf "%s\\t%s\\t" "$1" "$y"; if [ -n "$r" ]; then enc "$r"; else printf -; fi; printf "\\t"; enc "$2"; echo; }
'
L='trap "" PIPE
for f; do
  y=- r=
  if [ "$f" = . ]; then [ -r . ] || row u .
  elif [ -L "$f" ]; then ty "$f"; row l "\${f#./}"
  elif [ -d "$f" ]; then if [ -r "$f" ]; then row d "\${f#./}"; else row u "\${f#./}"; fi
  elif [ -f "$f" ]; then row f "\${f#./}"
  else row o "\${f#./}"; fi || { kill "$PPID" 2>/dev/null; exit 1; }
done'
eval "$F"
hd() {
  k=-
  if [ -L "$2" ]; then k=l; elif [ -d "$2" ]; then k=d; elif [ -f "$2" ]; then k=f; elif [ -e "$2" ]; then k=o; fi
  ty "$2"
  printf '%s\\t%s\\t%s\\t' "$1" "$k" "$y"; if [ -n "$r" ]; then enc "$r"; else printf -; fi; echo
}
lst() {
  cd "$1" 2>/dev/null || { y=- r=; row u .; return 0; }
  d=$2 k=$3
  set -- .
  if [ -n "$d" ]; then
    p=./*
    while [ "$d" -gt 0 ]; do p=$p/* d=$((d - 1)); done
    set -- "$@" -path "$p" -prune -o
  fi
  [ "$k" = 1 ] || set -- "$@" -name ".*" ! -name . -prune -o
  find "$@" -exec sh -c "$F$L" sh {} "$X" 2>/dev/null
}
# -exec ... {} + batches names into few shells; a find without it gets one shell per name. Once head has read its
# rows, a shell's next write fails (PIPE is ignored in it) and it stops find, its parent: the walk ends there.
if find . -prune -exec true {} + >/dev/null 2>&1; then X=+; else X=';'; fi
base=$(pwd -P && echo x) base=\${base%x} base=\${base%"$nl"}
# dash and busybox print nothing and still succeed when pwd -P fails: never confine against an empty path.
case $base in /*) ;; *)
  printf 'E\tEACCES\n'
  exit 0
  ;;
esac
printf 'B\\t'; enc "$base"; echo
c=\${PWD%/}
rel() { case $1 in "" | "$PWD") V=. ;; "$c"/*) V=\${1#"$c"/} ;; /*) return 1 ;; *) V=$1 ;; esac; }
inside() { case $1 in "$base" | "\${base%/}"/*) return 0 ;; esac; return 1; }
while [ $# -ge 4 ]; do
  if ! rel "$1"; then printf '@\\tA\\n'; shift 4; continue; fi
  l=$V p=
  [ -z "$2" ] || { rel "$2" && p=$V; }
  printf '@\\tok\\t'; enc "$l"; printf '\\t'; if [ -n "$p" ]; then enc "$p"; else printf -; fi; echo
  hd L "./$l"
  if [ "$k" != - ]; then
    [ "$y" = d ] && inside "$r" && lst "./$l" "" 1 | head -n "$n"
  elif [ -n "$p" ]; then
    hd P "./$p"
    [ "$y" = d ] && lst "./$p" "$3" "$4" | head -n "$n"
  fi
  shift 4
done
exit 0
`;

/**
 * Args: max bytes, then pairs (`j` for a JSON file, else `-`; its real path). After a `#awaitless-files` line (what a
 * login shell printed before it is ignored), per file, in order, a record of lines:
 * `N gone` (missing, or no longer a regular file); `N unreadable` + STAT; `N hash` + STAT + SHA; `N json` + STAT +
 * the first max+1 bytes in hex (`od`) + `.` + SHA. STAT is `size seconds [%y]` (`stat -c`, `stat -f`, or `ls` and
 * `date -r`; the fraction of seconds, when given, comes from `%y`), SHA the SHA-256 tool's line; either is an empty
 * line when it failed. Utilities are called directly (no subshell per file): a thousand files cost a few seconds.
 */
export const ARTIFACT_FILES = `set -f
echo '#awaitless-files'
m=$1
shift
if command -v sha256sum >/dev/null 2>&1; then sha() { sha256sum <"$1" 2>/dev/null || echo; }
elif command -v shasum >/dev/null 2>&1; then sha() { shasum -a 256 <"$1" 2>/dev/null || echo; }
elif command -v openssl >/dev/null 2>&1; then sha() { openssl dgst -sha256 <"$1" 2>/dev/null || echo; }
elif command -v busybox >/dev/null 2>&1; then sha() { busybox sha256sum <"$1" 2>/dev/null || echo; }
else sha() { echo; }
fi
case $(stat -c '%s %Y %y' . 2>/dev/null) in
[0-9]*' '[0-9]*) st() { stat -c '%s %Y %y' "$1" 2>/dev/null || echo; } ;;
*)
  case $(stat -f '%z %m' . 2>/dev/null) in
  [0-9]*' '[0-9]*) st() { stat -f '%z %m' "$1" 2>/dev/null || echo; } ;;
  *) st() { set -- "$1" $(LC_ALL=C ls -lnd "$1" 2>/dev/null); echo "$6 $(date -r "$1" +%s 2>/dev/null)"; } ;;
  esac
  ;;
esac
# moved FILE: FILE (a real path from the listing) no longer resolves to itself — a directory on its way was
# replaced by a symbolic link since; it might now lead out of the working directory. Without realpath and
# readlink -f only the last component is checked (-L below).
if realpath / >/dev/null 2>&1; then moved() { [ "$(realpath "$1" 2>/dev/null)" != "$1" ]; }
elif readlink -f / >/dev/null 2>&1; then moved() { [ "$(readlink -f "$1" 2>/dev/null)" != "$1" ]; }
else moved() { return 1; }
fi
i=0
while [ $# -ge 2 ]; do
  i=$((i + 1))
  if [ -L "$2" ] || [ ! -f "$2" ] || moved "$2"; then
    echo "$i gone"
  elif [ ! -r "$2" ]; then
    echo "$i unreadable"
    st "$2"
  elif [ "$1" = j ]; then
    echo "$i json"
    st "$2"
    head -c $((m + 1)) "$2" | od -An -v -tx1
    echo .
    sha "$2"
  else
    echo "$i hash"
    st "$2"
    sha "$2"
  fi
  shift 2
done
exit 0
`;

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
first=1 n=0
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
  # The clock (a fork) only every 40 ticks: the lifetime is a bound, not a deadline.
  n=$((n + 1))
  if [ "$n" -ge 40 ]; then
    n=0
    [ "$(date +%s)" -lt "$end" ] || exit 0
  fi
  sleep "$iv" 2>/dev/null || sleep 1
done
`;
