# Host program `track-probe`: how this host's wrappers will track a job's processes (src/wrapper/tracking.sh), found
# the way a wrapper finds it: a probe cgroup is made and removed again, and environment tracking is tried on this
# program's own child. No argument.
# Output (key=value lines, parsed by parseTrackProbe, src/wrapper/host-scripts.ts):
#   tracking=cgroup|environment   why=WORDS (after "tracking …")   cpu=cgroup|rusage   memory=cgroup|none
#   environ=1|0: a process's AWAITLESS_JOB_ID can be read from /proc/PID/environ with grep -z (0: environment
#   tracking sees nothing here: no /proc, or a grep without -z)
# shellcheck shell=sh
# awaitless:include prelude.sh
# awaitless:include tracking.sh
AWL_JOB_ID=job_probe$$ AWL_ATTEMPT=1 AWL_SCHEDULER=''
# what tracking.sh's readers of the job's processes take from their includer (the probe lists and stops nothing)
awl_exclude=$$ awl_t=0
awl_track_setup
t=environment
[ -z "$awl_cg_track" ] || t=cgroup
echo "tracking=$t"
echo "why=$awl_track_why"
c=rusage m=none
[ -z "$awl_cg_cpu" ] || c=cgroup
[ -z "$awl_cg_mem" ] || m=cgroup
echo "cpu=$c"
echo "memory=$m"
awl_track_drop
e=0
# shellcheck disable=SC2016 # $$ is the child's own
AWAITLESS_JOB_ID=$AWL_JOB_ID sh -c 'grep -q -s -a -z -x -F "AWAITLESS_JOB_ID=$1" /proc/$$/environ' x "$AWL_JOB_ID" && e=1
echo "environ=$e"
exit 0
