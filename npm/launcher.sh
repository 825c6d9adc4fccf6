#!/bin/sh
# The `awaitless` command of the npm package: finds the binary of this machine's platform package (@awaitless/
# linux-x64, …: the optional dependency npm installed for this OS, CPU and C library) the way Node resolves a
# package (node_modules of this package, then of every directory above it), and execs it. In npm's own layouts it
# starts no other program, so it costs what starting sh costs (bench/npm-launcher.ts).
# Run as awaitless-mcp or awaitless-runner (Awaitless 0.8's names) with no command, it serves MCP.
set -u

self=$0
name=${self##*/}

# This package's directory. npm links a command from node_modules/.bin (a project, npx) or PREFIX/bin (npm i -g)
# to this file: where it lives is then known without reading the link, and -ef (which follows it) confirms it.
# -ef: dash, bash, ksh, zsh and busybox have it; in a sh without it the test fails and readlink finds the file.
pkg=
case $self in
*/node_modules/.bin/*) guess=${self%/.bin/*}/awaitless ;;
*/bin/*) guess=${self%/bin/*}/lib/node_modules/awaitless ;;
*) guess= ;;
esac
# shellcheck disable=SC3013
if [ ! -L "$self" ]; then
	case $self in */*/*) pkg=${self%/*/*} ;; */*) pkg=. ;; *) pkg=.. ;; esac
elif [ -n "$guess" ] && [ "$self" -ef "$guess/bin/awaitless" ]; then
	pkg=$guess
else
	while [ -L "$self" ]; do
		link=$(readlink "$self") || break
		case $link in
		/*) self=$link ;;
		*) case $self in */*) self=${self%/*}/$link ;; *) self=$link ;; esac ;;
		esac
	done
	case $self in */*/*) pkg=${self%/*/*} ;; */*) pkg=. ;; *) pkg=.. ;; esac
fi

plats= # this machine's platforms, best first; worked out only when more than one platform package is found

platforms() {
	[ -z "$plats" ] || return 0
	uname=$(uname -sm)
	os=${uname% *} arch=${uname##* }
	case $os in Linux) os=linux ;; Darwin) os=darwin ;; esac
	case $arch in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; esac
	plats="$os-$arch"
	if [ "$os" = linux ]; then
		# The C library npm chose for: glibc when its loader is here, else musl; the other one after it.
		if [ -e /lib64/ld-linux-x86-64.so.2 ] || [ -e /lib/ld-linux-aarch64.so.1 ]; then
			plats="linux-$arch linux-$arch-musl"
		else
			plats="linux-$arch-musl linux-$arch"
		fi
	fi
}

# locate DIR: sets bin to the platform binary in DIR/node_modules or that of the nearest directory above
locate() {
	dir=$1
	while :; do
		set -- "$dir"/node_modules/@awaitless/*/bin/awaitless
		if [ -f "$1" ]; then
			# npm installs only the package for this platform; several (--force, a copied tree): choose by uname.
			if [ $# -eq 1 ]; then bin=$1 && return 0; fi
			platforms
			for plat in $plats; do
				for b in "$@"; do
					case $b in */@awaitless/"$plat"/bin/awaitless) bin=$b && return 0 ;; esac
				done
			done
		fi
		case $dir in
		*/*) dir=${dir%/*} ;;
		*) return 1 ;; # "" was /; a relative path stops at its first directory (its real path is walked next)
		esac
	done
}

bin=
# As the path reads (npm), else from its real path (pnpm links packages in from its store, and resolves there).
locate "$pkg" || locate "$(CDPATH='' cd -P -- "$pkg" && pwd -P)" || bin=
if [ -n "$bin" ]; then
	if [ ! -x "$bin" ]; then
		printf 'awaitless: %s is not executable\nhint: reinstall the awaitless package (npm i -g awaitless), or chmod +x that file\n' "$bin" >&2
		exit 1
	fi
	case $name in
	awaitless-mcp | awaitless-runner)
		# 0.8's server commands: options only (or nothing) means "serve MCP", as the binary does under those names.
		if [ $# -eq 0 ]; then exec "$bin" mcp; fi
		case $1 in -*) exec "$bin" mcp "$@" ;; esac
		;;
	esac
	exec "$bin" "$@"
fi

platforms
first=${plats%% *}
case $first in
linux-x64 | linux-x64-musl | linux-arm64 | linux-arm64-musl | darwin-x64 | darwin-arm64)
	printf 'awaitless: the binary for this machine (%s) is not installed: npm did not install the package @awaitless/%s\n' "$first" "$first" >&2
	printf 'hint: it is an optional dependency of awaitless; reinstall without --omit=optional or --no-optional (npm i -g awaitless), or install the binary with the one-line installer (https://github.com/awaitless/awaitless/releases/latest/download/install.sh)\n' >&2
	;;
*)
	printf 'awaitless: no build for %s; there are builds for Linux (x86-64, arm64; glibc and musl) and macOS (x86-64, arm64)\n' "$uname" >&2
	printf 'hint: build it from source: https://github.com/awaitless/awaitless (npm ci && npm run build)\n' >&2
	;;
esac
exit 1
