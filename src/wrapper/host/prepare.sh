# Host program `prepare`: makes a job root ready. Args: remote_job_dir, wrapper file name.
# Checks the nearest existing ancestor (physically) and every one above it (lib-trust.sh), creates root/jobs and
# root/bin (0700), resolves the root to its physical path (no link on the way can be swapped later) and checks it,
# jobs/ and bin/.
# Output (key=value lines, parsed by keyValues in src/wrapper/host-scripts.ts): root= wrapper=present boot_id=,
# or error= [fix=] [untrusted=1] with exit 3 (cannot) or 5 (untrusted).
# shellcheck shell=sh
# awaitless:include lib-root.sh
umask 077
# awaitless:include lib-trust.sh
# awaitless:include prelude.sh
a=$r
while [ ! -d "$a" ]; do a=${a%/*}; [ -n "$a" ] || a=/; done
a=$(cd "$a" && pwd -P) || { echo "error=cannot enter $a"; exit 3; }
chain "$a" || { echo untrusted=1; exit 5; }
mkdir -p "$r/jobs" "$r/bin" || { echo "error=cannot create $r/jobs"; exit 3; }
r=$(cd "$r" && pwd -P) || { echo "error=cannot enter $r"; exit 3; }
{ chain "$r" && trusted "$r/jobs" && trusted "$r/bin"; } || { echo untrusted=1; exit 5; }
chmod 700 "$r" "$r/jobs" "$r/bin" || { echo "error=chmod 700 failed on $r, $r/jobs or $r/bin"; exit 3; }
echo "root=$r"
[ -f "$r/bin/$2" ] && echo "wrapper=present"
awl_read_boot_id
echo "boot_id=$awl_boot_id"
