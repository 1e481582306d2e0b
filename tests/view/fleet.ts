import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeWorld, type World } from '../helpers/world.ts';

/** A module whose file carries its secret: a drifted file's diff shows the secret's line. */
export const APP = {
  description: 'An app with a token',
  data: ['/var/lib/app'],
  secrets: { token: { path: '/etc/app/token' } },
  files: {
    '/etc/app/app.conf': { mode: '0640', content: 'token={{secret token}}\nport=80\nname=app\n' },
  },
  start: 'touch "$BERTH_ROOT/started"',
  reload: 'true',
};

/**
 * Three rooted nodes of group web, each to run app: web1 in sync, web2 whose app.conf was
 * edited by hand (drifted), web3 not converged yet (to install); and db1, running nothing.
 */
export interface Fleet {
  world: World;
  /** The value of web2's secret, which no page may show. */
  secret: string;
}

export async function makeFleet(): Promise<Fleet> {
  const world = await makeWorld({ app: APP });
  const roots = Object.fromEntries(
    ['web1', 'web2', 'web3', 'db1'].map((node) => [node, { root: join(world.dir, node) }]),
  );
  for (const { root } of Object.values(roots)) await mkdir(root, { recursive: true });
  await world.writeSettings({ nodes: roots, groups: { web: ['web1', 'web2', 'web3'] } });
  for (const node of ['web1', 'web2', 'web3']) await must(world.berth('assign', node, 'app'));
  const preview = await must(world.berth('converge', 'web1,web2'));
  await must(world.actOn(preview, 'converge', 'web1,web2'));
  const conf = join(world.dir, 'web2', 'etc/app/app.conf');
  await writeFile(conf, (await readFile(conf, 'utf8')).replace('port=80', 'port=8080'));
  const secret = (await readFile(join(world.dir, 'web2', 'etc/app/token'), 'utf8')).trim();
  return { world, secret };
}

async function must(running: ReturnType<World['berth']>) {
  const run = await running;
  if (run.code !== 0) throw new Error(`berth failed (${run.code}):\n${run.stdout}${run.stderr}`);
  return run;
}
