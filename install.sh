#!/bin/sh
# Awaitless installer: picks the binary for this OS, CPU and C library, verifies its SHA-256 against the
# release's SHA256SUMS, and installs it into ~/.local/bin (no root). Rerunning upgrades in place.
#
#   sh install.sh [--version X.Y.Z] [--dir DIR] [--target NAME]
#   sh install.sh --uninstall [--dir DIR]
#
# Environment (all optional):
#   AWAITLESS_VERSION       same as --version (default: latest)
#   AWAITLESS_INSTALL_DIR   same as --dir (default: $XDG_BIN_HOME, else ~/.local/bin)
#   XDG_BIN_HOME            the install directory when neither --dir nor AWAITLESS_INSTALL_DIR is given
#   AWAITLESS_TARGET        skip detection, e.g. linux-x64-musl (see docs/install.md for the list)
#   AWAITLESS_DOWNLOAD_URL  release root instead of GitHub: an http(s):// or file:// URL or a directory,
#                           laid out like GitHub releases: latest/download/<asset>, download/v<X.Y.Z>/<asset>
#   AWAITLESS_CPUINFO       file read for CPU flags (default /proc/cpuinfo; tests point it at a fake)
# Detection inputs: `uname -s`, `uname -m`, `ldd --version` (musl or glibc; without ldd, the loader
# named in /bin/sh, then /lib/ld-musl-*),
# the avx2 flag in /proc/cpuinfo, and on macOS `sysctl` (Rosetta, AVX2).
#
# The release has each binary three times: `awaitless-<target>.xz` (about a third of the plain file), `.gz`
# (about half) and the plain file. The installer fetches the smallest one this machine can unpack (xz, unxz or
# busybox's unxz; else gzip; else none), and checks both the compressed file and the binary against SHA256SUMS.
#
# Everything runs inside main(), called on the last line: a truncated download of this script does nothing.
set -eu

RELEASES_URL="https://github.com/awaitless/awaitless/releases"

say() { printf 'awaitless-install: %s\n' "$*" >&2; }
die() {
	printf 'awaitless-install: error: %s\n' "$1" >&2
	[ -n "${2:-}" ] && printf 'awaitless-install: hint: %s\n' "$2" >&2
	exit 1
}

usage() {
	cat <<'EOF'
Usage: install.sh [--version X.Y.Z] [--dir DIR] [--target NAME]
       install.sh --uninstall [--dir DIR]
  --version    install this release (default: latest); rerun with another version to change
  --dir        install directory (default: $AWAITLESS_INSTALL_DIR, else $XDG_BIN_HOME, else ~/.local/bin)
  --target     skip detection: linux-x64, linux-x64-baseline, linux-arm64, linux-x64-musl,
               linux-x64-musl-baseline, linux-arm64-musl, darwin-arm64, darwin-x64
  --uninstall  remove the binary and its awaitless* links from the directory, and list what is
               left (jobs' data, config, MCP client entries, shell completions) with how to remove it
Environment (all optional):
  AWAITLESS_VERSION       same as --version
  AWAITLESS_INSTALL_DIR   same as --dir
  XDG_BIN_HOME            install directory when neither --dir nor AWAITLESS_INSTALL_DIR is set
  AWAITLESS_TARGET        same as --target
  AWAITLESS_DOWNLOAD_URL  release root instead of GitHub (http(s)://, file:// or a directory laid out
                          like GitHub releases: latest/download/<asset>, download/v<X.Y.Z>/<asset>)
  AWAITLESS_CPUINFO       file read for CPU flags instead of /proc/cpuinfo
  HOME                    where ~/.local/bin is
--uninstall also reads AWAITLESS_DATA_DIR, XDG_DATA_HOME, AWAITLESS_CONFIG, XDG_CONFIG_HOME and
CODEX_HOME to say where the data, config and MCP entries are.
EOF
}

detect_libc() {
	if command -v ldd >/dev/null 2>&1; then
		ldd_out=$(ldd --version 2>&1 || true)
		case $ldd_out in
		*musl*) echo musl && return 0 ;;
		*GLIBC* | *"GNU libc"* | *glibc*) echo glibc && return 0 ;;
		esac
	fi
	# No usable ldd: the loader /bin/sh was linked against, then any musl loader on the system.
	if [ -r /bin/sh ]; then
		grep -q 'ld-musl' /bin/sh && echo musl && return 0
		grep -q 'ld-linux' /bin/sh && echo glibc && return 0
	fi
	for loader in /lib/ld-musl-*.so.1; do
		[ -e "$loader" ] && echo musl && return 0
	done
	echo glibc
}

has_avx2() {
	if [ "$1" = darwin ]; then
		[ "$(sysctl -n hw.optional.avx2_0 2>/dev/null || echo 0)" = 1 ]
		return
	fi
	cpuinfo=${AWAITLESS_CPUINFO:-/proc/cpuinfo}
	[ -r "$cpuinfo" ] && grep -q -w avx2 "$cpuinfo"
}

detect_target() {
	case $(uname -s) in
	Linux) os=linux ;;
	Darwin) os=darwin ;;
	*) die "unsupported operating system $(uname -s)" "Awaitless ships binaries for Linux and macOS" ;;
	esac
	case $(uname -m) in
	x86_64 | amd64) arch=x64 ;;
	aarch64 | arm64) arch=arm64 ;;
	*) die "unsupported CPU architecture $(uname -m)" "Awaitless ships x86-64 and arm64 binaries" ;;
	esac
	if [ "$os" = darwin ]; then
		# An x86-64 shell under Rosetta on Apple silicon: the native binary is the right one.
		if [ "$arch" = x64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
			arch=arm64
		fi
		if [ "$arch" = x64 ] && ! has_avx2 darwin; then
			say "warning: this Mac's CPU reports no AVX2; the darwin-x64 binary may not start"
		fi
		echo "darwin-$arch"
		return 0
	fi
	target="linux-$arch"
	[ "$(detect_libc)" = musl ] && target="$target-musl"
	if [ "$arch" = x64 ] && ! has_avx2 linux; then
		target="$target-baseline"
	fi
	echo "$target"
}

fetch() { # fetch URL-or-path DEST
	case $1 in
	file://*) cp "${1#file://}" "$2" ;;
	/*) cp "$1" "$2" ;;
	*)
		if command -v curl >/dev/null 2>&1; then
			case $1 in
			# An https download never follows a redirect to plain http, nor speaks TLS before 1.2.
			https://*) curl --proto '=https' --tlsv1.2 --fail --silent --show-error --location --retry 2 --output "$2" "$1" ;;
			*) curl --fail --silent --show-error --location --retry 2 --output "$2" "$1" ;;
			esac
		elif command -v wget >/dev/null 2>&1; then
			wget -q -O "$2" "$1"
		else
			die "neither curl nor wget is installed" "install one of them, or download the files by hand (docs/install.md)"
		fi
		;;
	esac
}

sha256_of() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d ' ' -f 1
	elif command -v shasum >/dev/null 2>&1; then
		shasum -a 256 "$1" | cut -d ' ' -f 1
	elif command -v openssl >/dev/null 2>&1; then
		openssl dgst -sha256 "$1" | sed 's/^.*= *//'
	else
		die "no SHA-256 tool found (sha256sum, shasum or openssl)" "install coreutils or openssl; the download is never installed unverified"
	fi
}

main() {
	version=${AWAITLESS_VERSION:-latest}
	dir=${AWAITLESS_INSTALL_DIR:-}
	target=${AWAITLESS_TARGET:-}
	uninstall=
	while [ $# -gt 0 ]; do
		case $1 in
		--version) [ $# -ge 2 ] || die "--version needs a value" "e.g. --version 0.1.0"; version=$2; shift ;;
		--version=*) version=${1#--version=} ;;
		--dir) [ $# -ge 2 ] || die "--dir needs a value" "e.g. --dir ~/bin"; dir=$2; shift ;;
		--dir=*) dir=${1#--dir=} ;;
		--target) [ $# -ge 2 ] || die "--target needs a value" "run with --help for the list"; target=$2; shift ;;
		--target=*) target=${1#--target=} ;;
		--uninstall) uninstall=1 ;;
		-h | --help) usage && return 0 ;;
		*) usage >&2 && die "unknown argument $1" "run with --help" ;;
		esac
		shift
	done
	[ -n "$dir" ] || dir=${XDG_BIN_HOME:-}
	if [ -z "$dir" ]; then
		[ -n "${HOME:-}" ] || die "HOME is not set" "set AWAITLESS_INSTALL_DIR to the directory to install into"
		dir="$HOME/.local/bin"
	fi
	if [ -n "$uninstall" ]; then
		uninstall "$dir"
		return 0
	fi

	forced=$target
	[ -n "$target" ] || target=$(detect_target)
	case $target in
	linux-x64 | linux-x64-baseline | linux-arm64 | linux-x64-musl | linux-x64-musl-baseline | linux-arm64-musl | darwin-arm64 | darwin-x64) ;;
	*) die "unknown target $target" "run with --help for the list of targets" ;;
	esac
	asset="awaitless-$target"

	base=${AWAITLESS_DOWNLOAD_URL:-$RELEASES_URL}
	base=${base%/}
	version=${version#v}
	if [ "$version" = latest ]; then
		url="$base/latest/download"
	else
		url="$base/download/v$version"
	fi

	work=$(mktemp -d 2>/dev/null || mktemp -d -t awaitless)
	staged="$dir/.awaitless.new.$$"
	trap 'rm -rf "$work"; rm -f "$staged"' EXIT
	trap 'exit 130' INT TERM

	fetch "$url/SHA256SUMS" "$work/SHA256SUMS" ||
		die "could not download $url/SHA256SUMS" "check the version ($version) and your network; releases are listed at $RELEASES_URL"
	expected=$(sum_of "$asset" "$work/SHA256SUMS")
	[ -n "$expected" ] || die "SHA256SUMS has no entry for $asset" "the release is incomplete; try another --version"
	# The smallest download this machine can unpack: .xz, else .gz, else the plain file. A compressed file that
	# fails its checksum stops everything; one that does not unpack here falls through to the next format.
	got=
	expected_xz=$(sum_of "$asset.xz" "$work/SHA256SUMS")
	if [ -n "$expected_xz" ] && unxz=$(xz_unpacker); then
		say "installing $asset ($version, xz) from $url"
		# shellcheck disable=SC2086 # the unpacker is a command and its options, split on purpose
		fetch_packed xz "$expected_xz" $unxz && got=1
	fi
	expected_gz=$(sum_of "$asset.gz" "$work/SHA256SUMS")
	if [ -z "$got" ] && [ -n "$expected_gz" ] && command -v gzip >/dev/null 2>&1; then
		say "installing $asset ($version, gzip) from $url"
		fetch_packed gz "$expected_gz" gzip -dc && got=1
	fi
	if [ -z "$got" ]; then
		say "installing $asset ($version) from $url"
		download "$asset"
	fi
	verify "$asset" "$expected"

	mkdir -p "$dir" || die "cannot create $dir" "choose another directory with --dir or AWAITLESS_INSTALL_DIR"
	cp "$work/$asset" "$staged" || die "cannot write into $dir" "choose a writable directory with --dir"
	chmod 755 "$staged"
	if ! "$staged" version >/dev/null 2>&1; then
		if [ -z "$forced" ]; then
			case $target in
			*musl*) hint="the musl build needs the C++ runtime: on Alpine, apk add libstdc++ (then rerun)" ;;
			*) hint="pick another build with --target (e.g. a -baseline one); see docs/troubleshooting.md" ;;
			esac
			die "the $target binary does not start on this machine; nothing was installed" "$hint"
		fi
		say "warning: the $target binary does not start here (installing anyway: --target was given)"
	fi
	# rename(2) within one directory is atomic: running copies keep the old file, new starts get the new one.
	mv -f "$staged" "$dir/awaitless"
	# Awaitless 0.8's server commands, as links to the one binary: invoked by these names it serves MCP on stdio.
	for name in awaitless-mcp awaitless-runner; do
		ln -sf awaitless "$dir/$name" || say "warning: could not create the link $dir/$name (MCP still works as: awaitless mcp)"
	done

	installed=$("$dir/awaitless" version 2>/dev/null || echo "awaitless ($target)")
	say "installed $installed at $dir/awaitless (with awaitless-mcp and awaitless-runner: links that serve MCP)"
	case ":${PATH:-}:" in
	*":$dir:"*) ;;
	*)
		say "$dir is not on your PATH; add this line to your shell profile (~/.profile, ~/.bashrc or ~/.zshrc):"
		say "  export PATH=\"$dir:\$PATH\""
		;;
	esac
	# The hint names a command that runs as typed: `awaitless` only when PATH finds this very file.
	run=$dir/awaitless
	[ "$(command -v awaitless 2>/dev/null || true)" = "$dir/awaitless" ] && run=awaitless
	say "next: $run demo   (then: $run mcp-config claude --write, or codex, cursor, gemini)"
}

xz_unpacker() { # the command that writes an .xz file's content to stdout: xz, unxz or busybox's applet; else fails
	if command -v xz >/dev/null 2>&1; then
		echo "xz -dc"
	elif command -v unxz >/dev/null 2>&1; then
		echo "unxz -c"
	elif command -v busybox >/dev/null 2>&1 && busybox --list 2>/dev/null | grep -qx unxz; then
		echo "busybox unxz -c"
	else
		return 1
	fi
}

download() { # download NAME: $url/NAME into $work/NAME, or stop
	fetch "$url/$1" "$work/$1" ||
		die "could not download $url/$1" "this release may not have a $target build; see --help for --target"
}

verify() { # verify NAME SHA256: $work/NAME has that SHA-256, or stop with nothing installed
	actual=$(sha256_of "$work/$1")
	[ "$actual" = "$2" ] ||
		die "checksum mismatch for $1: expected $2, got $actual; nothing was installed" \
			"retry the download; if it keeps failing, report it (the file may have been tampered with)"
}

fetch_packed() { # fetch_packed EXT SHA256 UNPACK…: $asset.EXT downloaded, checked, unpacked into $work/$asset
	ext=$1
	download "$asset.$ext"
	verify "$asset.$ext" "$2"
	shift 2
	if "$@" <"$work/$asset.$ext" >"$work/$asset"; then
		rm -f "$work/$asset.$ext"
		return 0
	fi
	say "could not unpack $asset.$ext with $*; trying the next format"
	rm -f "$work/$asset" "$work/$asset.$ext"
	return 1
}

inode_of() { # the inode a path (followed through links) names, or nothing
	# shellcheck disable=SC2012 # only the inode column is read; `find -inum` would need GNU find's -printf
	if [ -e "$1" ]; then ls -Lid "$1" 2>/dev/null | awk '{ print $1 }'; fi
}

sum_of() { # sum_of ASSET SHA256SUMS → the hex digest listed for ASSET, or nothing
	awk -v f="$1" '$2 == f || $2 == "*" f { print $1; exit }' "$2"
}

# Removes the binary and every awaitless* name in DIR that is the same file or a link to it, then says
# what stays (data, config, MCP entries, completion files) and the command that removes each.
uninstall() {
	dir=$1
	bin=$dir/awaitless
	removed=0
	inode=$(inode_of "$bin")
	for f in "$dir"/awaitless*; do
		[ "$f" = "$bin" ] && continue
		if { [ -n "$inode" ] && [ "$(inode_of "$f")" = "$inode" ]; } ||
			{ [ -L "$f" ] && case $(readlink "$f" 2>/dev/null) in awaitless | "$bin") true ;; *) false ;; esac; }; then
			rm -f "$f" && say "removed $f" && removed=$((removed + 1))
		fi
	done
	if [ -e "$bin" ] || [ -L "$bin" ]; then
		rm -f "$bin" || die "cannot remove $bin" "check the directory's permissions"
		say "removed $bin"
		removed=$((removed + 1))
	fi
	[ "$removed" -gt 0 ] || say "no awaitless binary in $dir (give the directory it is in with --dir)"
	home=${HOME:-}
	data=${AWAITLESS_DATA_DIR:-${XDG_DATA_HOME:-$home/.local/share}/awaitless}
	config=${AWAITLESS_CONFIG:-${XDG_CONFIG_HOME:-$home/.config}/awaitless/config.toml}
	left=
	remains() { # remains PATH WHAT HOW
		[ -e "$1" ] || return 0
		[ -n "$left" ] || say "left in place (remove what you no longer want):"
		left=1
		say "  $2: $1"
		say "    $3"
	}
	remains "$data" "jobs' records and logs" "rm -rf '$data'"
	remains "$config" "config" "rm '$config'"
	for mcp in "$home/.claude.json" "${CODEX_HOME:-$home/.codex}/config.toml" "$home/.cursor/mcp.json" "$home/.gemini/settings.json"; do
		[ -f "$mcp" ] && grep -q awaitless "$mcp" &&
			remains "$mcp" "MCP client entry" "delete the \"awaitless\" entry from its MCP servers"
	done
	for comp in "${XDG_DATA_HOME:-$home/.local/share}/bash-completion/completions/awaitless" "$home/.zfunc/_awaitless" \
		"${XDG_CONFIG_HOME:-$home/.config}/fish/completions/awaitless.fish"; do
		remains "$comp" "shell completion" "rm '$comp'"
	done
	[ -n "$left" ] || say "no awaitless data, config, MCP entries or completions found"
}

main "$@"
