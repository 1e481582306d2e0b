/**
 * A service's own user gains nothing from berth acting as root, over ssh (issue 21): on
 * the fleet's real sshd hosts, one logged in as root (alpha) and one through `sudo -n`
 * (bravo), the user `berthapp` owns /srv/hostile/app and places links there as itself
 * (`setpriv`). Each command that would read, write, chown or chmod through one blocks in
 * words naming the path, the link and its owner, and nothing of root's changes hands; a
 * file the user planted where a secret goes does not leave the secret in its hands.
 */
import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FACT_NAMES } from '../../src/model/facts.ts';
import { stateFiles } from '../commands/support.ts';
import { digestOf, makeWorld, type Run, runBerth, type World } from '../helpers/world.ts';
import { type Fleet, fleetUnavailable, onHost, startFleet } from './fleet.ts';

const APP = {
  data: [{ path: '/srv/hostile/app/data', owner: 'berthapp', group: 'berthapp', mode: '0750' }],
  secrets: { key: { path: '/srv/hostile/app/key', owner: 'berthapp', mode: '0400' } },
  files: {
    '/srv/hostile/app/conf/app.ini': {
      owner: 'berthapp',
      mode: '0640',
      content: 'key = {{secret key}}\n',
    },
  },
  setup: 'env > /srv/hostile/setup-env',
  start: 'env > /srv/hostile/start-env',
};

/** As the examples were: secrets in the user's directory with a mode and no owner. */
const PLANTED = {
  secrets: {
    token: { path: '/srv/hostile/planted/token', mode: '0640' },
    key: { in: '/srv/hostile/planted/app.ini', match: '^key = (\\S+)$' },
  },
  files: { '/srv/hostile/planted/app.ini': { content: 'key = {{secret key}}\n' } },
};

const WORDS = 'berth does not follow links that another user could have placed';
const MARKER = 'berth-hostile-marker';

/** Fails unless a hook's `env` holds nothing of berth's or the login's environment. */
function cleanEnv(env: string) {
  assert.ok(!env.includes('berth-hostile-pgpassword'), env);
  const names = env
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('=')[0]);
  const allowed = [
    'PATH',
    'LANG',
    'HOME',
    'BERTH_NODE',
    'BERTH_MODULE',
    'BERTH_ROOT',
    // The node's facts, which every hook sees (the module declares no value).
    ...FACT_NAMES.map((fact) => `BERTH_FACT_${fact.toUpperCase()}`),
    'PWD',
    'SHLVL',
    '_',
  ];
  assert.deepEqual(
    names.filter((name) => !allowed.includes(name as string)),
    [],
    env,
  );
}

/** Why this machine cannot run the tests below, if it cannot: each is skipped saying so. */
const skip = fleetUnavailable();

describe('links a service user places, over ssh', () => {
  let fleet: Fleet;
  let world: World;
  let runtime: string;

  const berth = (...args: string[]): Promise<Run> =>
    runBerth(['--state', world.state, ...args], {
      XDG_RUNTIME_DIR: runtime,
      SSH_AUTH_SOCK: undefined,
      PGPASSWORD: 'berth-hostile-pgpassword',
    });
  const on = (host: string, script: string) => onHost(fleet.host(host), script);
  /** What the service user does on its own, with its own rights. */
  const asApp = (host: string, script: string) =>
    on(host, `setpriv --reuid=berthapp --regid=berthapp --clear-groups sh -c '${script}'`);
  const previewAndAct = async (node: string) => {
    const preview = await berth('converge', node);
    assert.equal(preview.code, 0, preview.stderr);
    const act = await berth('converge', node, '--yes', '--digest', digestOf(preview.stdout));
    return { preview, act };
  };

  before(async () => {
    if (skip) return;
    fleet = await startFleet({ hosts: 2 });
    runtime = await mkdtemp('/tmp/bfh-');
    world = await makeWorld({ app: APP, planted: PLANTED });
    await copyFile(fleet.sshConfig, join(world.state, 'ssh_config'));
    await world.writeSettings({
      nodes: { alpha: { ssh: 'alpha' }, bravo: { ssh: 'bravo', sudo: true } },
      sshConfig: 'ssh_config',
    });
  });
  after(async () => {
    if (skip) return;
    await fleet?.stop();
    await world?.cleanup();
    if (runtime) await rm(runtime, { recursive: true, force: true });
  });

  for (const node of ['alpha', 'bravo']) {
    describe(`${node} (${node === 'alpha' ? 'root' : 'through sudo'})`, () => {
      before(async () => {
        if (skip) return;
        await on(
          node,
          [
            'id -u berthapp >/dev/null 2>&1 || useradd --no-create-home --password "*" berthapp',
            'rm -rf /srv/hostile /root-only && mkdir -p /srv/hostile/app/conf /root-only',
            'chown -R berthapp:berthapp /srv/hostile/app && chmod 0700 /root-only',
            `echo ${MARKER} > /root-only/file && chmod 0600 /root-only/file`,
          ].join(' && '),
        );
        assert.equal((await berth('assign', node, 'app')).code, 0);
        const { act } = await previewAndAct(node);
        assert.equal(act.code, 0, act.stderr);
      });

      it('starts its hooks, setup as start, with a clean environment: nothing of berth or the login', {
        skip,
      }, async () => {
        for (const hook of ['setup', 'start'])
          cleanEnv(await on(node, `cat /srv/hostile/${hook}-env`));
      });

      it('a file made a link to a root-only file: the preview shows none of it; nothing is chowned', {
        skip,
      }, async () => {
        await asApp(
          node,
          'rm /srv/hostile/app/conf/app.ini; ln -s /root-only/file /srv/hostile/app/conf/app.ini',
        );
        const { preview, act } = await previewAndAct(node);
        assert.ok(!preview.stdout.includes(MARKER), preview.stdout);
        assert.match(
          preview.stdout,
          new RegExp(
            `blocked: /srv/hostile/app/conf/app.ini is a symbolic link owned by berthapp; ${WORDS}`,
          ),
        );
        assert.equal(act.code, 1);
        assert.equal(await on(node, 'stat -c "%u %a" /root-only/file'), '0 600\n');
        await asApp(node, 'rm /srv/hostile/app/conf/app.ini');
      });

      it('a data directory swapped for a link to a root-only directory: blocked, never chowned', {
        skip,
      }, async () => {
        await asApp(
          node,
          'mv /srv/hostile/app/data /srv/hostile/app/data.old && ln -s /root-only /srv/hostile/app/data',
        );
        const { preview, act } = await previewAndAct(node);
        assert.match(
          preview.stdout,
          new RegExp(
            `blocked: /srv/hostile/app/data is a symbolic link owned by berthapp; ${WORDS}`,
          ),
        );
        assert.equal(act.code, 1);
        assert.equal(await on(node, 'stat -c "%u %a" /root-only'), '0 700\n');
        await asApp(
          node,
          'rm /srv/hostile/app/data && mv /srv/hostile/app/data.old /srv/hostile/app/data',
        );
      });

      it('a directory above a file swapped for a link to a root directory: blocked, nothing written', {
        skip,
      }, async () => {
        await asApp(
          node,
          'mv /srv/hostile/app/conf /srv/hostile/app/conf.old && ln -s /root-only /srv/hostile/app/conf',
        );
        const { preview, act } = await previewAndAct(node);
        assert.match(
          preview.stdout,
          new RegExp(`/srv/hostile/app/conf is a symbolic link owned by berthapp; ${WORDS}`),
        );
        assert.equal(act.code, 1);
        assert.equal(await on(node, 'ls /root-only'), 'file\n');
        await asApp(
          node,
          'rm /srv/hostile/app/conf && mv /srv/hostile/app/conf.old /srv/hostile/app/conf',
        );
      });

      it('a secret that is a link to a root-only file is never read: adopt names the link', {
        skip,
      }, async () => {
        await asApp(node, 'rm -f /srv/hostile/app/key; ln -s /root-only/file /srv/hostile/app/key');
        const adopt = await berth('adopt', node);
        assert.equal(adopt.code, 0, adopt.stderr);
        assert.match(
          adopt.stdout,
          new RegExp(`/srv/hostile/app/key is a symbolic link owned by berthapp; ${WORDS}`),
        );
        for (const [file, text] of Object.entries(await stateFiles(world)))
          assert.ok(!text.includes(MARKER), `${file} holds the root-only file's line`);
      });

      it('a secret whose path the user touched, and a file placing one it swapped for its own, are written as root’s: the user reads neither', {
        skip,
      }, async () => {
        const dir = '/srv/hostile/planted';
        /** Converges the planted module alone; the preview's text. */
        const converge = async () => {
          const preview = await berth('converge', node, '--filter', 'planted');
          assert.equal(preview.code, 0, preview.stderr);
          const digest = digestOf(preview.stdout);
          const act = await berth(
            'converge',
            node,
            '--filter',
            'planted',
            '--yes',
            '--digest',
            digest,
          );
          assert.equal(act.code, 0, act.stderr);
          return preview.stdout;
        };
        /** What the user reads of a file, with its own rights; undefined when it may not. */
        const readByApp = async (path: string) => {
          const script = `setpriv --reuid=berthapp --regid=berthapp --clear-groups cat ${path}`;
          const result = await fleet.host(node).exec(script);
          return result.code === 0 ? result.stdout : undefined;
        };
        await on(node, `mkdir -p ${dir} && chown berthapp:berthapp ${dir}`);
        await asApp(node, `touch ${dir}/token && chmod 0666 ${dir}/token`);
        assert.equal((await berth('assign', node, 'planted')).code, 0);
        const minted = await converge();
        assert.equal(await readByApp(`${dir}/token`), undefined);
        assert.equal(await on(node, `stat -c '%u:%g %a' ${dir}/token`), '0:0 640\n');
        assert.match(
          minted,
          /mint token into the vault and write it to \S+ \(owner 0:0, now \d+:\d+\)/,
        );

        await asApp(node, `rm -f ${dir}/app.ini && touch ${dir}/app.ini`);
        const written = await converge();
        assert.equal(await readByApp(`${dir}/app.ini`), undefined);
        assert.equal(await on(node, `stat -c '%u:%g %a' ${dir}/app.ini`), '0:0 600\n');
        assert.match(
          written,
          /write \S+app\.ini \(mode 0600, owner 0:0, now \d+:\d+\): it differs/,
        );
      });
    });
  }
});
