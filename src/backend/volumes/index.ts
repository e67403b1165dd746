// Named volumes (docs/operations.md, "Named volumes"): what the rest of the backend may use.

export { type PlacedVolume, VolumeRegistry, type VolumeRegistryOptions } from "./registry.js";
