import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorld, type World } from '../helpers/world.ts';

/**
 * A module whose file carries its secret: a drifted file's diff shows the secret's line.
 * Its check counts its runs in the node's `checks` file: a survey of a node where app is
 * started runs it once.
 */
export const APP = {
  description: 'An app with a token',
  data: ['/var/lib/app'],
  secrets: { token: { path: '/etc/app/token' } },
  files: {
    '/etc/app/app.conf': { mode: '0640', content: 'token={{secret token}}\nport=80\nname=app\n' },
  },
  start: 'touch "$BERTH_ROOT/started"',
  reload: 'true',
  check: 'echo ran >> "$BERTH_ROOT/checks"',
};

/** A module with data: a node that holds its data unmanaged is blocked from installing it. */
export const CACHE = {
  description: 'A cache',
  data: ['/var/lib/cache'],
  files: { '/etc/cache/cache.conf': { content: 'size=64m\n' } },
};

/**
 * Three rooted nodes of group web, each to run app: web1 in sync, web2 whose app.conf was
 * edited by hand (drifted), web3 not converged yet (to install); web1 runs cache too, in
 * sync; and db1, to run cache, holds cache's data berth does not manage (blocked). Unless
 * `surveyed` is false, the operator has previewed `converge @all` last, so every node has
 * a survey the view shows.
 */
export interface Fleet {
  world: World;
  /** The value of web2's secret, which no page may show. */
  secret: string;
}

/** `settings` are laid over berth.json's nodes and groups (a team's `store`, say). */
export async function makeFleet(
  settings: Record<string, unknown> = {},
  { surveyed = true } = {},
): Promise<Fleet> {
  const world = await makeWorld({ app: APP, cache: CACHE });
  const roots = Object.fromEntries(
    ['web1', 'web2', 'web3', 'db1'].map((node) => [node, { root: join(world.dir, node) }]),
  );
  for (const { root } of Object.values(roots)) await mkdir(root, { recursive: true });
  await world.writeSettings({
    nodes: roots,
    groups: { web: ['web1', 'web2', 'web3'] },
    ...settings,
  });
  for (const node of ['web1', 'web2', 'web3']) await must(world.berth('assign', node, 'app'));
  await must(world.berth('assign', 'web1', 'cache'));
  await must(world.berth('assign', 'db1', 'cache'));
  await mkdir(join(world.dir, 'db1', 'var/lib/cache'), { recursive: true });
  await writeFile(join(world.dir, 'db1', 'var/lib/cache/entries'), 'kept by hand\n');
  const preview = await must(world.berth('converge', 'web1,web2'));
  await must(world.actOn(preview, 'converge', 'web1,web2'));
  const conf = join(world.dir, 'web2', 'etc/app/app.conf');
  await writeFile(conf, (await readFile(conf, 'utf8')).replace('port=80', 'port=8080'));
  const secret = (await readFile(join(world.dir, 'web2', 'etc/app/token'), 'utf8')).trim();
  if (surveyed) await must(world.berth('converge', '@all'));
  return { world, secret };
}

/** How many times app's check has run on a node. */
export async function checkRuns(world: World, node: string): Promise<number> {
  const text = await readFile(join(world.dir, node, 'checks'), 'utf8').catch(() => '');
  return text.split('\n').filter((line) => line === 'ran').length;
}

async function must(running: ReturnType<World['berth']>) {
  const run = await running;
  if (run.code !== 0) throw new Error(`berth failed (${run.code}):\n${run.stdout}${run.stderr}`);
  return run;
}
