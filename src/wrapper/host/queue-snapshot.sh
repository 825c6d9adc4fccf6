# Host program `queue-snapshot`: Arg: the queue directory (wrapper.sh "Queue admission"), or with `-r` before it
# a remote_job_dir whose queues/ it is.
# Output (parsed by parseQueueSnapshot, src/wrapper/host-scripts.ts): one line per live entry, `R JOB_ID QUEUE`
# (admitted) and `W TICKET.JOB_ID QUEUE` (waiting; QUEUE empty for resource locks only). An entry is live while its
# wrapper is (pid, process start time, same boot ID) or, once admitted, while its command's process group is, judged
# by the same functions the wrappers use (prelude.sh); dead ones are left for the wrappers to remove.
# shellcheck shell=sh
# awaitless:include prelude.sh
m=$1
[ "$m" != -r ] || shift
# awaitless:include lib-root.sh
if [ "$m" = -r ]; then q=$r/queues; else q=$1; fi
awl_read_boot_id
for f in "$q"/running/*; do
  [ -e "$f" ] && awl_q_read "$f" && awl_q_entry_alive && printf 'R %s %s\n' "${f##*/}" "$e_queue"
done
for f in "$q"/waiting/*; do
  [ -e "$f" ] && awl_q_read "$f" && awl_q_entry_alive && printf 'W %s %s\n' "${f##*/}" "$e_queue"
done
exit 0
