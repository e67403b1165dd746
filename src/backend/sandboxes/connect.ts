// A connection to a port on a sandbox's own loopback, for a published port or a port
// forward (docs/protocol.md, "Port forwarding"): through the sandbox's driver (the
// init of a live bwrap environment joins it; the none driver's loopback is the
// host's). It never starts the environment: a stopped sandbox has nothing listening.

import type { Duplex } from "node:stream";
import { ErrorCodes } from "../../protocol/types.js";
import type { SandboxDriver, SandboxPlacement } from "../drivers/index.js";
import { Refusal } from "../refusal.js";

/**
 * Refused with sandbox_not_running when the sandbox's environment does not run (or
 * stopped while the connection was asked), connection_refused when nothing takes the
 * connection there.
 */
export async function connectToPort(
  driver: SandboxDriver,
  placement: SandboxPlacement,
  sandbox: { sandboxId: string; name: string },
  port: number,
): Promise<Duplex> {
  const running = () => (driver.environment?.(placement).state ?? "running") !== "stopped";
  const notRunning = (what: string) =>
    new Refusal(
      ErrorCodes.sandboxNotRunning,
      `sandbox ${sandbox.name} ${what}: nothing in it listens on port ${port}`,
      {
        sandbox_id: sandbox.sandboxId,
        port,
      },
    );
  const refused = (reason: string) =>
    new Refusal(ErrorCodes.connectionRefused, `port ${port} in sandbox ${sandbox.name}: ${reason}`, {
      sandbox_id: sandbox.sandboxId,
      port,
      reason,
    });
  if (driver.connect === undefined) throw refused("this sandbox's driver cannot connect to its ports");
  if (!running()) throw notRunning("is not running");
  try {
    return await driver.connect(placement, port);
  } catch (err) {
    const message = (err as Error).message;
    if (/ECONNREFUSED/.test(message)) throw refused("nothing listens there (connection refused)");
    if (!running()) throw notRunning("stopped");
    throw refused(message);
  }
}
