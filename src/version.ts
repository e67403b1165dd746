// Kept equal to package.json's version by a test (the Bun binary has no package.json).
export const VERSION = "0.1.0";
