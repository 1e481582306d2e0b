import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Authenticator } from '../../src/http/authenticator.ts';
import { parseJournalLine } from '../../src/stores/stores.ts';
import { entryWords } from '../../src/words/journal.ts';

/** The built binary, exactly as `bin` runs it. */
export const BERTH = resolve(import.meta.dirname, '../../dist/berth.mjs');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * A throw-away world: a state directory, and a machine "box" stood up under its
 * own root, known to berth.json. Everything is real files; nothing is mocked.
 */
export interface World {
  dir: string;
  state: string;
  /** The root of node `box`. */
  root: string;
  berth(...args: string[]): Promise<Run>;
  /** The same command again with `--yes` and the digest on the given preview's last line. */
  actOn(preview: Run, ...args: string[]): Promise<Run>;
  writeModule(name: string, definition: unknown): Promise<void>;
  writeSettings(settings: unknown): Promise<void>;
  /** Writes a file on the box, making its directories. */
  onBox(path: string, content: string): Promise<void>;
  /** Where a node made by `rootedNodes` has its root. */
  rootOf(node: string): string;
  /** berth.json with these nodes, each rooted in a directory of its own, and these groups. */
  rootedNodes(nodes: readonly string[], groups?: Record<string, string[]>): Promise<void>;
  /** Every node's record on disk, gathered by kind: `{assignments, managed, accounts}` by node. */
  readState(): Promise<Record<string, Record<string, unknown>>>;
  /** Every journal on disk (each node's and the directory's), oldest first. */
  journal(): Promise<Record<string, unknown>[]>;
  cleanup(): Promise<void>;
}

/** A world whose catalog holds `modules` (name → definition) from the start. */
export async function makeWorld(modules: Record<string, unknown> = {}): Promise<World> {
  const dir = await mkdtemp(join(tmpdir(), 'berth-test-'));
  const state = join(dir, 'state');
  const root = join(dir, 'box');
  await mkdir(join(state, 'modules'), { recursive: true });
  await mkdir(root, { recursive: true });
  const world: World = {
    dir,
    state,
    root,
    berth: (...args) => runBerth(['--state', state, ...args]),
    actOn: (preview, ...args) =>
      runBerth(['--state', state, ...args, '--yes', '--digest', digestOf(preview.stdout)]),
    async writeModule(name, definition) {
      await writeFile(join(state, 'modules', `${name}.json`), JSON.stringify(definition));
    },
    async writeSettings(settings) {
      await writeFile(join(state, 'berth.json'), JSON.stringify(settings));
    },
    async onBox(path, content) {
      const full = join(root, path);
      await mkdir(resolve(full, '..'), { recursive: true });
      await writeFile(full, content);
    },
    rootOf: (node) => join(dir, node),
    async rootedNodes(nodes, groups = {}) {
      for (const node of nodes) await mkdir(world.rootOf(node), { recursive: true });
      await world.writeSettings({
        nodes: Object.fromEntries(nodes.map((node) => [node, { root: world.rootOf(node) }])),
        groups,
      });
    },
    readState: () => readRecords(state),
    journal: () => readJournals(state),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
  await world.writeSettings({ nodes: { box: { root } } });
  for (const [name, definition] of Object.entries(modules))
    await world.writeModule(name, definition);
  return world;
}

/**
 * Runs the real binary with the environment a user would have (less the CA bundle, for speed).
 * `launcher` is a command node is run through (`unshare -m …`), for a machine made other.
 */
export function runBerth(
  args: string[],
  env: Record<string, string | undefined> = {},
  launcher: readonly string[] = [],
): Promise<Run> {
  return runNode([BERTH, ...args], env, launcher);
}

/** Runs node on `args` (a copy of the bundle, say) as runBerth runs berth. */
export function runNode(
  args: string[],
  env: Record<string, string | undefined> = {},
  launcher: readonly string[] = [],
): Promise<Run> {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...rest } = process.env;
  const [program, ...before] = [...launcher, process.execPath];
  return new Promise((done) => {
    execFile(
      program as string,
      [...before, ...args],
      { env: { ...rest, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
  });
}

/** A test authenticator that accepts every request as `subject`, to reach past step 1. */
export function acceptAs(subject: string): Authenticator {
  return { authenticate: () => async () => ({ ok: true, subject }) };
}

/** The example definitions tests build on: postgres, and gitea which needs it. */
export const POSTGRES = {
  description: 'PostgreSQL',
  data: ['/var/lib/postgresql'],
  secrets: { password: { path: '/etc/postgres/password' } },
  files: { '/etc/postgres/pg.conf': { mode: '0640', content: 'password={{secret password}}\n' } },
  start: 'touch "$BERTH_ROOT/started-postgres"',
  stop: 'rm -f "$BERTH_ROOT/started-postgres"',
};

export const GITEA = {
  description: 'Gitea, a git forge',
  needs: ['postgres'],
  data: ['/var/lib/gitea'],
  secrets: {
    db_password: { path: '/etc/gitea/db_password' },
    admin_token: { path: '/etc/gitea/admin_token' },
  },
  files: {
    '/etc/gitea/app.ini': {
      mode: '0640',
      content: '[database]\nPASSWD = {{secret db_password}}\n',
    },
  },
  start: 'echo "$BERTH_MODULE on $BERTH_NODE" > "$BERTH_ROOT/started-gitea"',
  stop: 'rm -f "$BERTH_ROOT/started-gitea"',
};

/** The digest on a preview's last line. */
export function digestOf(said: string): string {
  const last = said.trim().split('\n').at(-1) ?? '';
  const match = /^digest ([0-9a-f]{64})$/.exec(last);
  if (!match) throw new Error(`no digest line at the end of:\n${said}`);
  return match[1] as string;
}

/** The node directories of a state directory, as berth keeps them: `nodes/<node>/`. */
export async function nodeDirs(state: string): Promise<string[]> {
  return (await readdir(join(state, 'nodes')).catch(() => [] as string[])).sort();
}

/** Each node's record file, gathered by kind as a state directory of one file once held them. */
async function readRecords(state: string) {
  const gathered: Record<string, Record<string, unknown>> = {
    assignments: {},
    managed: {},
    accounts: {},
  };
  for (const node of await nodeDirs(state)) {
    const text = await readFile(join(state, 'nodes', node, 'record.json'), 'utf8').catch(() => '');
    if (!text) continue;
    const record = JSON.parse(text);
    if (record.assigned.length > 0)
      (gathered.assignments as Record<string, unknown>)[node] = record.assigned;
    if (Object.keys(record.managed).length > 0)
      (gathered.managed as Record<string, unknown>)[node] = record.managed;
    if (record.account) (gathered.accounts as Record<string, unknown>)[node] = record.account;
  }
  return gathered;
}

/** A journal line as written, and the words `berth log` makes of it. */
export function withWords(line: string): Record<string, unknown> {
  const read = parseJournalLine(line, '');
  if (!('entry' in read)) return JSON.parse(line);
  const { said, error } = entryWords(read.entry);
  return { ...JSON.parse(line), said, ...(error === undefined ? {} : { error }) };
}

/**
 * Every journal line of a state directory, oldest first: each as written, with the words
 * berth makes of it when read (`said`, `error`) beside its typed result and refusal.
 */
export async function readJournals(state: string): Promise<Record<string, unknown>[]> {
  const paths = [
    join(state, 'journal.jsonl'),
    ...(await nodeDirs(state)).map((node) => join(state, 'nodes', node, 'journal.jsonl')),
  ];
  const entries: Record<string, unknown>[] = [];
  for (const path of paths) {
    const text = await readFile(path, 'utf8').catch(() => '');
    for (const line of text.split('\n').filter(Boolean)) entries.push(withWords(line));
  }
  return entries
    .map((entry, index) => ({ entry, index }))
    .sort((a, b) =>
      String(a.entry.at) < String(b.entry.at)
        ? -1
        : String(a.entry.at) > String(b.entry.at)
          ? 1
          : a.index - b.index,
    )
    .map(({ entry }) => entry);
}
