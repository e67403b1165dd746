// A mutation the backend refused with a 4xx (validation, a path out of /workspace,
// an isolation it cannot run) changed nothing: it exits 125 like every refusal
// (docs/classification.md), saying so, rather than 1, which reads as a command's exit.

import { BackendError, SbxError } from "../common/errors.js";
import { ExitCodes } from "../common/exit-codes.js";

export async function refusalIsUsage<T>(send: () => Promise<T>, nothing = "nothing was changed"): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (
      err instanceof BackendError &&
      err.status !== null &&
      err.status >= 400 &&
      err.status < 500 &&
      err.status !== 408
    ) {
      // The backend may have said it already ("…; nothing was written"): said once.
      const message = err.message.endsWith(nothing) ? err.message : `${err.message}; ${nothing}`;
      throw new SbxError(err.code, message, {
        exitCode: ExitCodes.usage,
        ...(err.hint === undefined ? {} : { hint: err.hint }),
      });
    }
    throw err;
  }
}
