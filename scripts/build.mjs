// Bundles berth into dist/: the entry dist/berth.mjs, which `bin` points at, and its chunks
// in dist/chunks/. No tsx and no package at run time: the libraries are bundled in.
//
// Split at the source's dynamic `import()`s: each command, each machine kind, the API's
// HTTP stack, the PostgreSQL store and the vault's sealing are chunks loaded at their first
// use, so a start loads only the chunks its command needs.

import { readdir, readFile, rm } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

/**
 * Text berth ships, kept in files of their own so that their shell checks them, and
 * carried in the bundle as text: each module that reads them from source (tsx) is
 * replaced by one holding the files, by their names under the folders given. The sh berth
 * ships to a machine (src/machines/*.sh and src/packages/*.sh, read by shell-text.ts as
 * `machines/walk.sh`) and the completion scripts (src/cli/completion/, completion-text.ts).
 */
const TEXTS = [
  {
    module: /[\\/]src[\\/]shell[\\/]shell-text\.ts$/,
    dirs: { 'machines/': '../src/machines/', 'packages/': '../src/packages/' },
    ends: '.sh',
    read: 'shellText',
  },
  {
    module: /[\\/]src[\\/]cli[\\/]completion-text\.ts$/,
    dirs: { '': '../src/cli/completion/' },
    ends: '',
    read: 'completionText',
  },
];

/** @type {import('esbuild').Plugin} */
const shippedTexts = {
  name: 'shipped-texts',
  setup(build) {
    for (const { module, dirs, ends, read } of TEXTS)
      build.onLoad({ filter: module }, async () => {
        const texts = {};
        for (const [prefix, dir] of Object.entries(dirs)) {
          const from = new URL(dir, import.meta.url);
          for (const name of await readdir(from))
            if (name.endsWith(ends))
              texts[`${prefix}${name}`] = await readFile(new URL(name, from), 'utf8');
        }
        return {
          contents: `const texts = ${JSON.stringify(texts)};
export function ${read}(name) { return texts[name]; }`,
          loader: 'js',
        };
      });
  },
};

/**
 * Builds the binary into `outdir`, emptied first (chunks are named by their hash). `plugins`
 * go to esbuild: the vault bench builds a second binary whose seal is bypassed.
 * @param {{ outdir?: string, plugins?: import('esbuild').Plugin[] }} options
 */
export async function buildBerth({ outdir = 'dist', plugins = [] } = {}) {
  await rm(outdir, { recursive: true, force: true });
  await build({
    entryPoints: { berth: 'src/berth.ts' },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minifySyntax: true,
    legalComments: 'none',
    // CommonJS libraries (pg) require Node's modules, and an ES module has no `require`.
    // Every file gets one: Node's getBuiltinModule (20.16 on), which costs nothing to make,
    // where a createRequire in each of the chunks a start loads cost `berth status` 3 ms.
    banner: {
      js: "import { createRequire as __berthRequire } from 'node:module'; const require = process.getBuiltinModule ?? __berthRequire(import.meta.url);",
    },
    // pg requires its optional native binding only through `pg.native`, which berth never reads.
    external: ['pg-native'],
    plugins: [shippedTexts, ...plugins],
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildBerth();
