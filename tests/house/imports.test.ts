/**
 * The house as a newcomer finds it: src/ holds folders and the entry alone; no import
 * circle between files, nor between folders (a folder's files reach another folder's only
 * one way), so each folder can be read with what it stands on and nothing above it.
 * Checked on src/ as it is, and shown to fail on planted circles. No file of commands/
 * imports words/: commands return typed values, and words/ renders them at the edge.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { describe, it } from 'node:test';

const SRC = join(import.meta.dirname, '..', '..', 'src');
const IMPORT =
  /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s*'(\.{1,2}\/[^']+)'|import\(\s*'(\.{1,2}\/[^']+)'\)/g;

/** Every .ts file under `root`, and the files of `root` each imports, by path from `root`. */
async function importsOf(root: string): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  for (const entry of await readdir(root, { recursive: true })) {
    if (!entry.endsWith('.ts')) continue;
    const text = await readFile(join(root, entry), 'utf8');
    const targets = new Set<string>();
    for (const match of text.matchAll(IMPORT)) {
      const spec = match[1] ?? match[2] ?? '';
      targets.add(normalize(join(dirname(entry), spec)));
    }
    graph.set(entry, targets);
  }
  return graph;
}

/** The circles of a graph: each strongly connected part of more than one, by Tarjan. */
function circles(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next))
        low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = [];
      let top: string | undefined;
      do {
        top = stack.pop() as string;
        part.push(top);
      } while (top !== node);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

/** The folder graph: a folder imports another when one of its files does. */
function folders(graph: ReadonlyMap<string, ReadonlySet<string>>): Map<string, Set<string>> {
  const folderOf = (file: string) => file.split('/')[0] as string;
  const byFolder = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    if (!file.includes('/')) continue; // the entry, at the root, stands on everything
    const from = folderOf(file);
    const reached = byFolder.get(from) ?? new Set<string>();
    for (const target of targets) if (folderOf(target) !== from) reached.add(folderOf(target));
    byFolder.set(from, reached);
  }
  return byFolder;
}

describe('the house: folders and imports of src/', () => {
  it('keeps only the entry at the root of src/', async () => {
    const loose = (await readdir(SRC, { withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => entry.name);
    assert.deepEqual(loose, ['berth.ts']);
  });

  it('has no import circle between files nor between folders, and commands make no words', async () => {
    const graph = await importsOf(SRC);
    assert.ok(graph.size > 100, `${graph.size} files read`);
    assert.deepEqual(circles(graph), []);
    assert.deepEqual(circles(folders(graph)), []);
    const makingWords = [...graph]
      .filter(
        ([file, targets]) =>
          file.startsWith('commands/') &&
          [...targets].some((target) => target.startsWith('words/')),
      )
      .map(([file]) => file);
    assert.deepEqual(makingWords, []);
  });

  it('finds a circle planted between two files and between two folders', async () => {
    const planted = await mkdtemp(join(tmpdir(), 'berth-house-'));
    try {
      await mkdir(join(planted, 'low'));
      await mkdir(join(planted, 'high'));
      await writeFile(join(planted, 'low', 'a.ts'), "import { b } from '../high/b.ts';\n");
      await writeFile(join(planted, 'high', 'b.ts'), "export { c } from './c.ts';\n");
      await writeFile(join(planted, 'high', 'c.ts'), "import type { a } from '../low/a.ts';\n");
      const graph = await importsOf(planted);
      assert.deepEqual(circles(graph), [['high/b.ts', 'high/c.ts', 'low/a.ts']]);
      assert.deepEqual(circles(folders(graph)), [['high', 'low']]);
    } finally {
      await rm(planted, { recursive: true, force: true });
    }
  });
});
