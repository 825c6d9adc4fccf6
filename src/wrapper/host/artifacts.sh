# Host program `artifacts`: lists and resolves what artifact declarations name. B, the per-batch program
# (artifacts-batch.sh), is defined by the client before this text (src/wrapper/host-scripts.ts).
# Args: cwd, lines (the most listing rows per declaration), then four per declaration: the lexically normalised
# path (relative to the cwd, or absolute), the glob's static prefix ('' for a literal path), the most path segments
# under the prefix a match can have ('' when unbounded, `**`), and whether dot entries can match (1 or 0; when 0
# they are pruned). Only lists and resolves: matching, confinement and limits are the client's (ssh-artifacts.ts).
#
# Output lines (parsed by parseArtifactListing in ssh-artifacts.ts), fields separated by TAB; a free-text field is
# `-` (none), `p` + the text, or `x` + its bytes in hex when it holds a TAB or a newline (so every row stays one
# line without a non-POSIX NUL framing):
# - `E  ENOENT|ENOTDIR|EACCES` when the cwd cannot be entered (nothing else follows);
# - `B  base` the cwd's physical path (`pwd -P`);
# - per declaration `@  A` (an absolute path outside the cwd, nothing more), or `@  ok  rel  relPrefix` (both made
#   relative to the cwd), then `L  kind  target  realpath` for the path itself; when it is a directory inside the
#   cwd, its listing follows; when it does not exist and has a prefix, `P  kind  target  realpath` for the prefix
#   and, when that is a directory, its listing (the client decides what resolves where);
# - listing rows `kind  target  realpath  sub` from `find` (not following symbolic links below the listed
#   directory), cut by `head` after `lines` rows: kind f (regular), d (directory), u (directory that cannot be
#   read; `.` for the listed directory itself), o (other), l (symbolic link, with the type it points to — f, d, o,
#   or `-` when it points nowhere — and its realpath).
# kind in L/P is the type of the path itself (`-` missing); target is what it resolves to, with its realpath.
# shellcheck shell=sh
# shellcheck disable=SC2154 # B: defined before this text
unset CDPATH
set -f
cd "$HOME" 2>/dev/null || :
if ! cd "$1" 2>/dev/null; then
  if [ ! -e "$1" ]; then e=ENOENT; elif [ ! -d "$1" ]; then e=ENOTDIR; else e=EACCES; fi
  printf 'E\t%s\n' "$e"
  exit 0
fi
n=$2
shift 2
# awaitless:include lib-artifact-row.sh
hd() {
  k=-
  if [ -L "$2" ]; then k=l; elif [ -d "$2" ]; then k=d; elif [ -f "$2" ]; then k=f; elif [ -e "$2" ]; then k=o; fi
  ty "$2"
  printf '%s\t%s\t%s\t' "$1" "$k" "$y"; if [ -n "$r" ]; then enc "$r"; else printf -; fi; echo
}
lst() {
  cd "$1" 2>/dev/null || { y=- r=; row u .; return 0; }
  d=$2 k=$3
  set -- .
  if [ -n "$d" ]; then
    p='./*'
    while [ "$d" -gt 0 ]; do p="$p/*" d=$((d - 1)); done
    set -- "$@" -path "$p" -prune -o
  fi
  [ "$k" = 1 ] || set -- "$@" -name ".*" ! -name . -prune -o
  # shellcheck disable=SC2067 # X is the terminator: + or ;
  find "$@" -exec sh -c "$B" sh {} "$X" 2>/dev/null
}
# -exec ... {} + batches names into few shells (artifacts-batch.sh); a find without it gets one shell per name.
if find . -prune -exec true {} + >/dev/null 2>&1; then X=+; else X=';'; fi
base=$(pwd -P && echo x) base=${base%x} base=${base%"$nl"}
# dash and busybox print nothing and still succeed when pwd -P fails: never confine against an empty path.
case $base in /*) ;; *)
  printf 'E\tEACCES\n'
  exit 0
  ;;
esac
printf 'B\t'; enc "$base"; echo
c=${PWD%/}
rel() { case $1 in "" | "$PWD") V=. ;; "$c"/*) V=${1#"$c"/} ;; /*) return 1 ;; *) V=$1 ;; esac; }
inside() { case $1 in "$base" | "${base%/}"/*) return 0 ;; esac; return 1; }
while [ $# -ge 4 ]; do
  if ! rel "$1"; then printf '@\tA\n'; shift 4; continue; fi
  l=$V p=
  [ -z "$2" ] || { rel "$2" && p=$V; }
  printf '@\tok\t'; enc "$l"; printf '\t'; if [ -n "$p" ]; then enc "$p"; else printf -; fi; echo
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
