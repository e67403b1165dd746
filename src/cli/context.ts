// What every command's run() receives: the terminal, the environment, paths, config,
// and lazily opened services (the receipt store and the HTTP client load native
// modules and undici only when a command needs them).

import { ConfigStore } from "../config/config.js";
import { ensurePrivateDir, resolvePaths, type SbxPaths } from "../config/paths.js";
import type { Api } from "../client/api.js";
import { type Endpoint, type EndpointFlags, resolveEndpoint } from "../client/endpoint.js";
import type { ReceiptStore } from "../receipts/store.js";
import type { IO } from "./io/io.js";

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
  receipts(): Promise<ReceiptStore>;
  endpoint(flags?: EndpointFlags): Endpoint;
  /** A client for the endpoint; for the local profile the daemon is started on demand. */
  api(endpoint?: Endpoint): Promise<Api>;
  close(): Promise<void>;
}

export function createContext(io: IO, env: NodeJS.ProcessEnv, globals: GlobalOptions, interrupt: AbortSignal): Context {
  const paths = resolvePaths(env);
  const config = new ConfigStore(paths);
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
    async receipts() {
      if (!store) {
        const { ReceiptStore } = await import("../receipts/store.js");
        ensurePrivateDir(paths.stateDir);
        store = ReceiptStore.open(paths.receiptsDb);
      }
      return store;
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
        io.err(`sbx: warning: ${message}`);
      };
      clients.push(http);
      const api = new Api(http);
      if (ep.autoStart) {
        const { ensureLocalDaemon } = await import("./daemon-launcher.js");
        await ensureLocalDaemon(ctx, api);
      }
      return api;
    },
    async close() {
      store?.close();
      store = null;
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    },
  };
  return ctx;
}
