// Every hint that core names by an abstract action, worded for each surface: the CLI names commands and flags,
// MCP names tools and arguments (and never CLI wording). Installed by the composition root (context.ts).
import type { HintTable } from "./core/model/errors.ts";

export const HINTS: HintTable = {
  find_job_id: () => ({
    cli: "run `awaitless list` to see job IDs",
    mcp: "Check the job ID (it looks like job_01J…); call list_jobs to see recent jobs and their IDs.",
  }),
  find_job_id_prefix: () => ({
    cli: "run `awaitless list` to see job IDs",
    mcp: "Check the job ID; call list_jobs to see recent jobs and their IDs.",
  }),
  job_id_shape: () => ({
    cli: "job IDs look like job_01J…; run `awaitless list` to see them",
    mcp: "Job IDs look like job_01J…; call list_jobs to see them.",
  }),
  job_id_prefix_longer: () => ({
    cli: "give more of the ID, or the whole of it (`awaitless list` shows them)",
    mcp: "Give the full job ID.",
  }),
  job_id_prefix_ambiguous: () => ({
    cli: "give more characters of the ID you mean",
    mcp: "Give the full job ID.",
  }),
  import_08_store: () => ({
    cli: "this is an Awaitless 0.8 job ID: 0.8's finished jobs answer here once its store is imported (`awaitless import`, docs/migrating.md)",
    mcp: "This is an Awaitless 0.8 job ID: its jobs answer once the user imports the 0.8 store (Awaitless import; docs/migrating.md).",
  }),
  pass_submitted_ids: () => ({
    cli: "pass the job IDs you submitted (awaitless list shows them)",
    mcp: "Pass the job IDs you submitted (list_jobs shows them).",
  }),
  new_client_request_id: (a) => ({
    cli: `use a new --client-request-id, or retry with exactly the arguments of ${a.job_id}`,
    mcp: `Use a new client_request_id, or retry with exactly the arguments of ${a.job_id}.`,
  }),
  wait_for_duplicate: (a) => ({
    cli: `wait for it (awaitless wait ${a.job_id}) instead of starting it twice`,
    mcp:
      `Call wait_for_job with {"job_id":"${a.job_id}"} to get its result instead of starting it twice; ` +
      "pass allow_duplicate: true only if you really need a second copy running at the same time. " +
      "Independent commands may run concurrently: each launch of a different command gets its own job.",
  }),
  backend_unavailable: () => ({ cli: "use --backend local", mcp: 'use backend: "local"' }),
  queue_unsupported: () => ({
    cli: "drop --queue/--resource (and any [defaults]/[hosts] queue setting) for this backend, or run the job locally",
    mcp: "Drop queue/resources (and any [defaults]/[hosts] queue setting in the config) for this backend, or run the job locally.",
  }),
  queue_concurrency_range: (a) => ({
    cli: `give --concurrency a whole number from 1 to ${a.max}`,
    mcp: `Give concurrency a whole number from 1 to ${a.max}.`,
  }),
  queue_use_existing: (a) => ({
    cli: `use it as it is (--queue ${a.name}), change it (awaitless queue set ${a.name} --concurrency N), or pick another name`,
    mcp: `Use it as it is (queue: "${a.name}"), or pick another name; concurrency ${a.concurrency} stays.`,
  }),
  array_queue_private: (a) => ({
    cli: `the array's %N is how many of its tasks run at once; see it with \`awaitless status ${a.job_id}\`, and give your own queues a name not starting with "array."`,
    mcp: `The array's %N is how many of its tasks run at once; call get_job_status with {"job_id":"${a.job_id}"} to see it, and give your own queues a name not starting with "array.".`,
  }),
  queue_in_use: (a) => ({
    cli: `wait for its jobs to end (awaitless list --queue ${a.name}${a.target === "local" ? "" : ` --host ${a.target}`}) or cancel them, then delete it`,
    mcp: `Wait for its jobs to end (list_jobs with {"queue":"${a.name}"}) or cancel them, then delete it.`,
  }),
  queue_create_first: (a) => ({
    cli: `create it first: awaitless queue create ${a.name} --concurrency N${a.target === "local" ? "" : ` --host ${a.target}`}`,
    mcp: `Create it first: call create_queue with {"name":"${a.name}","concurrency":N${a.target === "local" ? "" : `,"host":"${a.target}"`}}.`,
  }),
  free_space_local: () => ({
    cli: "free space: `awaitless gc` removes finished jobs, a smaller log_cap_bytes keeps new logs small, --log-dir DIR puts a job's logs on a larger file system; nothing was created",
    mcp: "Nothing was created. Tell the user that this disk or quota is full: removing finished jobs (Awaitless gc), a smaller log_cap_bytes in the config, or a data directory on a larger file system makes room; then call the tool again.",
  }),
  free_space_remote: (a) => ({
    cli: `free space on ${a.host}: \`awaitless gc\` removes finished jobs there too, a smaller log_cap_bytes keeps new logs small, remote_job_dir in [hosts.${a.host}] can name a larger file system; nothing was created`,
    mcp: `Nothing was created. Tell the user that the disk or quota on ${a.host} is full: removing finished jobs (Awaitless gc), a smaller log_cap_bytes, or a remote_job_dir on a larger file system in [hosts.${a.host}] makes room; then call the tool again.`,
  }),
  give_command: () => ({
    cli: "put the command after `--`, e.g. `awaitless run -- make test`",
    mcp: 'Pass command as an argv array, e.g. ["make", "test"].',
  }),
  env_name: () => ({
    cli: "names are letters, digits and _ (not first a digit): --env NAME=VALUE",
    mcp: 'Names are letters, digits and _ (not first a digit): env: {"NAME": "VALUE"}.',
  }),
  env_value: () => ({
    cli: "pass --env NAME=VALUE with a plain string",
    mcp: "Give each env value as a plain string.",
  }),
  secret_env_name: () => ({
    cli: "--secret-env takes a variable NAME",
    mcp: "secret_env takes variable names (letters, digits and _).",
  }),
  secret_env_once: () => ({ cli: "pass it once, as --secret-env", mcp: "Pass it once, in secret_env." }),
  secret_env_set: (a) => ({
    cli: `export ${a.name}=… before running, then retry`,
    mcp: `Set ${a.name} in the environment the MCP server is started with (its client's config), then retry.`,
  }),
  artifact_path: () => ({
    cli: "pass --artifact with a path or glob relative to the job's cwd",
    mcp: "Give artifacts as paths or globs relative to the job's cwd.",
  }),
  scheduler_no_queue: () => ({
    cli: "drop --queue: Slurm schedules the job itself (choose a partition with --slurm-option partition=NAME)",
    mcp: 'Drop queue: Slurm schedules the job itself (choose a partition with slurm_options: {"partition": "NAME"}).',
  }),
  scheduler_keep_leftovers: () => ({
    cli: "drop --keep-leftovers: Slurm ends every process of a job when its batch script ends (run the service as a job of its own)",
    mcp: "Drop keep_leftovers: Slurm ends every process of a job when its batch script ends (run the service as a job of its own).",
  }),
  scheduler_options_backend: () => ({
    cli: "add --backend slurm or drop the option",
    mcp: 'Add backend: "slurm" or drop slurm_options.',
  }),
  scheduler_no_resources: () => ({
    cli: "drop --resource: Slurm allocates resources itself (e.g. --slurm-option gres=gpu:1)",
    mcp: 'Drop resources: Slurm allocates resources itself (e.g. slurm_options: {"gres": "gpu:1"}).',
  }),
  host_name_empty: () => ({
    cli: "pass a host name, or drop --host",
    mcp: "Pass a host name, or leave host out.",
  }),
  local_with_host: (a) => ({
    cli: `drop --backend local to run on ${a.host} (its [hosts.${a.host}] backend, else ssh), or drop --host to run here`,
    mcp: `Leave backend out to run on ${a.host} (its [hosts.${a.host}] backend, else ssh), or leave host out to run here.`,
  }),
  backend_needs_host: () => ({
    cli: "add --host NAME (a [hosts.NAME] entry or an ~/.ssh/config alias)",
    mcp: "Add host: a [hosts.NAME] entry of the config or an ~/.ssh/config alias.",
  }),
  resource_form: () => ({
    cli: "write --resource NAME=VALUE (e.g. gpu=0), each part 1–64 of A-Z a-z 0-9 . _ -",
    mcp: 'Write each resource as "NAME=VALUE" (e.g. "gpu=0"), each part 1–64 of A-Z a-z 0-9 . _ -.',
  }),
  positive_duration: () => ({
    cli: "give a positive duration such as 90s, 10m or 2h",
    mcp: "Give a positive number of seconds, e.g. 600.",
  }),
  cwd_missing: () => ({
    cli: "create it or pass an existing --cwd",
    mcp: "Create it, or pass an existing directory as cwd.",
  }),
  cwd_not_dir: () => ({ cli: "pass a directory as --cwd", mcp: "Pass a directory as cwd." }),
  cwd_unreadable: () => ({
    cli: "fix its permissions or pass another --cwd",
    mcp: "Fix its permissions, or pass another directory as cwd.",
  }),
  // a log directory is the CLI's --log-dir (MCP takes none): the MCP sentences name no argument
  log_dir_remote: (a) =>
    a.backend === "ssh"
      ? {
          cli: "drop --log-dir; on SSH hosts set remote_job_dir in [hosts.NAME]",
          mcp: "Keep the job's files where they go by default; on SSH hosts remote_job_dir in [hosts.NAME] of the config sets it.",
        }
      : {
          cli: "drop --log-dir; on Slurm clusters set slurm_job_dir in [hosts.NAME]",
          mcp: "Keep the job's files where they go by default; on Slurm clusters slurm_job_dir in [hosts.NAME] of the config sets it.",
        },
  log_dir_path: () => ({
    cli: "pass a directory path, e.g. --log-dir ./logs",
    mcp: "Pass a directory path.",
  }),
  after_fewer_parents: (a) => ({
    cli: "chain fewer parents per job (a parent's own --after carries the rest)",
    mcp: `Give at most ${a.max} entries in after.`,
  }),
  after_parent_once: () => ({
    cli: "give each parent once with the condition you mean",
    mcp: "Give each parent once in after, with the condition you mean.",
  }),
  after_form: () => ({
    cli: "write --after JOB_ID[:ok|:any|:failed], e.g. --after job_01JD…:ok (ok is the default)",
    mcp: 'Give after as job IDs with an optional condition, e.g. ["job_01JD…", "job_01JE…:any"] (ok, any or failed; ok when left out).',
  }),
  after_parent_unknown: () => ({
    cli: "check the ID with `awaitless list`; a dependency names a job of this store",
    mcp: "Check the job ID (list_jobs shows recent jobs); after names jobs this server knows.",
  }),
  after_same_target: (a) => ({
    cli: `run this job where ${a.job_id} runs (same --host and --backend), or wait for the parent first (awaitless wait ${a.job_id}) and then submit`,
    mcp: `Run this job where ${a.job_id} runs (same host and backend), or call wait_for_job on the parent first and then submit.`,
  }),
  after_parent_launching: (a) => ({
    cli: `retry in a moment (awaitless status ${a.job_id} shows when it is launched)`,
    mcp: "Retry in a moment, once the parent job is launched.",
  }),
  after_retried_slurm_array: (a) => ({
    cli: `use --after ${a.job_id} (:ok), or wait for the parent first (awaitless wait ${a.job_id}) and then submit the array`,
    mcp: `Use after with ${a.job_id} (ok), or call wait_for_job on the parent first and then submit the array.`,
  }),
};
