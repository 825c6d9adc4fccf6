# Host program `prepare`: makes a job root ready. Args: remote_job_dir, wrapper file name.
# Checks the nearest existing ancestor (physically) and every one above it (lib-trust.sh); refuses a root that is a
# shared directory (/, /tmp, the home, ~/.ssh and what is inside it, …) or that exists and is open to other users
# (the mode of a directory we did not create is never changed), all before anything is created; then creates
# root/jobs and root/bin (mkdir under umask 077: 0700), resolves the root to its physical path (no link on the way can
# be swapped later) and checks it, jobs/ and bin/.
# Output (key=value lines, parsed by keyValues in src/wrapper/host-scripts.ts): root= wrapper=present boot_id=,
# or error= [fix=] [untrusted=1] with exit 3 (cannot) or 5 (untrusted, or not a root of its own).
# shellcheck shell=sh
# awaitless:include lib-root.sh
umask 077
# awaitless:include lib-trust.sh
# awaitless:include prelude.sh
while :; do case $r in / | *[!/]) break ;; *) r=${r%/} ;; esac; done
a=$r
while [ ! -d "$a" ]; do a=${a%/*}; [ -n "$a" ] || a=/; done
l=$a
a=$(cd "$a" && pwd -P) || { echo "error=cannot enter $a"; exit 3; }
chain "$a" || { echo untrusted=1; exit 5; }
# the root as it resolves: the ancestor's physical path and the part still to be made
if [ "$l" = / ]; then p=${a%/}$r; else p=${a%/}${r#"$l"}; fi
[ -n "$p" ] || p=/
h=$(cd "$HOME" 2>/dev/null && pwd -P) || h=$HOME
no() { echo "error=$1"; echo "fix=$2"; echo untrusted=1; exit 5; }
for x in "$r" "$p"; do
  case $x in
  / | /tmp | /var/tmp | /dev/shm | /home | /root | /usr | /etc | /var | /opt | /srv | /run | /mnt | /media)
    no "$x is shared with other users and the system; awaitless keeps its files in a directory of its own and would have to make this one private" \
      "choose a directory of its own, for example ${x%/}/awaitless (awaitless creates it, private)" ;;
  "$HOME" | "$h")
    no "$x is your home directory; awaitless keeps its files in a directory of its own and would have to make this one private" \
      "choose a directory of its own, for example ~/.awaitless (the default; awaitless creates it, private)" ;;
  "$HOME/.ssh" | "$HOME/.ssh/"* | "$h/.ssh" | "$h/.ssh/"*)
    no "$x is your ~/.ssh or inside it, which ssh itself guards" \
      "choose a directory of its own, for example ~/.awaitless (the default; awaitless creates it, private)" ;;
  esac
done
if [ -d "$r" ]; then
  m=$(ls -ldn "$p" 2>/dev/null) || { echo "error=cannot inspect $r"; exit 3; }
  m=${m%% *}
  case $m in
  d???--[-S]--[-T]*) ;;
  *) no "$r exists and is open to other users ($m), and awaitless does not change the mode of a directory it did not create" \
    "run chmod 700 $r on the host if only you use it, or choose a new directory (awaitless creates it, private)" ;;
  esac
fi
mkdir -p "$r/jobs" "$r/bin" || { echo "error=cannot create $r/jobs"; exit 3; }
r=$(cd "$r" && pwd -P) || { echo "error=cannot enter $r"; exit 3; }
{ chain "$r" && trusted "$r/jobs" && trusted "$r/bin"; } || { echo untrusted=1; exit 5; }
echo "root=$r"
[ -f "$r/bin/$2" ] && echo "wrapper=present"
awl_read_boot_id
echo "boot_id=$awl_boot_id"
