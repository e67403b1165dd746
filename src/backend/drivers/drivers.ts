// The backend's drivers, probed once at start-up: which isolation `auto` means on
// this machine, and the driver for each sandbox (docs/drivers.md).

import type { Isolation, IsolationStatus } from "../../protocol/types.js";
import { BwrapDriver, type BwrapDriverOptions } from "./bwrap/driver.js";
import type { DriverHost, DriverProbe, SandboxDriver } from "./driver.js";
import { NoneDriver } from "./none.js";

export interface DriverSetOptions {
  /** Who the daemon runs as and its PATH (daemonHost(), where the backend starts). */
  host: DriverHost;
  bwrap?: Omit<BwrapDriverOptions, "host">;
  /** Pretend bwrap cannot run here (tests of the fallback, `--isolation none` daemons). */
  disableBwrap?: boolean;
}

export class DriverSet {
  private readonly drivers: Record<Isolation, SandboxDriver>;
  private readonly probes: Record<Isolation, DriverProbe>;

  constructor(opts: DriverSetOptions) {
    const bwrap = new BwrapDriver({ ...opts.bwrap, host: opts.host });
    this.drivers = { bwrap, none: new NoneDriver(opts.host) };
    this.probes = {
      none: this.drivers.none.probe(),
      bwrap: opts.disableBwrap
        ? { available: false, reason: "bwrap was disabled for this daemon (--no-bwrap)", version: null }
        : bwrap.probe(),
    };
  }

  /** What `auto` means here: bwrap when it works, else none. */
  get defaultIsolation(): Isolation {
    return this.probes.bwrap.available ? "bwrap" : "none";
  }

  probe(isolation: Isolation): DriverProbe {
    return this.probes[isolation];
  }

  /** The driver for a sandbox's isolation (whether it can run now: probe()). */
  driver(isolation: Isolation): SandboxDriver {
    return this.drivers[isolation];
  }

  /** For health and `sbx daemon status`. */
  status(): IsolationStatus {
    return {
      default: this.defaultIsolation,
      bwrap: { ...this.probes.bwrap },
      none: { ...this.probes.none },
    };
  }
}
