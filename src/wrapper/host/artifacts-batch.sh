# The artifact listing's per-batch program: `find -exec sh -c TEXT sh NAME... +` runs it on the names find found
# and it prints one row per name (lib-artifact-row.sh). Once head has read its rows, the next write fails (PIPE is
# ignored here) and it stops find, its parent: the walk ends there.
# shellcheck shell=sh
# awaitless:include lib-artifact-row.sh
trap "" PIPE
for f; do
  y=- r=
  if [ "$f" = . ]; then [ -r . ] || row u .
  elif [ -L "$f" ]; then ty "$f"; row l "${f#./}"
  elif [ -d "$f" ]; then if [ -r "$f" ]; then row d "${f#./}"; else row u "${f#./}"; fi
  elif [ -f "$f" ]; then row f "${f#./}"
  else row o "${f#./}"; fi || { kill "$PPID" 2>/dev/null; exit 1; }
done
