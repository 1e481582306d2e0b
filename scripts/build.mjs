// Bundles berth into one ESM file, dist/berth.mjs, that `bin` points at: no tsx at run time.
//
// Only what a command needs is evaluated. esbuild wraps the modules that `src/cli/main.ts`
// imports dynamically (`api`, `status`, `log`) so they run only when called, but it hoists
// every `import … from 'node:…'` to the top of the file, where Node would load it at start:
// the HTTP stack and node:crypto for `berth --version`. So node's built-in modules are
// bundled as small stand-ins whose exports are getters that `require` the real module on
// first use: `berth status` never loads node:http, node:crypto or node:child_process.
//
// Nor is what a command does not need parsed. The libraries that only `berth api` (hono,
// @hono/node-server, jose) or a PostgreSQL store (pg) use are half the bundle, and V8
// scans every function of a file even when it never runs one: 3 ms of each start. Each
// group is bundled on its own and kept in the file compressed (brotli, as base64), which
// is scanned as one short string; it becomes a module (a data: URL import) when a module
// that needs it is first evaluated, and only `import()` reaches those, never the start.
// jsdiff is called from code that is not async (a plan is worked out in one go), so its
// group is made a module in place, synchronously, on the first use of one of its exports:
// commands that show no diff never decompress or parse it.

import { builtinModules, createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync } from 'node:zlib';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);
const builtins = new Set(builtinModules);
/**
 * Built-ins Node has loaded before berth's first line. Their stand-in is an ES module that
 * reads each export once, so no copy is made for every module that imports it (1 ms) and no
 * `import` of the real module: Node's ES facade of node:fs reads every export, getters
 * too, and its `ReadStream` getter loads the streams (4 ms of each start). A getter is
 * left out; an import of one fails the build.
 */
const LOADED_AT_START = new Set(['fs', 'fs/promises', 'path']);

/** @type {import('esbuild').Plugin} */
const lazyBuiltins = {
  name: 'lazy-node-builtins',
  setup(on) {
    on.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!builtins.has(name)) return undefined;
      // The stand-in's own require of the real module stays a require.
      if (args.namespace === 'lazy-builtin' || args.namespace === 'start-builtin')
        return { path: `node:${name}`, external: true };
      if (LOADED_AT_START.has(name)) return { path: `node:${name}`, namespace: 'start-builtin' };
      return { path: `node:${name}`, namespace: 'lazy-builtin' };
    });
    on.onLoad({ filter: /.*/, namespace: 'start-builtin' }, (args) => {
      const real = require(args.path);
      const values = Object.entries(Object.getOwnPropertyDescriptors(real))
        .filter(([key, described]) => key !== 'default' && 'value' in described)
        .map(([key]) => key);
      return {
        loader: 'js',
        contents: [
          `const real = require(${JSON.stringify(args.path)});`,
          `export const { ${values.join(', ')} } = real;`,
        ].join('\n'),
      };
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

/** The groups kept as text, each the bare specifiers berth imports from it. */
const LAZY_GROUPS = {
  http: ['hono/hono-base', 'hono/factory', 'hono/router/reg-exp-router', '@hono/node-server'],
  jose: ['jose'],
  pg: ['pg'],
  // Only `berth openapi` converts schemas to JSON Schema.
  openapi: ['@valibot/to-json-schema'],
  // The standards' ciphers and hashes for age, which the Node process never loads: it
  // seals on node:crypto (src/vault/node-primitives.ts).
  noble: [
    '@noble/ciphers/chacha.js',
    '@noble/hashes/hkdf.js',
    '@noble/hashes/hmac.js',
    '@noble/hashes/sha2.js',
  ],
};

/** The groups kept as text and made a module on the first use of an export: specifier → group. */
const ON_FIRST_USE = { diff: 'diff' };

/** A group bundled as one CommonJS module, compressed, as base64. */
async function onFirstUseText(group, specifier) {
  const built = await build({
    stdin: {
      contents: `module.exports = require(${JSON.stringify(specifier)});`,
      resolveDir: process.cwd(),
      sourcefile: `berth-lazy-${group}.cjs`,
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  });
  return brotliCompressSync(built.outputFiles[0].contents).toString('base64');
}

/** @type {import('esbuild').Plugin} */
const onFirstUse = {
  name: 'on-first-use',
  setup(on) {
    on.onResolve({ filter: /^[@a-z]/ }, (args) =>
      args.path in ON_FIRST_USE ? { path: args.path, namespace: 'berth-on-first-use' } : undefined,
    );
    // A stand-in whose exports are getters: the first one read evaluates the group, as
    // Node evaluates a CommonJS file, with its own name in stack frames.
    on.onLoad({ filter: /.*/, namespace: 'berth-on-first-use' }, async (args) => {
      const group = ON_FIRST_USE[args.path];
      const keys = Object.keys(require(args.path)).filter((key) => key !== 'default');
      return {
        loader: 'js',
        contents: [
          'let real;',
          'function load() {',
          '  if (real) return real;',
          "  const { brotliDecompressSync } = require('node:zlib');",
          "  const { runInThisContext } = require('node:vm');",
          `  const text = brotliDecompressSync(Buffer.from('${await onFirstUseText(group, args.path)}', 'base64')).toString('utf8');`,
          '  const module = { exports: {} };',
          `  runInThisContext('(function (module, exports) {' + text + '\\n})', { filename: 'berth:${group}' })(module, module.exports);`,
          '  real = module.exports;',
          '  return real;',
          '}',
          `for (const key of ${JSON.stringify(keys)})`,
          '  Object.defineProperty(exports, key, { get: () => load()[key], enumerable: true });',
        ].join('\n'),
      };
    });
  },
};

/** pg requires its optional native binding only through `pg.native`, which berth never reads. */
/** @type {import('esbuild').Plugin} */
const withoutPgNative = {
  name: 'without-pg-native',
  setup(on) {
    on.onResolve({ filter: /^pg-native$/ }, () => ({ path: 'pg-native', namespace: 'absent' }));
    on.onLoad({ filter: /.*/, namespace: 'absent' }, () => ({
      contents: "throw new Error('berth does not bundle pg-native');",
    }));
  },
};

/** A group bundled as one ES module, compressed, as base64: each specifier's exports under `m<i>`. */
async function lazyGroupText(group, specifiers) {
  const built = await build({
    stdin: {
      contents: specifiers
        .map((spec, i) => `export * as m${i} from ${JSON.stringify(spec)};`)
        .join('\n'),
      resolveDir: process.cwd(),
      sourcefile: `berth-lazy-${group}.mjs`,
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Names are kept, for stack frames and for the package test, which reads its imports.
    minifySyntax: true,
    minifyWhitespace: true,
    legalComments: 'none',
    // A data: module has no file to resolve from; the built-ins need none. CommonJS code
    // (pg) requires them through this.
    banner: {
      js: "import { createRequire } from 'node:module'; const require = createRequire('/');",
    },
    // Stack frames name the group, not the whole data: URL.
    footer: { js: `//# sourceURL=berth:${group}` },
    plugins: [withoutPgNative],
    write: false,
    logLevel: 'warning',
  });
  return brotliCompressSync(built.outputFiles[0].contents).toString('base64');
}

/** @type {import('esbuild').Plugin} */
const lazyGroups = {
  name: 'lazy-groups',
  setup(on) {
    const groupOf = new Map(
      Object.entries(LAZY_GROUPS).flatMap(([group, specs]) => specs.map((spec) => [spec, group])),
    );
    on.onResolve({ filter: /^[@a-z]/ }, (args) =>
      groupOf.has(args.path) ? { path: args.path, namespace: 'berth-lazy' } : undefined,
    );
    on.onResolve({ filter: /^berth-lazy-group:/ }, (args) => ({
      path: args.path.slice('berth-lazy-group:'.length),
      namespace: 'berth-lazy-group',
    }));
    // The group: its text made a module, awaited where it is first needed.
    on.onLoad({ filter: /.*/, namespace: 'berth-lazy-group' }, async (args) => ({
      loader: 'js',
      contents: [
        "import { brotliDecompressSync } from 'node:zlib';",
        `const text = brotliDecompressSync(Buffer.from('${await lazyGroupText(args.path, LAZY_GROUPS[args.path])}', 'base64'));`,
        "export const group = await import('data:text/javascript;base64,' + text.toString('base64'));",
      ].join('\n'),
    }));
    // A specifier: its exports, by name, from its part of the group.
    on.onLoad({ filter: /.*/, namespace: 'berth-lazy' }, async (args) => {
      const group = groupOf.get(args.path);
      const index = LAZY_GROUPS[group].indexOf(args.path);
      const names = Object.keys(await import(args.path)).filter((name) =>
        /^[A-Za-z_$][\w$]*$/.test(name),
      );
      const named = names.filter((name) => name !== 'default');
      return {
        loader: 'js',
        contents: [
          `import { group } from 'berth-lazy-group:${group}';`,
          `const part = group.m${index};`,
          ...(names.includes('default') ? ['export default part.default;'] : []),
          `export const { ${named.join(', ')} } = part;`,
        ].join('\n'),
      };
    });
  },
};

/**
 * Builds the binary at `outfile`. `plugins` go before berth's own: the vault bench builds a
 * second binary whose seal is bypassed, to time what a converge cost before sealing.
 * @param {{ outfile?: string, plugins?: import('esbuild').Plugin[] }} options
 */
export async function buildBerth({ outfile = 'dist/berth.mjs', plugins = [] } = {}) {
  await build({
    entryPoints: ['src/berth.ts'],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minifySyntax: true,
    legalComments: 'none',
    banner: {
      js: "import { createRequire as __berthRequire } from 'node:module'; const require = __berthRequire(import.meta.url);",
    },
    plugins: [...plugins, lazyGroups, onFirstUse, lazyBuiltins],
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildBerth();
