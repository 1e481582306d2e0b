import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';

describe('berth help [command]', () => {
  let world: World;
  before(async () => {
    world = await makeWorld();
  });
  after(() => world.cleanup());

  it('shows every command, and points at berth help <command>', async () => {
    const run = await world.berth('help');
    assert.equal(run.code, 0);
    for (const command of ['nodes [target]', 'modules [name]', 'validate', 'completion [shell]'])
      assert.match(run.stdout, new RegExp(`^ {2}${command.replace(/[[\]]/g, '\\$&')} +\\S`, 'm'));
    assert.match(run.stdout, /\$ berth help <command>/);
  });

  it('shows one command with its options and an example', async () => {
    const run = await world.berth('help', 'converge');
    assert.equal(run.code, 0);
    assert.match(run.stdout, /\$ berth converge <node>/);
    assert.match(run.stdout, /--filter <module> +Converge this module alone/);
    assert.match(run.stdout, /Examples:\n {2}\$ berth converge web1 /);
  });

  it('refuses a command it does not have, with what was meant', async () => {
    const run = await world.berth('help', 'conevrge');
    assert.equal(run.code, 2);
    assert.equal(
      run.stderr,
      'berth has no command "conevrge"; did you mean converge? See berth help\n',
    );
  });
});

describe("other tools' habits are answered with berth's way, in one line", () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    await world.berth('assign', 'box', 'postgres');
  });
  after(() => world.cleanup());

  const preview =
    "a preview is what berth converge does without --yes, and it shows each file's diff";
  const answers: [words: string[], said: string][] = [
    [
      ['converge', 'box', '--limit', 'web1'],
      'berth converge has no option --limit: name the nodes in the target instead (berth converge @web,!web3)',
    ],
    [
      ['take', 'box', 'gitea', '-l', 'box'],
      'berth take has no option -l: name the nodes in the target instead (berth take @web,!web3 <module>)',
    ],
    [
      ['status', '--limit=box'],
      'berth status has no option --limit: name the nodes in the target instead (berth status @web,!web3)',
    ],
    [['converge', 'box', '--check'], `berth converge has no option --check: ${preview}`],
    [['converge', 'box', '-C'], `berth converge has no option -C: ${preview}`],
    [['converge', 'box', '--dry-run'], `berth converge has no option --dry-run: ${preview}`],
    [['converge', 'box', '--dry'], `berth converge has no option --dry: ${preview}`],
    [
      ['converge', 'box', '--diff'],
      "berth converge has no option --diff: berth converge without --yes previews, showing each file's diff (all of it with --full-diff)",
    ],
    [
      ['take', 'box', 'gitea', '-auto-approve'],
      'berth take has no option -auto-approve: --yes acts; --yes --digest D acts on exactly the preview that printed digest D',
    ],
    [
      ['converge', 'box', '-y'],
      'berth converge has no option -y: --yes acts; --yes --digest D acts on exactly the preview that printed digest D',
    ],
    [
      ['converge', 'box', '--forks', '5'],
      'berth converge has no option --forks: --parallel N acts on at most N nodes of the target at once (default 10)',
    ],
    [
      ['act', 'plan.json', '--forks=5'],
      'berth act has no option --forks: --parallel N acts on at most N nodes of the target at once (default 10)',
    ],
    [
      ['converge', 'box', '--serial', '2'],
      'berth converge has no option --serial: --batch N acts on N nodes at a time, beginning no further batch after one where a node failed',
    ],
    [
      ['converge', 'box', '--tags', 'postgres'],
      'berth converge has no option --tags: --filter MODULE acts on that module alone (berth converge @web --filter redis)',
    ],
    [
      ['take', 'box', 'gitea', '--tags', 'gitea'],
      'berth take has no option --tags: name the module instead (berth take @web <module>)',
    ],
  ];

  it('--limit, -l, --check, -C, --dry-run, --dry, --diff, -auto-approve, -y, --forks, --serial, --tags: berth’s way, exit 2', async () => {
    for (const [words, said] of answers) {
      const run = await world.berth(...words);
      assert.deepEqual([run.code, run.stderr, run.stdout], [2, `${said}\n`, ''], words.join(' '));
    }
  });

  it('with --yes and --json too: refused in the same words, and nothing acted', async () => {
    const journal = await world.journal();
    const run = await world.berth('converge', 'box', '--yes', '--json', '--limit', 'box');
    assert.equal(run.code, 2);
    assert.deepEqual(JSON.parse(run.stdout), {
      format_version: 1,
      refused:
        'berth converge has no option --limit: name the nodes in the target instead (berth converge @web,!web3)',
      code: 'usage',
    });
    assert.deepEqual(await world.journal(), journal);
  });

  it('a command with no such way keeps the plain answer; berth status --check is its own', async () => {
    const validate = await world.berth('validate', '--limit', '3');
    assert.equal(validate.code, 2);
    assert.equal(
      validate.stderr,
      'berth validate has no option --limit; see berth help validate\n',
    );
    const adopt = await world.berth('adopt', 'box', '--check');
    assert.equal(adopt.stderr, 'berth adopt has no option --check; see berth help adopt\n');
    const assign = await world.berth('assign', 'box', 'gitea', '--forks', '2', '-y');
    assert.equal(assign.stderr, 'berth assign has no option --forks; see berth help assign\n');
    const status = await world.berth('status', 'box', '--check');
    assert.equal(status.code, 0, status.stderr);
    assert.doesNotMatch(status.stderr, /has no option/);
  });

  it('a mistyped flag is named as it was typed, not as the option parser spells it', async () => {
    const run = await world.berth('converge', 'box', '--full-dif');
    assert.equal(
      run.stderr,
      'berth converge has no option --full-dif; did you mean --full-diff? See berth help converge\n',
    );
  });
});

describe('berth nodes, berth modules and berth validate', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    await world.writeSettings({
      nodes: {
        box: { root: world.root },
        web1: { ssh: 'admin@web1.lan', port: 2222, sudo: true },
      },
    });
    await world.berth('assign', 'box', 'postgres');
  });
  after(() => world.cleanup());

  it('nodes: a line a node, with its kind, address and what it is to run', async () => {
    const run = await world.berth('nodes');
    assert.equal(run.code, 0);
    assert.equal(
      run.stdout,
      `box  root ${world.root}  to run: postgres\nweb1  ssh admin@web1.lan port 2222 (sudo)  to run: nothing\n`,
    );
  });

  it('nodes --json of one node; a node it does not know is refused with what was meant', async () => {
    const run = await world.berth('nodes', 'box', '--json');
    assert.equal(run.code, 0);
    assert.deepEqual(JSON.parse(run.stdout), {
      format_version: 1,
      nodes: [
        {
          node: 'box',
          kind: 'root',
          address: world.root,
          sudo: false,
          groups: [],
          run: ['postgres'],
          assigned: ['postgres'],
          declared: [],
          values: [],
        },
      ],
    });
    const typo = await world.berth('nodes', 'web2');
    assert.equal(typo.code, 1);
    assert.match(typo.stderr, /^berth does not know node web2; did you mean web1\?/);
  });

  it('modules: a line a module; one module whole, with secret names and never a value', async () => {
    const list = await world.berth('modules');
    assert.equal(list.code, 0);
    assert.equal(list.stdout, 'gitea  Gitea, a git forge\npostgres  PostgreSQL\n');
    const one = await world.berth('modules', 'postgres');
    assert.equal(one.code, 0);
    assert.equal(
      one.stdout,
      [
        'postgres: PostgreSQL',
        '  needs: none',
        '  data: /var/lib/postgresql',
        '  secrets: password (/etc/postgres/password)',
        '  values: none',
        '  files: /etc/postgres/pg.conf',
        '  start: touch "$BERTH_ROOT/started-postgres"',
        '  stop: rm -f "$BERTH_ROOT/started-postgres"',
        '  reload: none',
        '  check: none',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await world.berth('modules', 'gitea', '--json')).stdout);
    assert.deepEqual(json.modules[0].needs, ['postgres']);
    assert.deepEqual(
      json.modules[0].secrets.map((secret: { name: string }) => secret.name),
      ['db_password', 'admin_token'],
    );
    const typo = await world.berth('modules', 'postgress');
    assert.equal(typo.code, 1);
    assert.equal(typo.stderr, 'the catalog has no module postgress; did you mean postgres?\n');
  });

  it('nodes of a target: a group less a node, each node with its groups; a group mistyped', async () => {
    await world.writeSettings({
      nodes: {
        box: { root: world.root },
        web1: { ssh: 'admin@web1.lan' },
        web2: { ssh: 'admin@web2.lan' },
      },
      groups: { web: ['web1', 'web2'], edge: ['@web', 'box'] },
    });
    try {
      const run = await world.berth('nodes', '@edge,!web2');
      assert.equal(run.code, 0, run.stderr);
      assert.equal(
        run.stdout,
        `box  root ${world.root}  groups edge  to run: postgres\nweb1  ssh admin@web1.lan  groups edge, web  to run: nothing\n`,
      );
      const typo = await world.berth('nodes', '@wbe');
      assert.equal(typo.code, 1);
      assert.equal(typo.stderr, 'berth.json has no group wbe; did you mean @web?\n');
    } finally {
      await world.writeSettings({
        nodes: {
          box: { root: world.root },
          web1: { ssh: 'admin@web1.lan', port: 2222, sudo: true },
        },
      });
    }
  });

  it('validate: exit 0 on a valid state directory', async () => {
    const run = await world.berth('validate');
    assert.equal(run.code, 0);
    assert.equal(
      run.stdout,
      `berth.json and the 2 modules of ${join(world.state, 'modules')} are valid\n`,
    );
  });
});

describe('berth validate finds every problem, before an act meets one', () => {
  let world: World;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES });
    const modules = join(world.state, 'modules');
    await world.writeSettings({ nodes: { box: { root: world.root } }, flpi: '15m' });
    await world.writeModule('broken', { descripton: 'typo' });
    await world.writeModule('needy', { needs: ['postgress'] });
    await world.writeModule('templated', {
      files: { '/etc/app.conf': { source: 'templated/app.conf' } },
    });
    await mkdir(join(modules, 'templated'), { recursive: true });
    await writeFile(join(modules, 'templated', 'app.conf'), 'password={{secret pasword}}\n');
    await writeFile(join(modules, 'Upper.json'), '{}');
    await writeFile(join(modules, 'notjson.json'), '{"description": ');
  });
  after(() => world.cleanup());

  it('exit 1, a line a problem: file, field, did-you-mean', async () => {
    const run = await world.berth('validate');
    assert.equal(run.code, 1);
    const modules = join(world.state, 'modules');
    const lines = run.stdout.trimEnd().split('\n');
    assert.deepEqual(lines.slice(0, 3), [
      `${join(world.state, 'berth.json')}: unknown field flpi; did you mean flip?`,
      `${join(modules, 'Upper.json')}: "Upper" is not a module name (1 to 63 characters of a-z, 0-9 and -), so berth never reads this file`,
      `${join(modules, 'broken.json')}: unknown field descripton; did you mean description?`,
    ]);
    assert.equal(
      lines[3],
      `${join(modules, 'needy.json')}: needs: postgress is not in the catalog; did you mean postgres?`,
    );
    assert.match(lines[4] as string, /notjson\.json: is not valid JSON: /);
    assert.equal(
      lines[5],
      `${join(modules, 'templated.json')}: /etc/app.conf names a secret, {{secret pasword}}, that the module does not declare`,
    );
    assert.equal(lines.length, 6);
  });

  it('--json: the same problems as objects', async () => {
    const run = await world.berth('validate', '--json');
    assert.equal(run.code, 1);
    const answer = JSON.parse(run.stdout);
    assert.equal(answer.valid, false);
    assert.equal(answer.problems.length, 6);
    assert.deepEqual(answer.problems[2], {
      file: join(world.state, 'modules', 'broken.json'),
      problem: 'unknown field descripton; did you mean description?',
    });
  });
});
