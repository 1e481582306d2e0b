// Bundles berth into one ESM file, dist/berth.mjs, that `bin` points at: no tsx at run time.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/berth.ts'],
  outfile: 'dist/berth.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  minifySyntax: true,
  legalComments: 'none',
  banner: {
    js: "import { createRequire as __berthRequire } from 'node:module'; const require = __berthRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
