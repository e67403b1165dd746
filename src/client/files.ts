// API calls for files in and out of a sandbox (docs/protocol.md, "Files"). Uploads
// and downloads stream; an upload is a mutation sent once with its Idempotency-Key.
// The same calls reach a named volume's files (/volume/{volume}/files).

import { type QueryParams, routePath } from "../protocol/routes.js";
import {
  FILE_MODE_HEADER,
  FILE_TYPE_HEADER,
  type FileStat,
  type FileUpload,
  TAR_CONTENT_TYPE,
} from "../protocol/types.js";
import { answerOrThrow } from "./api.js";
import type { Requests } from "./http.js";

export interface Download {
  type: "file" | "directory" | "symlink";
  /** Permission bits of what was read (a file's, or the directory's). */
  mode: number | null;
  /** A file's bytes, or a tar stream of the directory (or of the file, when asked for as tar). */
  chunks: AsyncIterable<Uint8Array>;
  /** Bytes the answer announced (a raw file), or null. */
  size: number | null;
}

/** Whose files: a sandbox's workspace (its name or id), or (`volume`) the named volume `sandbox`. */
export interface FilesPlace {
  sandbox: string;
  volume?: boolean;
}

/** How a place is written in `sbx cp`: NAME, or volume/NAME. */
export function placeName(at: FilesPlace | string): string {
  if (typeof at === "string") return at;
  return at.volume ? `volume/${at.sandbox}` : at.sandbox;
}

function filesRoute(at: FilesPlace | string, verb: "get" | "put", query: QueryParams): string {
  if (typeof at === "string") return routePath(`files.${verb}`, { id: at }, query);
  return at.volume
    ? routePath(`volume.files.${verb}`, { volume: at.sandbox }, query)
    : routePath(`files.${verb}`, { id: at.sandbox }, query);
}

/** Uploads and downloads have no deadline of their own: they take as long as the bytes do. */
const TRANSFER_DEADLINE_MS = 24 * 60 * 60 * 1000;

export class FilesApi {
  constructor(readonly http: Requests) {}

  /** What a path names, or null when nothing is there; with `nofollow`, a symlink there as itself. */
  async stat(
    at: FilesPlace | string,
    path: string,
    opts: { nofollow?: boolean; usage?: boolean } = {},
  ): Promise<FileStat | null> {
    const obs = await this.http.send({
      method: "GET",
      path: filesRoute(at, "get", { path, stat: true, nofollow: opts.nofollow === true, usage: opts.usage === true }),
      deadlineMs: 30_000,
    });
    if (obs.kind === "answer" && obs.status === 404) {
      const code = safeJson(obs.body)?.error?.code;
      if (code === "file_not_found") return null;
    }
    return answerOrThrow(obs, `${placeName(at)}:${path}`).body as FileStat;
  }

  /** Sends a file's bytes (or a tar stream) to `path`, once, with the key. */
  async upload(
    at: FilesPlace | string,
    path: string,
    body: AsyncIterable<Uint8Array>,
    opts: { tar: boolean; mode?: number; idempotencyKey: string; size?: number },
  ): Promise<FileUpload> {
    const obs = await this.http.send({
      method: "PUT",
      path: filesRoute(at, "put", {
        path,
        mode: opts.mode === undefined ? undefined : `0${(opts.mode & 0o7777).toString(8)}`,
        size: opts.size,
      }),
      body,
      contentType: opts.tar ? TAR_CONTENT_TYPE : "application/octet-stream",
      idempotencyKey: opts.idempotencyKey,
      deadlineMs: TRANSFER_DEADLINE_MS,
    });
    return answerOrThrow(obs, `copy to ${placeName(at)}:${path}`, "PUT").body as FileUpload;
  }

  /**
   * Reads `path`: a file's bytes, or (a directory, or `tar`) a tar stream; with
   * `nofollow` (and `tar`), a symlink there as itself.
   */
  async download(at: FilesPlace | string, path: string, opts: { tar: boolean; nofollow?: boolean }): Promise<Download> {
    const r = await this.http.openRaw({
      method: "GET",
      path: filesRoute(at, "get", { path, nofollow: opts.nofollow === true }),
      ...(opts.tar && { accept: TAR_CONTENT_TYPE }),
      deadlineMs: TRANSFER_DEADLINE_MS,
    });
    if (r.kind !== "raw") {
      answerOrThrow(r, `${placeName(at)}:${path}`);
      throw new Error("unreachable: a 2xx answer is handed over raw");
    }
    const mode = r.headers[FILE_MODE_HEADER.toLowerCase()];
    const size = r.headers["content-length"];
    return {
      type: fileType(r.headers[FILE_TYPE_HEADER.toLowerCase()]),
      mode: mode !== undefined && /^[0-7]+$/.test(mode) ? Number.parseInt(mode, 8) : null,
      chunks: r.chunks,
      size: size !== undefined && !(r.headers["content-type"] ?? "").startsWith(TAR_CONTENT_TYPE) ? Number(size) : null,
    };
  }
}

function fileType(header: string | undefined): Download["type"] {
  return header === "directory" || header === "symlink" ? header : "file";
}

function safeJson(text: string): { error?: { code?: string } } | null {
  try {
    return JSON.parse(text) as { error?: { code?: string } };
  } catch {
    return null;
  }
}
