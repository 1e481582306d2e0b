import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** esbuild's `__esm` helper evaluates a wrapped module here, once, on its first import. */
const EVALUATE = 'return fn && (res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;';

/** What a run of the counting copy evaluated, written as it exits. */
export interface Evaluated {
  /** The bundle's wrapped modules evaluated, in order, by their source path (`src/cli/main.ts`). */
  modules: string[];
  /** How many wrapped modules the bundle has. */
  total: number;
  /** Node's own modules loaded (`process.moduleLoadList`). */
  builtins: string[];
}

/**
 * Writes into `dir` a copy of the bundle that records which of its modules a run
 * evaluates: what a start pays for, module by module. Run it with `$BERTH_EVALUATED`
 * naming the file the record goes to; `readEvaluated` reads that.
 */
export async function countingCopy(bundle: string, dir: string): Promise<string> {
  const source = await readFile(bundle, 'utf8');
  if (!source.includes(EVALUATE))
    throw new Error("esbuild's __esm helper changed: update tests/helpers/evaluated.ts");
  const total = source.match(/= __esm\(\{/g)?.length ?? 0;
  const record = [
    'globalThis.__berthEvaluated = [];',
    'process.on("exit", () => require("node:fs").writeFileSync(process.env.BERTH_EVALUATED,',
    `  JSON.stringify({ modules: globalThis.__berthEvaluated, total: ${total}, builtins: process.moduleLoadList })));`,
  ].join('\n');
  const counting = source
    .replace(
      EVALUATE,
      'return fn && (globalThis.__berthEvaluated.push(__getOwnPropNames(fn)[0]), res = (0, fn[__getOwnPropNames(fn)[0]])(fn = 0)), res;',
    )
    // After the banner, which makes `require`.
    .replace(/^((?:#!.*\n)?.*\n)/, `$1${record}\n`);
  const copy = join(dir, 'berth.mjs');
  await writeFile(copy, counting);
  return copy;
}

export async function readEvaluated(file: string): Promise<Evaluated> {
  return JSON.parse(await readFile(file, 'utf8')) as Evaluated;
}
