import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { GLOBAL_FLAGS, SURFACE } from '../../src/cli/complete.ts';
import { needs } from '../helpers/needs.ts';
import { BERTH, GITEA, makeWorld, POSTGRES, type World } from '../helpers/world.ts';

/**
 * Completion in the real shells, driven without a terminal of ours: bash through the
 * function it would call at a Tab (COMP_WORDS, COMP_CWORD), fish through `complete -C`,
 * zsh through a zsh in a pseudo-terminal (zpty) that is sent the Tab itself, with zsh's own
 * compadd asked (-A) for what it would offer.
 */
const ZSH_SETUP = `
# The completion system alone on fpath: compinit over every function zsh ships takes seconds.
PROMPT=
fpath=(/usr/share/zsh/functions/Completion/Base /usr/share/zsh/functions/Completion/Zsh
  /usr/share/zsh/functions/Completion /usr/share/zsh/functions/Zle)
autoload -Uz compinit
compinit -u -D
# zsh's own compadd, asked what it would offer (-A), and that said between markers.
compadd() {
  if [[ \${@[1,(i)(-|--)]} == *-(O|A|D)\\ * ]]; then builtin compadd "$@"; return $?; fi
  local -a hits
  builtin compadd -A hits "$@"
  print -r -- "OFFERED:\${(j:|:)hits}:END"
}
source <(berth completion zsh)
`;

/** Types the words and a Tab into an interactive zsh (zpty), and prints what it offers. */
const ZSH_AT_TAB = `
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "source \${0:h}/zsh-setup.zsh"
zpty -n -w z "$1"$'\\t'
out=''
integer tries=0
while (( tries++ < 600 )); do
  if zpty -r -t z line; then out+=$line; [[ $out == *OFFERED:*:END* ]] && break; else sleep 0.05; fi
done
zpty -d z
out=\${out##*OFFERED:}
print -r -- \${out%%:END*}
`;

describe('berth completion in bash, zsh and fish', () => {
  let world: World;
  let env: Record<string, string | undefined>;
  before(async () => {
    world = await makeWorld({ postgres: POSTGRES, gitea: GITEA });
    await world.writeSettings({
      nodes: { box: { root: world.root }, web1: { ssh: 'admin@web1.lan' } },
      groups: { web: ['web1'] },
    });
    // `berth` on PATH, as an installed one is.
    await writeFile(
      join(world.dir, 'berth'),
      `#!/bin/sh\nexec '${process.execPath}' '${BERTH}' "$@"\n`,
    );
    await chmod(join(world.dir, 'berth'), 0o755);
    await writeFile(join(world.dir, 'zsh-at-tab.zsh'), ZSH_AT_TAB);
    await writeFile(join(world.dir, 'zsh-setup.zsh'), ZSH_SETUP);
    const { NODE_EXTRA_CA_CERTS: _, ...rest } = process.env;
    env = {
      ...rest,
      PATH: `${world.dir}:${process.env.PATH}`,
      BERTH_STATE: world.state,
      HOME: world.dir,
    };
  });
  after(() => world.cleanup());

  const run = (file: string, args: string[]) =>
    new Promise<string>((done, fail) =>
      execFile(file, args, { env, timeout: 60_000 }, (error, stdout, stderr) =>
        error ? fail(new Error(`${file}: ${error.message} ${stderr}`)) : done(stdout),
      ),
    );

  const bash = async (...words: string[]) => {
    const script = `source <(berth completion bash); COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _berth; printf '%s\\n' "\${COMPREPLY[@]}"`;
    return (await run('bash', ['--norc', '--noprofile', '-c', script])).split('\n').filter(Boolean);
  };
  const fish = async (line: string) =>
    (
      await run('fish', [
        '--no-config',
        '-c',
        `berth completion fish | source; complete -C '${line}'`,
      ])
    )
      .split('\n')
      .filter(Boolean)
      .map((candidate) => candidate.split('\t')[0]);
  const zsh = async (line: string) =>
    (await run('zsh', ['-f', join(world.dir, 'zsh-at-tab.zsh'), line]))
      .trim()
      .split('|')
      .filter(Boolean);

  const cases: [line: string, expected: string[]][] = [
    ['berth con', ['converge']],
    ['berth assign ', ['@all', '@web', 'box', 'web1']],
    ['berth secret ', ['box', 'web1']],
    ['berth assign box ', ['gitea', 'postgres']],
    ['berth converge box --f', ['--filter', '--full-diff']],
    ['berth converge box --filter ', ['gitea', 'postgres']],
    ['berth completion ', ['bash', 'fish', 'zsh']],
    ['berth nodes @', ['@all', '@web']],
    ['berth converge box --o', ['--out']],
  ];

  it('bash: commands, flags, nodes and modules', { skip: needs('bash', 'bash') }, async () => {
    for (const [line, expected] of cases) {
      const words = line.split(' ');
      assert.deepEqual((await bash(...words)).sort(), expected, line);
    }
  });

  it('fish: commands, flags, nodes and modules', { skip: needs('fish', 'fish') }, async () => {
    for (const [line, expected] of cases)
      assert.deepEqual((await fish(line)).sort(), expected, line);
  });

  it('zsh: commands, flags, nodes and modules, at a real Tab', {
    skip: needs('zsh', 'zsh'),
  }, async () => {
    for (const [line, expected] of cases)
      assert.deepEqual((await zsh(line)).sort(), expected, line);
  });

  it('a part of a target after , & or !: groups and nodes after what is typed', async () => {
    const asked = async (...words: string[]) =>
      (await run('berth', ['__complete', ...words])).trim().split('\n');
    assert.deepEqual(await asked('converge', '@web&@'), ['@web&@web', '@web&@all']);
    assert.deepEqual(await asked('converge', '@web,!w'), ['@web,!web1']);
    // bash splits a word at & (COMP_WORDBREAKS) and replaces what follows it alone.
    if (needs('bash', 'bash')) return;
    assert.deepEqual((await bash('berth', 'converge', '@web', '&', '@')).sort(), ['@all', '@web']);
    assert.deepEqual(await bash('berth', 'converge', '@web', '&', 'w'), ['web1']);
  });

  /** Plan files where the word typed points: what act and --out offer, in each shell. */
  const planFiles = async () => {
    const dir = join(world.dir, 'plans');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'web.plan'), '{}');
    await writeFile(join(dir, 'db.plan'), '{}');
    return [
      [`berth act ${dir}/w`, [`${dir}/web.plan`]],
      [`berth converge @web --out ${dir}/`, [`${dir}/db.plan`, `${dir}/web.plan`]],
    ] as const;
  };
  const shells = [
    ['bash', (line: string) => bash(...line.split(' '))],
    ['fish', fish],
    ['zsh', zsh],
  ] as const;
  for (const [shell, complete] of shells)
    it(`act and --out: the plan files where the word typed points, in ${shell}`, {
      skip: needs(shell, shell),
    }, async () => {
      for (const [line, expected] of await planFiles())
        assert.deepEqual((await complete(line)).sort(), expected, line);
    });

  // What a user sources is read by the shell without an error; the bash one is linted
  // by shellcheck besides (.ci/run).
  for (const shell of ['bash', 'zsh', 'fish'])
    it(`the ${shell} script is one ${shell} reads without error (${shell} -n)`, {
      skip: needs(shell, shell),
    }, async () => {
      const printed = await world.berth('completion', shell);
      assert.equal(printed.code, 0, printed.stderr);
      const file = join(world.dir, `printed.${shell}`);
      await writeFile(file, printed.stdout);
      const checked = await new Promise<{ code: number | null; stderr: string }>((done) =>
        execFile(shell, ['-n', file], { env }, (error, _stdout, stderr) =>
          done({ code: error ? (error.code as number) : 0, stderr }),
        ),
      );
      assert.deepEqual(checked, { code: 0, stderr: '' }, shell);
    });

  it('berth completion of a shell it has no script for: did you mean, exit 2', async () => {
    const refused = await world.berth('completion', 'bsh');
    assert.equal(refused.code, 2);
    assert.equal(
      refused.stderr,
      'berth completion has no script for "bsh"; did you mean bash?; it has bash, zsh, fish\n',
    );
  });

  it('offers every flag each command’s help lists, and no other', async () => {
    for (const [command, words] of Object.entries(SURFACE)) {
      const help = await world.berth('help', command);
      const listed = [...help.stdout.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map(
        (match) => match[1],
      );
      // --version is listed by berth's own help alone.
      const offered = [...words.flags, ...GLOBAL_FLAGS.filter((flag) => flag !== '--version')];
      assert.deepEqual(listed.sort(), offered.sort(), command);
    }
  });
});
