// What every command's run() receives: the terminal, the environment, paths, config,
// and lazily opened services (the receipt store and the HTTP client load native
// modules and the HTTP client only when a command needs them).

import fs from "node:fs";
import { ConfigStore } from "../config/config.js";
import { checkLocalDaemonDirs, ensurePrivateDir, madeHome, resolvePaths, type SbxPaths } from "../config/paths.js";
import type { Api } from "../client/api.js";
import { type Endpoint, type EndpointFlags, resolveEndpoint } from "../client/endpoint.js";
import type { ReceiptStore } from "../receipts/store.js";
import type { IO } from "./io/io.js";
import { knownSecrets, redactForDisplay } from "./secrets.js";

export interface GlobalOptions {
  profile?: string;
  apiUrl?: string;
  json?: boolean;
  color?: boolean;
  quiet?: boolean;
  verbose?: boolean;
}

export interface Context {
  io: IO;
  env: NodeJS.ProcessEnv;
  paths: SbxPaths;
  config: ConfigStore;
  globals: GlobalOptions;
  /** Aborted when the user interrupts sbx (SIGINT/SIGTERM). */
  interrupt: AbortSignal;
  /**
   * While registered, the first Ctrl-C calls `handler` (e.g. to cancel an execution)
   * instead of aborting `interrupt`; the next one aborts. Returns the unregister.
   */
  onFirstInterrupt(handler: () => void): () => void;
  /**
   * Creates a directory of sbx's (private, as ensurePrivateDir) and says once, on
   * stderr, when that made a new home: a mistyped SBX_HOME must not go unnoticed.
   */
  ensurePrivateDir(dir: string, within?: string): void;
  /** The receipt store, opened (and migrated) on first use, waiting while another process holds it. */
  receipts(): Promise<ReceiptStore>;
  /** Runs a write on the receipt store, waiting while another process holds it (src/cli/store-access.ts). */
  storeWrite<T>(work: (store: ReceiptStore) => T): Promise<T>;
  endpoint(flags?: EndpointFlags): Endpoint;
  /** A client for the endpoint; for the local profile the daemon is started when nobody listens. */
  api(endpoint?: Endpoint): Promise<Api>;
  close(): Promise<void>;
}

export function createContext(
  io: IO,
  env: NodeJS.ProcessEnv,
  globals: GlobalOptions,
  interrupt: AbortSignal,
  onFirstInterrupt: (handler: () => void) => () => void = () => () => undefined,
  opts: { leaveStoreOpen?: boolean } = {},
): Context {
  const paths = resolvePaths(env);
  const announced = new Set<string>();
  /** Says where a home was created, once per home and command. */
  const noteCreated = (created: string | undefined) => {
    for (const [home, what] of homesOf(paths, env)) {
      if (announced.has(home) || !madeHome(created, home)) continue;
      announced.add(home);
      ctx.io.info(`sbx: created ${what.replace("@", home)}`);
    }
  };
  const config = new ConfigStore(paths, noteCreated);
  let store: ReceiptStore | null = null;
  const clients: Array<{ close(): Promise<void> }> = [];
  /** Each backend warning is said once per command. */
  const warned = new Set<string>();
  const ctx: Context = {
    io,
    env,
    paths,
    config,
    globals,
    interrupt,
    onFirstInterrupt,
    ensurePrivateDir(dir, within) {
      noteCreated(ensurePrivateDir(dir, within));
    },
    async receipts() {
      if (!store) {
        const [{ ReceiptStore }, { redactSecrets }, { STATEMENT_BUSY_MS, whileStoreBusy }] = await Promise.all([
          import("../receipts/store.js"),
          import("../client/redact.js"),
          import("./store-access.js"),
        ]);
        await ReceiptStore.preload();
        ctx.ensurePrivateDir(paths.stateDir);
        // Every key this sbx knows stays out of the store, whichever backend an answer came from.
        const secrets = knownSecrets(env, config);
        store = await whileStoreBusy(ctx, paths.receiptsDb, () =>
          ReceiptStore.open(paths.receiptsDb, {
            busyTimeoutMs: STATEMENT_BUSY_MS,
            redact: (text, what) => redactSecrets(text, secrets, what),
          }),
        );
      }
      return store;
    },
    async storeWrite(work) {
      const opened = await ctx.receipts();
      const { whileStoreBusy } = await import("./store-access.js");
      return whileStoreBusy(ctx, paths.receiptsDb, () => work(opened));
    },
    endpoint(flags) {
      return resolveEndpoint(
        { profile: flags?.profile ?? globals.profile, apiUrl: flags?.apiUrl ?? globals.apiUrl },
        env,
        config,
        paths,
      );
    },
    async api(endpoint) {
      const ep = endpoint ?? ctx.endpoint();
      const [{ HttpClient }, { Api }] = await Promise.all([import("../client/http.js"), import("../client/api.js")]);
      const http = new HttpClient(ep, interrupt);
      http.onWarning = (message) => {
        if (warned.has(message)) return;
        warned.add(message);
        // What a backend says is shown, so it is kept free of keys like everything shown.
        io.err(`sbx: warning: ${redactForDisplay(ctx, message)}`);
      };
      clients.push(http);
      if (!ep.autoStart) return new Api(http);
      // The local daemon is the CLI's to start. No health check first: requests go
      // straight to the socket. It is started up front only when its socket is absent
      // (before any receipt is written); a socket that refuses is started on the
      // refusal, and the request then sent once (src/cli/local-start.ts).
      checkLocalDaemonDirs(paths);
      const start = async () => (await import("./daemon-launcher.js")).ensureLocalDaemon(ctx, ep);
      if (ep.socketPath !== null && !fs.existsSync(ep.socketPath)) await start();
      const { StartingLocalDaemon } = await import("./local-start.js");
      return new Api(new StartingLocalDaemon(http, start));
    },
    async close() {
      // See Runtime.exitsAfter: the process's exit is the store's close.
      if (!opts.leaveStoreOpen) store?.close();
      store = null;
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    },
  };
  return ctx;
}

/** The homes sbx may create, each with what is said when it is new (@: where). */
function homesOf(paths: SbxPaths, env: NodeJS.ProcessEnv): Array<[string, string]> {
  if (paths.stateDir === paths.configDir) {
    const from = env.SBX_HOME?.trim() ? " (SBX_HOME): it has no receipts, sandboxes or daemon of another home" : "";
    return [[paths.stateDir, `a new sbx home at @${from}`]];
  }
  return [
    [paths.stateDir, "a new sbx state directory at @ (receipts, sandboxes, the local daemon)"],
    [paths.configDir, "a new sbx config directory at @"],
  ];
}
