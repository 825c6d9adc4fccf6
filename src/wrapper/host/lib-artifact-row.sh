# Fragment of the artifact listing (artifacts.sh, artifacts-batch.sh): `enc TEXT` prints a free-text field (`p` +
# the text, or `x` + its bytes in hex when it holds a TAB or a newline); `ty PATH` sets y (f d o, `-` missing) and r
# (its realpath); `row KIND NAME` prints one listing row `KIND  y  realpath  NAME` (TAB-separated).
# shellcheck shell=sh
nl=$(printf "\nx"); nl=${nl%x}; tb=$(printf "\tx"); tb=${tb%x}
enc() { case $1 in *"$tb"* | *"$nl"*) printf x; printf %s "$1" | od -An -v -tx1 | tr -d " $nl" ;; *) printf p%s "$1" ;; esac; }
rp() {
  R=$({ realpath "$1" || readlink -f "$1" || { [ -d "$1" ] && cd -P "$1" && pwd -P; }; } 2>/dev/null && echo x)
  case $R in /*x) R=${R%x}; R=${R%"$nl"} ;; *) R= ;; esac
}
ty() { y=- r=; [ -e "$1" ] || return 0; rp "$1"; r=$R; if [ -d "$1" ]; then y=d; elif [ -f "$1" ]; then y=f; else y=o; fi; }
row() { printf "%s\t%s\t" "$1" "$y"; if [ -n "$r" ]; then enc "$r"; else printf -; fi; printf "\t"; enc "$2"; echo; }
