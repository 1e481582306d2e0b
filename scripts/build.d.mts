import type { Plugin } from 'esbuild';

/** Builds the binary at `outfile` (dist/berth.mjs), with `plugins` before berth's own. */
export function buildBerth(options?: { outfile?: string; plugins?: Plugin[] }): Promise<void>;
