// The runtime seam for letting stdout and stderr drain before the process exits
// (pipes are asynchronous). On Node, an empty write's callback runs once everything
// before it was flushed. Bun calls it (and reports nothing buffered) while a large
// write to a pipe is still pending, and exit then cuts the output at 128 KiB: there,
// ending the stream is what waits for the data to be written.

import { isBunRuntime } from "./runtime.js";

function drained(stream: NodeJS.WriteStream, end: boolean): Promise<void> {
  return new Promise((resolve) => {
    try {
      if (end) stream.end(() => resolve());
      else stream.write("", () => resolve());
    } catch {
      resolve();
    }
  });
}

/** Resolves once everything written to stdout and stderr has reached them. */
export async function flushStdio(): Promise<void> {
  const end = isBunRuntime();
  await drained(process.stdout, end);
  await drained(process.stderr, end);
}
