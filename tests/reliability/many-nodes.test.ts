/**
 * A fleet at once: twenty nodes converged together, ten from command-line processes and
 * ten through one `berth api`, each start hook two seconds long. Every act is done,
 * nothing is lost, no act is turned away for the lock; acts on one node still take turns.
 */
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { Agent } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { apiWorld, type ServedApiWorld } from '../helpers/api-world.ts';
import { journalLines, startBerth } from '../helpers/reliability.ts';
import { digestOf, type World } from '../helpers/world.ts';

const NODES = Array.from({ length: 20 }, (_, i) => `n${String(i + 1).padStart(2, '0')}`);
const BY_CLI = NODES.slice(0, 10);
const BY_API = NODES.slice(10);
const MODULES = ['slow-a', 'slow-b'];

/** A start hook of two seconds that notes, on its node, when it began and ended. */
const slow = (name: string) => ({
  description: 'a module whose start takes two seconds',
  data: [`/srv/${name}`],
  start: `echo "begin ${name}" >> "$BERTH_ROOT/hooks"; sleep 2; echo "end ${name}" >> "$BERTH_ROOT/hooks"`,
});

describe('twenty nodes converged at once, from the command line and the API', () => {
  let served: ServedApiWorld;
  let world: World;
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const rootOf = (node: string) => join(world.dir, 'roots', node);

  const ask = (path: string, body: unknown) =>
    served.ask(path, body, { as: 'fleet@example.org', agent });

  before(async () => {
    served = await apiWorld({
      modules: { 'slow-a': slow('slow-a'), 'slow-b': slow('slow-b') },
      async prepare(made) {
        world = made;
        await world.writeSettings({
          nodes: Object.fromEntries(NODES.map((node) => [node, { root: rootOf(node) }])),
        });
        for (const node of NODES) await mkdir(rootOf(node), { recursive: true });
      },
    });
  });
  after(async () => {
    agent.destroy();
    await served?.close();
  });

  it('does every act, loses none, refuses none for the lock, and serialises each node', async () => {
    await Promise.all(
      NODES.flatMap((node) =>
        MODULES.map(async (module) => {
          const assigned = await ask('/assign', { node, module });
          assert.equal(assigned.status, 200, assigned.text);
        }),
      ),
    );
    const preview = async (node: string, filter?: string) => {
      const answer = await ask('/converge', { node, filter });
      assert.equal(answer.status, 200, answer.text);
      return digestOf(String(answer.body?.said));
    };
    // Two acts on each command-line node, one a module, previewed apart; one act on each API node.
    const cliActs = await Promise.all(
      BY_CLI.flatMap((node) =>
        MODULES.map(async (module) => ({ node, module, digest: await preview(node, module) })),
      ),
    );
    const apiActs = await Promise.all(
      BY_API.map(async (node) => ({ node, digest: await preview(node) })),
    );

    const processes = cliActs.map(({ node, module, digest }) =>
      startBerth([
        '--state',
        world.state,
        'converge',
        node,
        '--filter',
        module,
        '--yes',
        '--digest',
        digest,
      ]),
    );
    const requests = apiActs.map(({ node, digest }) =>
      ask('/converge', { node, yes: true, digest }),
    );
    const [exits, answers] = await Promise.all([
      Promise.all(processes.map((run) => run.exited)),
      Promise.all(requests),
    ]);

    exits.forEach((exit, i) => {
      const act = cliActs[i];
      assert.equal(exit.code, 0, `${act?.node} ${act?.module}: ${processes[i]?.stderr()}`);
    });
    answers.forEach((answer, i) => {
      assert.notEqual(answer.status, 503, `${apiActs[i]?.node}: ${answer.text}`);
      assert.equal(answer.status, 200, `${apiActs[i]?.node}: ${answer.text}`);
    });

    // Nothing lost: each node's record manages both modules, started, and its journal
    // holds each act as done, by the face that asked.
    const journal = await journalLines(world.state);
    for (const node of NODES) {
      const status = await world.berth('status', node, '--json');
      assert.equal(status.code, 0, status.stderr);
      const [shown] = JSON.parse(status.stdout).nodes;
      assert.deepEqual(
        Object.entries(shown.managed)
          .map(([module, managed]) => [module, (managed as { started: boolean }).started])
          .sort(),
        [
          ['slow-a', true],
          ['slow-b', true],
        ],
        node,
      );
      const converges = journal.filter((entry) => entry.node === node && entry.act === 'converge');
      const cli = BY_CLI.includes(node);
      assert.deepEqual(
        converges.map((entry) => [entry.via, entry.module ?? null, entry.outcome]).sort(),
        cli
          ? [
              ['cli', 'slow-a', 'done'],
              ['cli', 'slow-b', 'done'],
            ]
          : [['api', null, 'done']],
        node,
      );
      // Serialised: on one node, one start hook ends before the next begins; each ran once.
      const hooks = (await readFile(join(rootOf(node), 'hooks'), 'utf8')).trim().split('\n');
      assert.equal(hooks.length, 4, `${node}: ${hooks.join(', ')}`);
      for (let i = 0; i < hooks.length; i += 2) {
        const module = hooks[i]?.replace(/^begin /, '');
        assert.deepEqual([hooks[i], hooks[i + 1]], [`begin ${module}`, `end ${module}`], node);
      }
      assert.deepEqual(
        hooks.filter((line) => line.startsWith('begin')).sort(),
        ['begin slow-a', 'begin slow-b'],
        node,
      );
    }
  });
});
