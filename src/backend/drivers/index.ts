// How a command runs in a sandbox (docs/drivers.md): what the rest of the backend may
// use of the drivers. Everything else in this folder is the drivers' own.

export {
  commandEnvironment,
  type DriverHost,
  daemonHost,
  EnvironmentEndedError,
  type EnvironmentStatus,
  type EnvironmentStopped,
  type FollowedEnd,
  type FollowedRun,
  type SandboxDriver,
  type SandboxPlacement,
  SpawnError,
  type StreamBytes,
  type TerminalControl,
} from "./driver.js";
export { unmeasured } from "./limits/usage.js";
export { DriverSet, type DriverSetOptions } from "./drivers.js";
export { type HostIdentity, hostIdentityOf, pickSandboxUid } from "./identity.js";
export { chownTree, ownedBy } from "./ownership.js";
export {
  LEADER_EXIT_LINGER_MS,
  leaderOf,
  type OneShotCommand,
  ProcessGroup,
  sandboxStartFailureCause,
  sandboxStartFailureMessage,
  spawnFailure,
} from "./process-group.js";
export { bootId, readProcEntry, readProcessStartTime, runMembers, signalProcessGroup } from "./proc.js";
export { DEFAULT_LIMITS, parseKeyed, withDefaults } from "./limits/spec.js";
export type { MeasuredPlace } from "./limits/cgroups.js";
export type { Limiter } from "./limits/limiter.js";
