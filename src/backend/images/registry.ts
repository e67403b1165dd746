// A client of the OCI distribution API, only what pulling needs (docs/images.md,
// "Registries"): GET /v2/<repo>/manifests/<tag|digest> and /v2/<repo>/blobs/<digest>,
// anonymous, or with the bearer token a `WWW-Authenticate: Bearer realm=…` challenge
// names (asked for anonymously, scope repository:<repo>:pull). TLS always, except to
// this machine's loopback or a registry named in SBX_INSECURE_REGISTRIES (comma-
// separated host[:port]): there HTTPS is tried first and plain HTTP after, as docker
// does. A token realm gets the same rule. Nothing sbx is given is ever printed.

import { hostOf, isLoopbackHost } from "./reference.js";
import { MANIFEST_ACCEPT } from "./manifest.js";
import type { FetchedDocument, ImageSource } from "./source.js";
import { ImagePullError } from "./source.js";

/** Largest manifest, index or token answer read (bytes). */
const DOCUMENT_LIMIT = 4 * 1024 * 1024;

export interface RegistryOptions {
  /** Registries (host[:port]) where plain HTTP is allowed besides the loopback. */
  insecure?: readonly string[];
  fetch?: typeof fetch;
}

export function insecureFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  return (env.SBX_INSECURE_REGISTRIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export class RegistrySource implements ImageSource {
  private scheme: "https" | "http" | null = null;
  private token: string | null = null;
  private readonly fetch: typeof fetch;
  readonly describe: string;

  constructor(
    private readonly registry: string,
    private readonly repository: string,
    private readonly reference: string,
    private readonly opts: RegistryOptions = {},
  ) {
    this.fetch = opts.fetch ?? globalThis.fetch;
    this.describe = `${registry}/${repository}`;
  }

  private plainAllowed(hostPort: string): boolean {
    return isLoopbackHost(hostOf(hostPort)) || (this.opts.insecure ?? []).includes(hostPort);
  }

  private host(): string {
    return this.registry === "docker.io" ? "registry-1.docker.io" : this.registry;
  }

  async root(): Promise<FetchedDocument> {
    return this.manifest(this.reference);
  }

  async manifest(reference: string): Promise<FetchedDocument> {
    const res = await this.get(`manifests/${reference}`, MANIFEST_ACCEPT);
    const bytes = await readLimited(res, DOCUMENT_LIMIT, `the manifest of ${this.describe}`);
    return { bytes, contentType: res.headers.get("content-type")?.split(";")[0]?.trim() ?? null };
  }

  async *blob(digest: string): AsyncGenerator<Uint8Array> {
    const res = await this.get(`blobs/${digest}`, "*/*");
    if (res.body === null) return;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) yield chunk;
  }

  /** One GET below /v2/<repo>/, answering one bearer challenge; anything but 200 is refused with the registry's words. */
  private async get(pathTail: string, accept: string): Promise<Response> {
    const url = async () => `${await this.base()}/v2/${this.repository}/${pathTail}`;
    let res = await this.send(await url(), accept);
    if (res.status === 401) {
      const challenge = res.headers.get("www-authenticate") ?? "";
      await res.body?.cancel();
      this.token = await this.bearerToken(challenge);
      res = await this.send(await url(), accept);
    }
    if (res.status !== 200) {
      const words = (await readLimited(res, 4096, "the answer").catch(() => Buffer.alloc(0))).toString("utf8").trim();
      const retry = res.status === 429 || res.status >= 500;
      throw new ImagePullError(
        `${this.describe}: GET ${pathTail} answered ${res.status}${words === "" ? "" : `: ${oneLine(words)}`}`,
        retry,
      );
    }
    return res;
  }

  private async send(url: string, accept: string): Promise<Response> {
    const headers: Record<string, string> = { accept };
    if (this.token !== null) headers.authorization = `Bearer ${this.token}`;
    try {
      return await this.fetch(url, { headers, redirect: "follow" });
    } catch (err) {
      throw new ImagePullError(`${this.describe} cannot be reached: ${causeOf(err)}`, true);
    }
  }

  /** https://host, or http://host where plain HTTP is allowed and HTTPS is not answered. */
  private async base(): Promise<string> {
    if (this.scheme === null) {
      const host = this.host();
      if (!this.plainAllowed(host)) this.scheme = "https";
      else {
        try {
          const r = await this.fetch(`https://${host}/v2/`, { redirect: "manual" });
          await r.body?.cancel();
          this.scheme = "https";
        } catch {
          this.scheme = "http";
        }
      }
    }
    return `${this.scheme}://${this.host()}`;
  }

  private async bearerToken(challenge: string): Promise<string> {
    const m = /^\s*(\w+)\s*(.*)$/.exec(challenge);
    const scheme = m?.[1]?.toLowerCase();
    if (scheme === "basic") {
      throw new ImagePullError(
        `${this.describe} asks for a user name and password (basic auth), which sbx does not send yet`,
        false,
      );
    }
    if (scheme !== "bearer") {
      throw new ImagePullError(
        `${this.describe} refused anonymous access and named no bearer realm (${oneLine(challenge) || "no WWW-Authenticate"})`,
        false,
      );
    }
    const params = new Map<string, string>();
    for (const p of m![2]!.matchAll(/(\w+)="([^"]*)"/g)) params.set(p[1]!.toLowerCase(), p[2]!);
    const realm = params.get("realm");
    let realmUrl: URL;
    try {
      realmUrl = new URL(realm ?? "");
    } catch {
      throw new ImagePullError(`${this.describe}: its bearer challenge names no valid realm`, false);
    }
    if (realmUrl.protocol !== "https:" && !(realmUrl.protocol === "http:" && this.plainAllowed(realmUrl.host))) {
      throw new ImagePullError(
        `${this.describe}: its token realm ${realmUrl.origin} is not HTTPS (plain HTTP only to the loopback or an insecure registry)`,
        false,
      );
    }
    const service = params.get("service");
    if (service !== undefined) realmUrl.searchParams.set("service", service);
    realmUrl.searchParams.set("scope", params.get("scope") ?? `repository:${this.repository}:pull`);
    let res: Response;
    try {
      res = await this.fetch(realmUrl, { headers: { accept: "application/json" } });
    } catch (err) {
      throw new ImagePullError(`the token service of ${this.describe} cannot be reached: ${causeOf(err)}`, true);
    }
    const body = await readLimited(res, DOCUMENT_LIMIT, "the token answer");
    if (res.status !== 200) {
      throw new ImagePullError(`the token service of ${this.describe} answered ${res.status}`, res.status >= 500);
    }
    let token: unknown;
    try {
      const doc = JSON.parse(body.toString("utf8")) as { token?: unknown; access_token?: unknown };
      token = doc.token ?? doc.access_token;
    } catch {
      token = undefined;
    }
    if (typeof token !== "string" || token === "" || /[\r\n]/.test(token)) {
      throw new ImagePullError(`the token service of ${this.describe} gave no token`, false);
    }
    return token;
  }
}

async function readLimited(res: Response, limit: number, what: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  if (res.body === null) return Buffer.alloc(0);
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    total += chunk.length;
    if (total > limit) {
      await res.body.cancel().catch(() => {});
      throw new ImagePullError(`${what} is larger than ${limit} bytes: refused`, false);
    }
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, " ");
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}
