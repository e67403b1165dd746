// The local daemon is started by the CLI, never by the HTTP client (a transport). A
// request of the local profile that finds nobody listening on its socket (absent, or
// refusing: provably nothing was sent) starts the daemon here, and is then sent once,
// for the first time: its receipt records one attempt. A start that fails is that
// request's answer: not sent, saying why. The daemon is started up front instead when
// its socket is absent before anything is sent (src/cli/context.ts).

import type { HttpObserved } from "../client/observed.js";
import type { RawOpen, Requests, SendRequest, SseOpen } from "../client/http.js";
import { redact } from "../client/redact.js";

/** Connect failures that prove the backend is not there: its socket is absent, or nothing listens on it. */
const NOT_LISTENING = new Set(["ENOENT", "ECONNREFUSED"]);

export class StartingLocalDaemon implements Requests {
  private starting: Promise<void> | null = null;

  constructor(
    private readonly http: Requests,
    /** Starts the local daemon (ensureLocalDaemon); throws why it could not. */
    private readonly start: () => Promise<void>,
  ) {}

  get endpoint() {
    return this.http.endpoint;
  }

  send(req: SendRequest): Promise<HttpObserved> {
    return this.startingIfNeeded(req, () => this.http.send(req));
  }

  openStream(req: SendRequest): Promise<HttpObserved | SseOpen> {
    return this.startingIfNeeded(req, () => this.http.openStream(req));
  }

  openRaw(req: SendRequest): Promise<HttpObserved | RawOpen> {
    return this.startingIfNeeded(req, () => this.http.openRaw(req));
  }

  close(): Promise<void> {
    return this.http.close();
  }

  private async startingIfNeeded<T>(
    req: SendRequest,
    once: () => Promise<T | HttpObserved>,
  ): Promise<T | HttpObserved> {
    const first = await once();
    // A streamed body may have been read from already: only bytes in hand are sent after a start.
    const resendable = req.body === undefined || Buffer.isBuffer(req.body);
    const observed = first as HttpObserved;
    if (
      observed.kind !== "transport" ||
      observed.sent ||
      !NOT_LISTENING.has(observed.code) ||
      req.startBackend === false ||
      !resendable
    ) {
      return first;
    }
    try {
      // Requests of one command that find the daemon down wait for one start.
      this.starting ??= this.start().finally(() => {
        this.starting = null;
      });
      await this.starting;
    } catch (err) {
      const e = err as Error & { code?: unknown; hint?: unknown };
      const code = typeof e.code === "string" ? e.code : "backend_not_started";
      const message = redact(
        `${e.message ?? String(err)}${e.hint ? ` (${String(e.hint)})` : ""}`,
        this.endpoint.apiKey,
      );
      return { kind: "transport", sent: false, code, message };
    }
    return once();
  }
}
