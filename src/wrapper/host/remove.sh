# Host program `remove`: Arg: job dir. Removes it (gc), refusing anything that is not a job directory.
# shellcheck shell=sh
case $1 in */jobs/job_*) rm -rf "$1" ;; *) echo "refusing to remove $1" >&2; exit 2 ;; esac
