// Bundles berth into one ESM file, dist/berth.mjs, that `bin` points at: no tsx at run time.
//
// Only what a command needs is evaluated. esbuild wraps the modules that `src/cli/main.ts`
// imports dynamically (`api`, `status`, `log`) so they run only when called, but it hoists
// every `import … from 'node:…'` to the top of the file, where Node would load it at start:
// the HTTP stack and node:crypto for `berth --version`. So node's built-in modules are
// bundled as small stand-ins whose exports are getters that `require` the real module on
// first use: `berth status` never loads node:http, node:crypto or node:child_process.

import { builtinModules, createRequire } from 'node:module';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const builtins = new Set(builtinModules);

/** @type {import('esbuild').Plugin} */
const lazyBuiltins = {
  name: 'lazy-node-builtins',
  setup(on) {
    on.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtins.has(name)) return undefined;
      // The stand-in's own require of the real module stays a require.
      if (args.namespace === 'lazy-builtin') return { path: `node:${name}`, external: true };
      return { path: `node:${name}`, namespace: 'lazy-builtin' };
    });
    on.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, (args) => {
      const id = JSON.stringify(args.path);
      const keys = Object.keys(require(args.path)).filter((key) => key !== 'default');
      return {
        loader: 'js',
        contents: [
          `let real; const load = () => (real ??= require(${id}));`,
          `for (const key of ${JSON.stringify(keys)})`,
          '  Object.defineProperty(exports, key, { get: () => load()[key], enumerable: true });',
        ].join('\n'),
      };
    });
  },
};

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
  plugins: [lazyBuiltins],
  logLevel: 'warning',
});
