import type { Plugin } from 'esbuild';

/** Builds the binary into `outdir` (dist/: berth.mjs and its chunks), with `plugins` first. */
export function buildBerth(options?: { outdir?: string; plugins?: Plugin[] }): Promise<void>;
