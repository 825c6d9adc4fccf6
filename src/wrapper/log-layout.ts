// How a capped log stream sits on disk (head + dropped gap + prev + live) and how a reader puts it back together.

export type LogStream = "stdout" | "stderr";

/** File names of one stream inside a job directory. */
export function logFileNames(stream: LogStream): {
  live: string;
  prev: string;
  head: string;
  dropped: string;
} {
  return { live: stream, prev: `${stream}.prev`, head: `${stream}.head`, dropped: `${stream}.dropped` };
}

/** Sizes as found on disk (missing files are 0; `droppedBytes` is the number inside STREAM.dropped). */
export interface LogSizes {
  headFileBytes: number;
  prevBytes: number;
  liveBytes: number;
  droppedBytes: number;
}

/** What to show, in order: head[0, headBytes), "[omittedBytes bytes omitted]" when > 0, prev, live. */
export interface LogPlan extends LogSizes {
  /** Leading bytes of STREAM.head to show; 0 when nothing was dropped (the stream is whole in prev + live). */
  headBytes: number;
  /** Bytes neither in the head nor in prev + live. */
  omittedBytes: number;
  /** Every byte the command wrote to the stream: dropped + prev + live. */
  totalBytes: number;
}

/**
 * The head holds the stream's first bytes; `dropped` counts the first bytes missing from prev + live. When fewer
 * bytes were dropped than the head holds, only the part of the head that is missing from prev is shown.
 */
export function planLog(sizes: LogSizes): LogPlan {
  const headBytes = Math.min(sizes.headFileBytes, sizes.droppedBytes);
  return {
    ...sizes,
    headBytes,
    omittedBytes: sizes.droppedBytes - headBytes,
    totalBytes: sizes.droppedBytes + sizes.prevBytes + sizes.liveBytes,
  };
}
