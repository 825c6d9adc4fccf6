# Fragment: sets r to remote_job_dir ($1) expanded: `~` is the home directory; a relative path is relative to it.
# shellcheck shell=sh
r=$1
# shellcheck disable=SC2088 # a literal ~ given by the user, expanded here
case $r in "~") r=$HOME ;; "~/"*) r=$HOME/${r#"~/"} ;; esac
case $r in /*) ;; *) r=$HOME/$r ;; esac
