import assert from 'node:assert/strict';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { untimed } from '../helpers/timed.ts';
import { GITEA, makeWorld, POSTGRES, runBerth, type World } from '../helpers/world.ts';
import { vaultPath } from './support.ts';

describe('the command line: usage, exit codes and --json', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
  });
  after(() => world.cleanup());

  it('exits 2 for a command it does not have', async () => {
    const run = await world.berth('frob', 'box');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, 'berth has no command "frob"; see berth help\n');
  });

  it('exits 2 for copy-state to a URL that is no PostgreSQL store, or that holds a password', async () => {
    const mysql = await world.berth('copy-state', '--to', 'mysql://berth@db.lan/berth');
    assert.equal(mysql.code, 2);
    assert.equal(
      mysql.stderr,
      'berth copy-state --to: a store is a PostgreSQL URL: postgresql://USER@HOST[:PORT]/DATABASE\n',
    );
    const secret = await world.berth(
      'copy-state',
      '--to',
      'postgresql://berth:hunter2@db.lan/berth',
    );
    assert.equal(secret.code, 2);
    assert.match(secret.stderr, /^berth copy-state --to: the store URL carries a password/);
    assert.doesNotMatch(secret.stderr + secret.stdout, /hunter2/);
  });

  it('exits 2 and shows the commands when given none', async () => {
    const run = await world.berth();
    assert.equal(run.code, 2);
    assert.match(run.stdout, /assign <node> <module>/);
  });

  it('--help shows required words as required, and where the state directory is', async () => {
    const run = await runBerth(['--help']);
    assert.equal(run.code, 0);
    // Each line of the command list is "  <usage>  <summary>".
    const listed = run.stdout.split('\n').map((line) => line.trim().split(/ {2,}/)[0]);
    for (const usage of [
      'assign <node> <module>',
      'unassign <node> <module>',
      'take <node> <module>',
      'converge <node>',
      'adopt <node>',
      'status [node]',
    ]) {
      assert.ok(listed.includes(usage), usage);
    }
    assert.doesNotMatch(run.stdout, /(assign|take|converge|adopt) \[node\]/);
    assert.match(
      run.stdout,
      /--state <dir> +The state directory \(default: \$BERTH_STATE, else \$XDG_STATE_HOME\/berth, else ~\/\.local\/state\/berth\)/,
    );
    const take = await runBerth(['take', '--help']);
    assert.match(take.stdout, /^ {2}\$ berth take <node> <module>$/m);
  });

  it('exits 2 for an option a command does not have', async () => {
    const run = await world.berth('assign', 'box', 'postgres', '--yes');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, 'berth assign has no option --yes; see berth help assign\n');
  });

  it('exits 2 for an option given without its value', async () => {
    const run = await world.berth('converge', 'box', '--filter');
    assert.equal(run.code, 2);
    assert.equal(run.stderr, '--filter needs a value\n');
  });

  it('exits 2 for a word too many, after -- as well', async () => {
    for (const args of [
      ['adopt', 'box', 'extra'],
      ['assign', 'box', 'postgres', '--', 'extra'],
    ]) {
      const run = await world.berth(...args);
      assert.equal(run.code, 2, args.join(' '));
      assert.match(run.stderr, /extra/);
    }
  });

  it('exits 2 with the API words when node or module is missing, and acts on nothing', async () => {
    for (const [args, words] of [
      [['assign'], 'both node and module are needed'],
      [['assign', 'box'], 'both node and module are needed'],
      [['unassign', 'box'], 'both node and module are needed'],
      [['take', 'box'], 'both node and module are needed'],
      [['assign', '', 'postgres'], 'both node and module are needed'],
      [['adopt'], 'node is needed'],
      [['converge', '--yes'], 'node is needed'],
    ] as const) {
      const run = await world.berth(...args);
      assert.equal(run.code, 2, args.join(' '));
      assert.equal(run.stderr, `${words}\n`, args.join(' '));
    }
    assert.deepEqual(await world.journal(), []);
  });

  it('prints what the API would answer with --json: said alone, or said and refused, with the typed result', async () => {
    const both = await world.berth('assign', 'box', 'gitea', '--json');
    assert.equal(both.code, 1);
    assert.deepEqual(untimed(JSON.parse(both.stdout)), {
      format_version: 1,
      said: 'box is to run gitea',
      refused: 'gitea does not resolve: it needs postgres, which box is not assigned',
      code: 'does_not_resolve',
      nodes: { box: { steps: [], blockers: [], outcome: 'refused', code: 'does_not_resolve' } },
    });
    assert.equal(both.stderr, '');

    const done = await world.berth('--json', 'assign', 'box', 'postgres');
    assert.equal(done.code, 0);
    assert.deepEqual(untimed(JSON.parse(done.stdout)), {
      format_version: 1,
      said: 'box is to run postgres',
      nodes: { box: { steps: [], blockers: [], outcome: 'done' } },
    });
    assert.equal(done.stderr, '');

    const usage = await world.berth('--json', 'adopt');
    assert.equal(usage.code, 2);
    assert.deepEqual(JSON.parse(usage.stdout), {
      format_version: 1,
      refused: 'node is needed',
      code: 'fields_missing',
    });

    const unknown = await world.berth('--json', 'assign', 'box', 'gitea', '--bogus');
    assert.equal(unknown.code, 2);
    assert.deepEqual(JSON.parse(unknown.stdout), {
      format_version: 1,
      refused: 'berth assign has no option --bogus; see berth help assign',
      code: 'usage',
    });
    assert.equal(unknown.stderr, '');
  });
});

describe('the command line when the stores cannot be opened', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  const cannotOpen = /^the stores cannot be opened: /;

  it('exits 3 for a state directory that does not exist, and does not make it', async () => {
    const missing = join(world.dir, 'nowhere');
    for (const args of [['adopt', 'box'], ['status'], ['log']]) {
      const run = await runBerth(['--state', missing, ...args]);
      assert.equal(run.code, 3, args.join(' '));
      assert.equal(
        run.stderr,
        `the stores cannot be opened: the state directory ${missing} does not exist; create it, or leave out --state and BERTH_STATE to use the default\n`,
      );
    }
    const fromEnv = await runBerth(['adopt', 'box'], { BERTH_STATE: missing });
    assert.equal(fromEnv.code, 3);
    assert.match(fromEnv.stderr, cannotOpen);
  });

  it('exits 3 for a state directory that is a file', async () => {
    const file = join(world.dir, 'a-file');
    await writeFile(file, 'not a directory');
    const run = await runBerth(['--state', file, 'assign', 'box', 'postgres']);
    assert.equal(run.code, 3);
    assert.equal(
      run.stderr,
      `the stores cannot be opened: the state directory ${file} is not a directory\n`,
    );
  });

  it('exits 3 naming a file of the state that is not valid, and --json says it too', async () => {
    await writeFile(join(world.state, 'state.json'), '{"version": 1, "assign');
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 3);
    assert.match(run.stderr, cannotOpen);
    assert.match(run.stderr, /state\.json is not valid JSON/);
    const json = await world.berth('--json', 'adopt', 'box');
    assert.equal(json.code, 3);
    const answer = JSON.parse(json.stdout);
    assert.deepEqual(
      Object.keys(answer),
      ['format_version', 'refused', 'code'],
      'a 503 as the API answers it, in the envelope',
    );
    assert.equal(answer.code, 'stores_unavailable');
    assert.match(answer.refused, /state\.json is not valid JSON/);

    await writeFile(join(world.state, 'state.json'), '{"version": 2}');
    const invalid = await world.berth('unassign', 'box', 'postgres');
    assert.equal(invalid.code, 3);
    assert.match(invalid.stderr, /state\.json is not valid: version: /);
  });

  it('exits 3 for a vault others can read, saying how to mend it', async () => {
    const vault = vaultPath(world);
    await mkdir(dirname(vault), { recursive: true });
    await writeFile(vault, '{"key":"","secrets":{}}');
    await chmod(vault, 0o644);
    const run = await world.berth('adopt', 'box');
    assert.equal(run.code, 3);
    assert.match(run.stderr, /vault\.json can be read by others \(mode 644\); make it 0600/);
  });
});
