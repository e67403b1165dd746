// The image store and pulling (docs/images.md): what the rest of sbx uses of images.
// The CLI's `sbx image` works on the local backend's store through this file only.

export { type RootSummary, unpackImage } from "./layers.js";
export { type PullOptions, pullImage } from "./pull.js";
export { canonicalRef, type ImageRef, ImageRefError, isDigest, parseImageRef } from "./reference.js";
export { ImagePullError } from "./source.js";
export { type ImageRecord, ImageStore } from "./store.js";
