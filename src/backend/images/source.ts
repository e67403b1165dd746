// Where an image's manifest and blobs come from: a registry (registry.ts) or an OCI
// image layout directory (oci-layout.ts). pull.ts verifies whatever a source gives.

export interface FetchedDocument {
  bytes: Buffer;
  /** The media type the source said (a registry's Content-Type), if any. */
  contentType: string | null;
}

export interface ImageSource {
  /** How the source is named in messages. */
  readonly describe: string;
  /** The manifest or index the reference names. */
  root(): Promise<FetchedDocument>;
  /** A manifest by its digest (an index's entry). */
  manifest(digest: string): Promise<FetchedDocument>;
  /** A blob's bytes (checked by the store on the way in). */
  blob(digest: string, size: number): AsyncIterable<Uint8Array>;
}

/** A pull that failed: `retryable` when trying again may succeed (unreachable, 5xx, 429). */
export class ImagePullError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "ImagePullError";
  }
}
