# Host program `artifact-files`: sizes, dates and hashes the files the client chose, and sends small JSON back.
# Args: max bytes, then pairs (`j` for a JSON file, else `-`; its real path).
# Output (parsed by parseArtifactFiles in ssh-artifacts.ts): after a `#awaitless-files` line (what a login shell
# printed before it is ignored), per file, in order, a record of lines: `N gone` (missing, or no longer a regular
# file); `N unreadable` + STAT; `N hash` + STAT + SHA; `N json` + STAT + the first max+1 bytes in hex (`od`) + `.` +
# SHA. STAT is `size seconds [%y]` (`stat -c`, `stat -f`, or `ls` and `date -r`; the fraction of seconds, when
# given, comes from `%y`), SHA the SHA-256 tool's line (lib-sha256.sh); either is an empty line when it failed.
# Utilities are called directly (no subshell per file): a thousand files cost a few seconds.
# shellcheck shell=sh
set -f
echo '#awaitless-files'
m=$1
shift
# awaitless:include lib-sha256.sh
case $(stat -c '%s %Y %y' . 2>/dev/null) in
[0-9]*' '[0-9]*) st() { stat -c '%s %Y %y' "$1" 2>/dev/null || echo; } ;;
*)
  case $(stat -f '%z %m' . 2>/dev/null) in
  [0-9]*' '[0-9]*) st() { stat -f '%z %m' "$1" 2>/dev/null || echo; } ;;
  *) st() {
    # shellcheck disable=SC2046 # the listing's fields, split
    set -- "$1" $(LC_ALL=C ls -lnd "$1" 2>/dev/null); echo "$6 $(date -r "$1" +%s 2>/dev/null)"
  } ;;
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
