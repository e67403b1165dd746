// The backend's drivers, probed once at start-up: which isolation `auto` means on
// this machine, and the driver for each sandbox (docs/drivers.md).

import type { Isolation, IsolationStatus } from "../../protocol/types.js";
import { BwrapDriver, type BwrapDriverOptions } from "./bwrap/driver.js";
import type { DriverHost, DriverProbe, SandboxDriver } from "./driver.js";
import { CgroupLimits } from "./limits/cgroups.js";
import { Limiter } from "./limits/limiter.js";
import { WorkspaceDisks } from "./limits/workspace-disk.js";
import { NoneDriver } from "./none.js";
import { findOnPath } from "./bwrap/path-lookup.js";
import { probeUserNet, type UserNetProbe } from "./bwrap/user-net.js";
import { SlurmCluster, type SlurmSettings } from "./slurm/cluster.js";
import { SlurmDriver } from "./slurm/driver.js";
import { EgressHub, type EgressHubOptions } from "../egress/index.js";

export interface DriverSetOptions {
  /** Who the daemon runs as and its PATH (daemonHost(), where the backend starts). */
  host: DriverHost;
  bwrap?: Omit<BwrapDriverOptions, "host" | "userNet" | "egress">;
  /** Pretend bwrap cannot run here (tests of the fallback, `--isolation none` daemons). */
  disableBwrap?: boolean;
  /** The backend's data directory: its sandboxes' cgroups are named after it (limits/cgroups.ts). None: no cgroups. */
  dataDir?: string;
  /** Use no cgroups (tests of the rlimit fallback, as on a machine without them). */
  noCgroups?: boolean;
  /** slirp4netns (tests: one that is not there); default: found on PATH. */
  userNetProgram?: string;
  /** The tun device the user-network probe tries (tests: a device node of their own); default /dev/net/tun. */
  tunDevice?: string;
  /**
   * Place sandboxes on a Slurm cluster (sbx daemon run --driver slurm): `auto` is then
   * slurm. `env` is where SLURM_CONF (and MUNGE_SOCKET) are read from: the daemon's.
   */
  slurm?: SlurmSettings & { env: NodeJS.ProcessEnv };
  /** The egress proxies' resolver and bounds (network allow-list; tests name their destinations here). */
  egress?: EgressHubOptions;
}

export class DriverSet {
  private readonly drivers: Record<Isolation, SandboxDriver>;
  private readonly probes: Record<Isolation, DriverProbe>;
  /** The sandboxes' resource limits: whether and how each is enforced here. */
  readonly limits: Limiter;
  /** Workspaces with a disk limit: file systems of their own. */
  readonly workspaceDisks: WorkspaceDisks;
  /** What carries network mode `user` (slirp4netns), probed once. */
  readonly userNetwork: UserNetProbe;
  /** Each allow-list sandbox's egress proxy and its recent connections. */
  readonly egress: EgressHub;

  constructor(opts: DriverSetOptions) {
    this.egress = new EgressHub(opts.egress);
    this.userNetwork = probeUserNet({
      hostPath: opts.host.path,
      asRoot: opts.host.uid === 0,
      ...(opts.userNetProgram !== undefined && { program: opts.userNetProgram }),
      ...(opts.bwrap?.program !== undefined && { bwrap: opts.bwrap.program }),
      ...(opts.tunDevice !== undefined && { tunDevice: opts.tunDevice }),
    });
    let bwrap: BwrapDriver | null = null;
    const searchPath = `${opts.host.path}:/usr/sbin:/usr/bin:/sbin:/bin`;
    this.workspaceDisks = new WorkspaceDisks({
      asRoot: opts.host.uid === 0,
      find: (program) => findOnPath(program, searchPath),
    });
    const dataDir = opts.dataDir;
    this.limits = new Limiter({
      cgroups:
        opts.noCgroups === true
          ? { problem: "cgroups are turned off for this backend" }
          : dataDir === undefined
            ? { problem: "this backend has no data directory to name cgroups after" }
            : new CgroupLimits({ dataDir }),
      prlimit: findOnPath("prlimit", searchPath),
      ownUids: opts.host.uid === 0,
      tmpSize: () => bwrap?.tmpSizeSupport() ?? { supported: false, reason: "bwrap is not set up" },
      workspace: this.workspaceDisks,
    });
    bwrap = new BwrapDriver({
      ...opts.bwrap,
      host: opts.host,
      limits: this.limits,
      userNet: this.userNetwork,
      egress: this.egress,
    });
    const slurm =
      opts.slurm === undefined
        ? null
        : new SlurmDriver({
            host: opts.host,
            cluster: new SlurmCluster(opts.slurm, opts.slurm.env, searchPath),
            dataDir: dataDir ?? ".",
          });
    this.slurmConfigured = slurm !== null;
    this.drivers = { bwrap, none: new NoneDriver(opts.host), slurm: slurm ?? new NoneDriver(opts.host) };
    this.probes = {
      slurm:
        slurm === null
          ? { available: false, reason: "this daemon was not started with --driver slurm", version: null }
          : slurm.probe(),
      none: this.drivers.none.probe(),
      bwrap: opts.disableBwrap
        ? { available: false, reason: "bwrap was disabled for this daemon (--no-bwrap)", version: null }
        : bwrap.probe(),
    };
  }

  /** Whether the daemon places sandboxes on Slurm (--driver slurm). */
  readonly slurmConfigured: boolean;

  /** What `auto` means here: slurm when the daemon was started with it, else bwrap when it works, else none. */
  get defaultIsolation(): Isolation {
    if (this.slurmConfigured) return "slurm";
    return this.probes.bwrap.available ? "bwrap" : "none";
  }

  probe(isolation: Isolation): DriverProbe {
    return this.probes[isolation];
  }

  /** The driver for a sandbox's isolation (whether it can run now: probe()). */
  driver(isolation: Isolation): SandboxDriver {
    return this.drivers[isolation];
  }

  /** The backend closes: every live sandbox ends. */
  async shutdown(): Promise<void> {
    await Promise.all(Object.values(this.drivers).map((d) => d.shutdown?.()));
  }

  /** A simulated crash: what runs is left to restart recovery (see SandboxDriver.abandon). */
  abandon(): void {
    for (const d of Object.values(this.drivers)) d.abandon?.();
  }

  /** For health and `sbx daemon status`. */
  status(): IsolationStatus {
    return {
      default: this.defaultIsolation,
      bwrap: { ...this.probes.bwrap },
      none: { ...this.probes.none },
      ...(this.slurmConfigured && { slurm: { ...this.probes.slurm } }),
      user_network: {
        available: this.userNetwork.available,
        reason: this.userNetwork.reason,
        version: this.userNetwork.program === null ? null : "slirp4netns",
      },
    };
  }
}
