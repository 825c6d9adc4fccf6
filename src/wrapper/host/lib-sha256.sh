# Fragment: `sha FILE` prints the SHA-256 line of FILE from sha256sum, shasum, openssl or busybox, whichever the
# host has (an empty line when FILE cannot be read, or with none of them: then awl_nosha=1). The hex digest is
# the line's only run of 64 hex digits (`awl_hex` extracts it into awl_sum).
# shellcheck shell=sh
# shellcheck disable=SC2034 # read by the includer
awl_nosha=0
if command -v sha256sum >/dev/null 2>&1; then sha() { sha256sum <"$1" 2>/dev/null || echo; }
elif command -v shasum >/dev/null 2>&1; then sha() { shasum -a 256 <"$1" 2>/dev/null || echo; }
elif command -v openssl >/dev/null 2>&1; then sha() { openssl dgst -sha256 <"$1" 2>/dev/null || echo; }
elif command -v busybox >/dev/null 2>&1; then sha() { busybox sha256sum <"$1" 2>/dev/null || echo; }
else
  # shellcheck disable=SC2034 # read by the includer
  awl_nosha=1
  sha() { echo; }
fi
# awl_hex LINE: awl_sum = the digest of a `sha` line (sha256sum's `HEX  -`, openssl's `...= HEX`), '' for none.
# shellcheck disable=SC2034,SC2317 # read by the includer (launch.sh)
awl_hex() {
  case $1 in *"= "*) awl_sum=${1##* } ;; *) awl_sum=${1%% *} ;; esac
}
