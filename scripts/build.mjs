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
 * The sh berth ships to a machine, read from src/machines/*.sh and src/packages/*.sh by
 * shell-text.ts when run from source, is carried in the bundle as text: that module is
 * replaced by one holding the files, by their names from src/ (`machines/walk.sh`).
 * @type {import('esbuild').Plugin}
 */
const shellTexts = {
  name: 'shell-texts',
  setup(build) {
    build.onLoad({ filter: /[\\/]src[\\/]machines[\\/]shell-text\.ts$/ }, async () => {
      const texts = {};
      for (const folder of ['machines', 'packages']) {
        const dir = new URL(`../src/${folder}/`, import.meta.url);
        for (const name of await readdir(dir))
          if (name.endsWith('.sh'))
            texts[`${folder}/${name}`] = await readFile(new URL(name, dir), 'utf8');
      }
      return {
        contents: `const texts = ${JSON.stringify(texts)};
export function shellText(name) { return texts[name]; }`,
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
    plugins: [shellTexts, ...plugins],
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildBerth();
