import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { readFactLines } from '../model/facts.ts';
import { packageManager } from '../packages/managers.ts';
import type { PackageAsk } from '../packages/packages.ts';
import { shellText } from '../shell/shell-text.ts';
import { shellWord } from '../shell/shell-word.ts';
import { HOOK_PATH, MOST_LINKS, NAME_MAX, PATH_MAX, READ_LIMIT } from './limits.ts';
import {
  type AccountNames,
  type Change,
  MachineError,
  type PathFacts,
  STOP_GRACE_MS,
  type Survey,
  type SurveyAsks,
  type SurveyPath,
} from './machine.ts';

// What the ssh machine ships to the far side, one POSIX sh script a call (in ssh's command,
// or on its standard input when it holds secrets: see ssh-machine.ts), and how it reads
// their answers. Each script's answer starts with REACHED, so that a script that never ran
// (ssh, sudo or sh said no) is told from one that failed. The fixed sh is in the `.sh`
// files beside this one; a script is their text after the call's data, set as sh variables
// and arguments, every word of it quoted.

/** What the hook's wrapper says, before it starts anything, where there is no setsid. */
export const NO_SETSID = 'berth: no setsid';

/** The first line of every script's answer: the far side was reached and runs berth's sh. */
export const REACHED = 'berth 1';

const utf8 = new TextEncoder();

/**
 * `script` as a printf format between single quotes, which every login shell (sh, bash,
 * zsh, fish, tcsh) passes on as it is: printable ASCII stays, a newline is `\n`, a `%` is
 * `%%`, and every other byte (a quote, a backslash, `!`, UTF-8) an octal escape.
 */
export function printfFormat(script: string): string {
  return script.replace(/[^ -~]|['\\!%]/gu, (char) => {
    if (char === '\n') return '\\n';
    if (char === '%') return '%%';
    let escaped = '';
    for (const byte of utf8.encode(char)) escaped += `\\${byte.toString(8).padStart(3, '0')}`;
    return escaped;
  });
}

/** Refuses a path that is not absolute and normalised: it goes into a script as it is. */
function checkPath(path: string) {
  const refused = pathRefusal(path);
  if (refused) throw refused;
}

function pathRefusal(path: string): MachineError | undefined {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.includes('\0'))
    return new MachineError('failed', `${path} is not an absolute, normalised machine path`);
  return undefined;
}

/**
 * The walk both scripts share (walk.sh): a path's names taken one at a time, as systemd's
 * `chase()` takes them, with the shell's working directory for the directory handle, so
 * that berth never reads, writes, chowns or chmods through a link, or a directory swapped
 * in, that a user other than root could have placed (docs/safety.md).
 */
const WALK = shellText('machines/walk.sh');

/** The limits both machine kinds keep (limits.ts), as the far side's sh reads them. */
const LIMITS = `PATH_MAX=${PATH_MAX} NAME_MAX=${NAME_MAX} MOST_LINKS=${MOST_LINKS} READ_LIMIT=${READ_LIMIT}
`;

/** What a script starts with: the far side's answer starts with REACHED, and NL is a newline. */
function opening(first: string): string {
  return `${first}
printf '${REACHED}\\n'
NL='
'
${LIMITS}${WALK}`;
}

/**
 * The survey's functions (survey.sh): a path's line from its records (Q), or walked to (Y);
 * the one lstat of every name asked about (u, then M), and a path sorted by them (k); the
 * accounts' ids (A) and who it runs as (O).
 */
const SURVEY = shellText('machines/survey.sh');

/**
 * The survey script: one record a path, in order, each line `<index> <what> ...`:
 * `missing`, `other`, `unreadable <reason>`, `dir <rawmode hex> <size> <uid> <gid> <empty 0|1>`,
 * `file <rawmode hex> <size> <uid> <gid>`, `link <uid> <hard 0|1> <owner> <where, base64>`,
 * or `read ...` as `file` followed by the bytes in base64 and a line `.` (or `!` when they
 * could not be read). Then, for each name asked, `user <name> <uid>` or `group <name> <gid>`
 * (`-` for a name the machine does not know, as `getent` answers it). Then, when asked, the
 * facts (`fact <name> <text>`, facts.sh), the packages' lines, and `berth end`.
 *
 * Each program it runs costs the far side a process (about a millisecond), so one `stat`
 * lstats every path and every directory above one at once, and a path whose every name only
 * root could have placed (each directory on the way root's, no other user may write it) is
 * answered from those records, read by its name. A name not there is missing when the
 * directory it is looked up in may be searched. Any other path (through a directory another
 * user may write, a link, a name stat must explain) is walked to, in a subshell: a link
 * another user could have placed is reported as a link, never followed; a file's bytes are
 * read only from a descriptor whose file is the one lstat-ed. One `getent` a database
 * resolves the names, unless it does not know them all.
 */
export function surveyScript(
  paths: readonly SurveyPath[],
  names?: AccountNames,
  packages?: readonly PackageAsk[],
  asks: SurveyAsks = {},
): string {
  const prefixes = new Map<string, number>();
  const indexOf = (path: string) => {
    let index = prefixes.get(path);
    if (index === undefined) {
      index = prefixes.size;
      prefixes.set(path, index);
    }
    return index;
  };
  const records = paths.map((asked, index) => {
    checkPath(asked.path);
    // The directories above it, then itself; a path too long for Linux is only itself.
    const chain = [indexOf('/')];
    if (utf8.encode(asked.path).length >= PATH_MAX) chain.push(indexOf(asked.path));
    else {
      let prefix = '';
      for (const name of asked.path.split('/').slice(1)) {
        if (name === '') continue;
        prefix += `/${name}`;
        chain.push(indexOf(prefix));
      }
    }
    return `k ${index} ${asked.read ? 1 : 0} ${chain.join(' ')}`;
  });
  const lookups = [...prefixes].map(([path, index]) => `u ${index} ${shellWord(path)}`);
  return `${opening('LC_ALL=C; export LC_ALL')}${SURVEY}${asks.facts ? FACTS : ''}${lookups.join('\n')}
M
${records.join('\n')}
${accountAsks(names).join('\n')}
${asks.facts ? 'H\n' : ''}${packages && packages.length > 0 ? packageManager.surveyScript(packages) : ''}printf 'berth end\\n'
`;
}

/** The facts' function (facts.sh): H. */
const FACTS = shellText('machines/facts.sh');

/** A name is asked for only as a name can be spelled: it is quoted besides. */
const ACCOUNT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

function accountAsks(names?: AccountNames): string[] {
  if (!names) return [];
  const ask = (database: string, kind: string, asked: readonly string[]) => {
    for (const name of asked) {
      if (!ACCOUNT_NAME.test(name))
        throw new MachineError('failed', `${name} is not a name a ${kind} can have`);
    }
    return [`A ${database} ${kind}`, ...asked.map(shellWord)].join(' ');
  };
  return [ask('passwd', 'user', names.users), ask('group', 'group', names.groups), 'O'];
}

export function parseSurvey(
  paths: readonly SurveyPath[],
  stdout: Buffer,
  names?: AccountNames,
  packages?: readonly PackageAsk[],
  asks: SurveyAsks = {},
): Survey {
  const text = stdout.toString('latin1').split('\n');
  const broken = (why: string) =>
    new MachineError('failed', `the survey's answer could not be read: ${why}`);
  const facts = new Map<string, PathFacts>();
  let at = 1; // Past REACHED.
  for (const [index, asked] of paths.entries()) {
    const line = text[at++];
    const [number, what, ...rest] = line?.split(' ') ?? [];
    if (number !== String(index) || what === undefined) throw broken(`no answer for ${asked.path}`);
    if (what === 'missing') facts.set(asked.path, { kind: 'missing' });
    else if (what === 'other') facts.set(asked.path, { kind: 'other' });
    else if (what === 'unreadable') {
      facts.set(asked.path, {
        kind: 'unreadable',
        reason: Buffer.from(rest.join(' '), 'latin1').toString('utf8').trim(),
      });
    } else if (what === 'link') {
      const [uidText, hard, owner, where] = rest;
      const uid = Number(uidText);
      if (!Number.isInteger(uid) || where === undefined)
        throw broken(`a record for ${asked.path} is short`);
      facts.set(asked.path, {
        kind: 'link',
        at: Buffer.from(where, 'base64').toString('utf8'),
        uid,
        ...(owner === undefined || owner === 'UNKNOWN' ? {} : { owner }),
        ...(hard === '1' ? { hard: true as const } : {}),
      });
    } else {
      const [rawText, sizeText, uidText, gidText, emptyText] = rest;
      const raw = Number.parseInt(rawText ?? '', 16);
      const numbers = [sizeText, uidText, gidText].map((word) => Number(word));
      if (Number.isNaN(raw) || numbers.some((number) => !Number.isInteger(number))) {
        throw broken(`a record for ${asked.path} is short`);
      }
      const stat = {
        mode: (raw & 0o7777).toString(8).padStart(4, '0'),
        uid: Number(uidText),
        gid: Number(gidText),
      };
      if (what === 'dir') {
        facts.set(asked.path, { kind: 'directory', empty: emptyText === '1', ...stat });
        continue;
      }
      const file = { kind: 'file' as const, size: Number(sizeText), ...stat };
      if (what === 'file') {
        facts.set(asked.path, file);
        continue;
      }
      if (what !== 'read') throw broken(`a record for ${asked.path} says ${what}`);
      const encoded: string[] = [];
      let end: string | undefined;
      while (at < text.length) {
        const next = text[at++] as string;
        if (next === '.' || next === '!') {
          end = next;
          break;
        }
        encoded.push(next);
      }
      if (end === undefined) throw broken(`the bytes of ${asked.path} were cut off`);
      if (end === '!') {
        facts.set(asked.path, { kind: 'unreadable', reason: 'permission denied' });
        continue;
      }
      const bytes = new Uint8Array(Buffer.from(encoded.join(''), 'base64'));
      facts.set(asked.path, bytes.length > READ_LIMIT ? file : { ...file, bytes });
    }
  }
  /** The facts' lines, when asked, then the packages' lines up to the end. */
  const withRest = (survey: Survey): Survey => {
    if (asks.facts) {
      const lines: string[] = [];
      while (text[at]?.startsWith('fact ')) lines.push(text[at++] as string);
      Object.assign(survey, {
        facts: readFactLines(lines.map((line) => Buffer.from(line, 'latin1').toString('utf8'))),
      });
    }
    if (!packages || packages.length === 0) {
      if (text[at] !== 'berth end') throw broken('it ended early');
      return survey;
    }
    const end = text.indexOf('berth end', at);
    if (end === -1) throw broken('it ended early');
    try {
      return Object.assign(survey, {
        packages: packageManager.readSurvey(packages, text.slice(at, end)),
      });
    } catch (error) {
      throw new MachineError('failed', (error as Error).message);
    }
  };
  if (!names) return withRest(facts);
  const accounts = { users: new Map<string, number>(), groups: new Map<string, number>() };
  const asked = [
    ...names.users.map((name) => ['user', name] as const),
    ...names.groups.map((name) => ['group', name] as const),
  ];
  for (const [kind, name] of asked) {
    const [said, saidName, id] = text[at++]?.split(' ') ?? [];
    if (said !== kind || saidName !== name || id === undefined)
      throw broken(`no answer for the ${kind} ${name}`);
    if (id !== '-') (kind === 'user' ? accounts.users : accounts.groups).set(name, Number(id));
  }
  // Who it runs as: absent where /proc is not there to say.
  const ran = /^s ([0-9]+) ([0-9]+)$/.exec(text[at] ?? '');
  const actor = ran ? { uid: Number(ran[1]), gid: Number(ran[2]) } : undefined;
  if (ran) at++;
  return withRest(Object.assign(facts, { accounts: actor ? { ...accounts, actor } : accounts }));
}

/** Whether the far side ran berth's script: its answer starts with REACHED. */
export function reached(stdout: Buffer): boolean {
  return stdout.subarray(0, REACHED.length + 1).equals(Buffer.from(`${REACHED}\n`));
}

/** A change as the words of its failure name it. */
export function whatOf(change: Change): string {
  return `${change.kind === 'file' ? 'write' : 'create'} ${change.path}`;
}

/** Why a change cannot be shipped as it is, if it cannot. */
export function refusal(change: Change): MachineError | undefined {
  const wrongPath = pathRefusal(change.path);
  if (wrongPath) return wrongPath;
  if (change.kind === 'file' && change.path === '/')
    return new MachineError('failed', '/ is a directory, not a file to write');
  const { uid, gid, mode } = change.options ?? {};
  if ([uid, gid, mode].some((id) => id !== undefined && !(Number.isInteger(id) && id >= 0)))
    return new MachineError('failed', `${whatOf(change)}: mode, uid and gid are whole numbers`);
  return undefined;
}

/** How many changes the batch's answer says were done: `done <index>` lines, in order. */
export function doneIn(stdout: Buffer, shipped: number): number {
  const said = stdout.toString('latin1').split('\n').slice(1);
  let done = 0;
  while (done < shipped && said[done] === `done ${done}`) done++;
  return done;
}

/**
 * The batch script: each change in order, `done <index>` on standard output as it is
 * done, and at the first failure the end, its words the last on standard error (a link
 * berth will not follow as `berth-link <uid> <owner> <where, base64>`). Every change is made
 * from inside its directory, walked to (WALK; the missing directories made as they are
 * reached), on names relative to it. A directory: its owner and mode set on `.`. A file: the
 * sweep of a dead write's temporary files beside it, the data (base64 in a here-document: on
 * stdin, never on a command line or in an environment) into a new temporary file opened on a
 * descriptor under umask 077 (only it is born private), its owner and mode set through the
 * descriptor. Files staged one after another share one sync of their data, then take their
 * names in order by rename, then share one sync of their file systems; they take their names
 * before anything after them is done, a failure after them included. Each program it runs
 * costs the far side a process (about a millisecond): a test in the shell spares one where
 * it can.
 */
export function applyScript(changes: readonly Change[]): string {
  const body: string[] = [];
  let staged: string[] = [];
  for (const [index, change] of changes.entries()) {
    const { path } = change;
    const { uid, gid } = change.options ?? {};
    const owner =
      uid === undefined && gid === undefined
        ? ''
        : `${uid ?? ''}${gid === undefined ? '' : `:${gid}`}`;
    if (change.kind === 'directory') {
      const mode = change.options?.mode;
      body.push(
        `m ${index} ${shellWord(path)} ${shellWord(owner)} ${mode === undefined ? "''" : octal(mode)}`,
      );
      staged = [];
      continue;
    }
    // A file staged on a path a staged one stands on, or under, takes its turn after it.
    if (staged.some((other) => other === path || inside(other, path) || inside(path, other))) {
      body.push('r');
      staged = [];
    }
    staged.push(path);
    const temporary = `.${posix.basename(path)}.${randomBytes(6).toString('hex')}.tmp`;
    const encoded = Buffer.from(change.data)
      .toString('base64')
      .replace(/.{1,76}/g, '$&\n');
    body.push(
      `s ${index} ${shellWord(path)} ${shellWord(temporary)} ${shellWord(owner)} ${octal(change.options.mode)} <<'berth-data-end'\n${encoded}berth-data-end`,
    );
  }
  return `${opening('set -C')}${APPLY}${body.join('\n')}
r
`;
}

/** The batch's functions (apply.sh): a directory (m), a file staged (s), the staged ones renamed (r). */
const APPLY = shellText('machines/apply.sh');

/** A mode as chmod takes it: four octal digits. */
function octal(mode: number): string {
  return mode.toString(8).padStart(4, '0');
}

/** Whether `path` is under the directory `dir`. */
function inside(dir: string, path: string): boolean {
  return path.startsWith(dir === '/' ? '/' : `${dir}/`);
}

/**
 * Stops a hook's process group on the far side: SIGTERM, then SIGKILL to whatever of it
 * is still there after STOP_GRACE_MS (a hook may ignore SIGTERM).
 */
export function stopScript(pgid: number): string {
  return `PGID=${pgid} TENTHS=${Math.ceil(STOP_GRACE_MS / 100)}
${STOP}`;
}

/** The stop's sh (stop.sh). */
const STOP = shellText('machines/stop.sh');

/**
 * The hook's wrapper: starts the hook with `sh -c` under `setsid` (a process group of its
 * own, its output and errors on ssh's standard output) in a clean environment (`env -i`:
 * HOOK_PATH (limits.ts), the far side's LANG from /etc/default/locale else C.UTF-8, the HOME of
 * the user it runs as, and `env`; nothing of the login's, which may hold the operator's or
 * sudo's), and tells berth on standard error the group (`berth-run <pgid>`) and then the
 * hook's exit status (`berth-exit <code>`). Only berth's own variables, never a secret, are
 * on env's command line.
 */
export function runScript(script: string, env: Record<string, string>): string {
  const assignments = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new MachineError('failed', `${name} cannot be the name of an environment variable`);
    }
    return shellWord(`${name}=${value}`);
  });
  return `HOOK_PATH=${shellWord(HOOK_PATH)} NO_SETSID=${shellWord(NO_SETSID)} HOOK=${shellWord(script)}
set -- ${assignments.join(' ')}
${RUN}`;
}

/** The hook's wrapper's sh (run.sh). */
const RUN = shellText('machines/run.sh');
