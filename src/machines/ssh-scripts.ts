import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import {
  type AccountNames,
  type Change,
  MachineError,
  type PathFacts,
  READ_LIMIT,
  STOP_GRACE_MS,
  type Survey,
  type SurveyPath,
} from './machine.ts';

// What the ssh machine ships to the far side, one POSIX sh script a call (in ssh's command,
// or on its standard input when it holds secrets: see ssh-machine.ts), and how it reads
// their answers. Each script's answer starts with REACHED, so that a script that never ran
// (ssh, sudo or sh said no) is told from one that failed.

/** What the hook's wrapper says, before it starts anything, where there is no setsid. */
export const NO_SETSID = 'berth: no setsid';

/** The first line of every script's answer: the far side was reached and runs berth's sh. */
export const REACHED = 'berth 1';

/** A string as one word of sh: single quotes, each inner quote as '\''. */
function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

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
 * The survey script: one record a path, in order, each line `<index> <what> ...`:
 * `missing`, `other`, `unreadable <reason>`, `dir <rawmode hex> <size> <uid> <gid> <empty 0|1>`,
 * `file <rawmode hex> <size> <uid> <gid>`, or `read ...` the same followed by the bytes in
 * base64 and a line `.` (or `!` when they could not be read). Then, for each name asked,
 * `user <name> <uid>` or `group <name> <gid>` (`-` for a name the machine does not know,
 * as `getent` answers it). Then `berth end`.
 *
 * Each program it runs costs the far side a process (about a millisecond), so the shell's
 * own tests sort the paths first, and one `stat` gives the numbers of all that exist. A
 * path that is not there is missing, or unreadable when a directory above it may not be
 * searched, as the tests of its nearest existing directory say; only what they cannot
 * tell (a link that leads nowhere, a name too long) is asked of `stat` on its own, which
 * says why. When the one `stat` fails (a path went away since it was sorted), every path
 * is asked on its own, as its lines could not be matched to the paths. One `getent` a
 * database resolves the names, unless it does not know them all.
 */
export function surveyScript(paths: readonly SurveyPath[], names?: AccountNames): string {
  const asks = paths.map((asked, index) => {
    checkPath(asked.path);
    return `k ${index} ${quote(asked.path)} ${asked.read ? 1 : 0}`;
  });
  return `LC_ALL=C; export LC_ALL
printf '${REACHED}\\n'
NL='
'
# f <index> <path> <read> <rawmode size uid gid>: the record of a path that exists.
f() {
  t=0x\${4%% *}
  case $(($t & 61440)) in
    16384)
      if [ -r "$2" ] && [ -x "$2" ]; then
        e=1
        for x in "$2"/* "$2"/.[!.]* "$2"/..?*; do
          if [ -e "$x" ] || [ -L "$x" ]; then e=0; break; fi
        done
        printf '%s dir %s %s\\n' "$1" "$4" "$e"
      else
        printf '%s unreadable permission denied\\n' "$1"
      fi ;;
    32768)
      s=\${4#* }; s=\${s%% *}
      if [ "$3" = 1 ] && [ "$s" -le ${READ_LIMIT} ]; then
        printf '%s read %s\\n' "$1" "$4"
        if base64 -- "$2" 2>/dev/null; then printf '.\\n'; else printf '\\n!\\n'; fi
      else
        printf '%s file %s\\n' "$1" "$4"
      fi ;;
    *) printf '%s other\\n' "$1" ;;
  esac
}
# q <index> <path> <read>: a path asked of stat on its own, which says why it is not there.
q() {
  if ! m=$(stat -L -c '%f %s %u %g' -- "$2" 2>&1); then
    case $m in
      *'No such file or directory'*|*'Not a directory'*) printf '%s missing\\n' "$1" ;;
      *'Permission denied'*) printf '%s unreadable permission denied\\n' "$1" ;;
      *) printf '%s unreadable %s\\n' "$1" "$(printf '%s' "$m" | tr '\\n' ' ')" ;;
    esac
    return 0
  fi
  f "$1" "$2" "$3" "$m"
}
# k <index> <path> <read>: sorts a path: x exists (for the one stat), m missing, d
# denied (a directory above it may not be searched), q only stat can tell.
E=
k() {
  eval "p$1=\\$2 r$1=\\$3"
  if [ -e "$2" ]; then
    t=x; E="$E $1"
  elif [ \${#2} -gt 4095 ]; then
    t=q
  else
    # c: the first name on the way that is not there, d: the directory it is looked up in.
    c=$2
    while d=\${c%/*}; d=\${d:-/}; [ "$d" != / ] && [ ! -e "$d" ]; do c=$d; done
    n=\${c##*/}
    if [ ! -d "$d" ]; then t=m
    elif [ ! -x "$d" ]; then t=d
    elif [ -L "$c" ] || [ \${#n} -gt 255 ]; then t=q
    else t=m
    fi
  fi
  eval "c$1=\\$t"
}
${asks.join('\n')}
set --
for i in $E; do eval "set -- \\"\\$@\\" \\"\\$p$i\\""; done
# F=1: the one stat failed, so each path is asked on its own.
F=0; J=0
if [ $# -gt 0 ]; then
  if S=$(stat -L -c '%f %s %u %g' -- "$@" 2>/dev/null); then
    set -f; IFS=$NL; j=0
    for l in $S; do eval "s$j=\\$l"; j=$((j + 1)); done
    unset IFS; set +f
    [ $j = $# ] || F=1
  else
    F=1
  fi
fi
i=0
while [ $i -lt ${paths.length} ]; do
  eval "p=\\$p$i r=\\$r$i t=\\$c$i"
  if [ $F = 1 ]; then t=q; fi
  case $t in
    x) eval "l=\\$s$J"; J=$((J + 1)); f $i "$p" $r "$l" ;;
    m) printf '%s missing\\n' $i ;;
    d) printf '%s unreadable permission denied\\n' $i ;;
    q) q $i "$p" $r ;;
  esac
  i=$((i + 1))
done
# a <database> <name> <kind>: one name's id, when getent did not answer for them all.
a() {
  if command -v getent >/dev/null 2>&1; then i=$(getent "$1" "$2" 2>/dev/null | cut -d: -f3)
  else i=$(awk -F: -v n="$2" '$1 == n { print $3; exit }' "/etc/$1" 2>/dev/null); fi
  case $i in ''|*[!0-9]*) i=- ;; esac
  printf '%s %s %s\\n' "$3" "$2" "$i"
}
# A <database> <kind> <name>...: each name's id, in order: from one getent, which answers
# one line a name in order when it knows them all (exit 0), else name by name.
A() {
  b=$1 n=$2; shift 2; k=$#
  if [ $k -gt 0 ] && command -v getent >/dev/null 2>&1 && G=$(getent "$b" "$@" 2>/dev/null); then
    set -f; IFS=$NL; set -- "$@" $G; unset IFS; set +f
    if [ $# = $((k * 2)) ]; then
      j=1
      while [ $j -le $k ]; do
        eval "v=\\\${$j} i=\\\${$((j + k))}"
        i=\${i#*:}; i=\${i#*:}; i=\${i%%:*}
        case $i in ''|*[!0-9]*) i=- ;; esac
        printf '%s %s %s\\n' "$n" "$v" "$i"
        j=$((j + 1))
      done
      return 0
    fi
  fi
  j=1
  while [ $j -le $k ]; do eval "a \\"\\$b\\" \\"\\\${$j}\\" \\"\\$n\\""; j=$((j + 1)); done
}
${accountAsks(names).join('\n')}
printf 'berth end\\n'
`;
}

/** A name is asked for only as a name can be spelled: it is quoted besides. */
const ACCOUNT_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,31}\$?$/;

function accountAsks(names?: AccountNames): string[] {
  if (!names) return [];
  const ask = (database: string, kind: string, asked: readonly string[]) => {
    for (const name of asked) {
      if (!ACCOUNT_NAME.test(name))
        throw new MachineError('failed', `${name} is not a name a ${kind} can have`);
    }
    return [`A ${database} ${kind}`, ...asked.map(quote)].join(' ');
  };
  return [ask('passwd', 'user', names.users), ask('group', 'group', names.groups)];
}

export function parseSurvey(
  paths: readonly SurveyPath[],
  stdout: Buffer,
  names?: AccountNames,
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
  if (!names) {
    if (text[at] !== 'berth end') throw broken('it ended early');
    return facts;
  }
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
  if (text[at] !== 'berth end') throw broken('it ended early');
  return Object.assign(facts, { accounts });
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
 * done, and at the first failure the end, its words the last on standard error. A
 * directory: `mkdir -p`, its owner, its mode. A file: its directory (as a directory
 * change makes it; only the temporary file is born private), the sweep of a dead write's
 * temporary files beside it, the data (base64 in a here-document: on stdin, never on a
 * command line or in an environment) into a new temporary file made under umask 077, its
 * owner and mode. Files staged one after another share one sync of their data, then take
 * their names in order by rename, then share one sync of their directories; they take
 * their names before anything after them is done, a failure after them included. Each
 * program it runs costs the far side a process (about a millisecond): a test in the
 * shell spares one where it can.
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
        `m ${index} ${quote(path)} ${quote(owner)} ${mode === undefined ? "''" : octal(mode)}`,
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
    const name = posix.basename(path);
    const temporary = posix.join(
      posix.dirname(path),
      `.${name}.${randomBytes(6).toString('hex')}.tmp`,
    );
    const encoded = Buffer.from(change.data)
      .toString('base64')
      .replace(/.{1,76}/g, '$&\n');
    body.push(
      `s ${index} ${quote(path)} ${quote(temporary)} ${quote(owner)} ${octal(change.options.mode)} <<'berth-data-end'\n${encoded}berth-data-end`,
    );
  }
  return `set -C
printf '${REACHED}\\n'
u=$(umask)
P=
# r: the staged files: their data synced, each renamed in order, their directories synced.
r() {
  [ -n "$P" ] || return 0
  set --
  for i in $P; do eval "set -- \\"\\$@\\" \\"\\$t$i\\""; done
  { sync -- "$@" || sync; } 2>/dev/null
  set --; D=; k=0
  for i in $P; do
    eval "f=\\$f$i t=\\$t$i"
    if [ $k = 0 ]; then
      if [ -L "$f" ] && [ -d "$f" ]; then rm -f -- "$f"; fi
      if mv -f -- "$t" "$f"; then D="$D $i"; d=\${f%/*}; set -- "$@" "\${d:-/}"; continue; fi
      k=1
    fi
    rm -f -- "$t"
  done
  P=
  [ $# = 0 ] || sync -- "$@" 2>/dev/null || :
  for i in $D; do printf 'done %s\\n' "$i"; done
  [ $k = 0 ] || exit 1
}
# x: a change failed: the files staged before it take their names, then the end.
x() { r; exit 1; }
# m <index> <path> <owner> <mode>: a directory, after the files staged before it.
m() {
  r
  [ -d "$2" ] || mkdir -p -- "$2" || x
  if [ -n "$3" ]; then chown -- "$3" "$2" || x; fi
  if [ -n "$4" ]; then chmod -- "$4" "$2" || x; fi
  printf 'done %s\\n' "$1"
}
# s <index> <path> <temporary> <owner> <mode>: a file's data, from stdin, staged beside it.
s() {
  d=\${2%/*}; d=\${d:-/}; n=\${2##*/}
  [ -d "$d" ] || mkdir -p -- "$d" || x
  # rename(2) replaces a file or a link, and refuses a directory; mv would move into one.
  if [ -d "$2" ] && [ ! -L "$2" ]; then printf '%s: Is a directory\\n' "$2" >&2; x; fi
  for y in "$d"/."$n".*.tmp; do
    case \${y##*/} in ."$n".${'[0-9a-f]'.repeat(12)}.tmp) rm -f -- "$y" ;; esac
  done
  umask 077
  if ! base64 -d > "$3"; then umask "$u"; rm -f -- "$3"; x; fi
  umask "$u"
  if [ -n "$4" ] && ! chown -- "$4" "$3"; then rm -f -- "$3"; x; fi
  # Born 0600 under umask 077, it needs chmod only for another mode.
  if [ "$5" != 0600 ] && ! chmod -- "$5" "$3"; then rm -f -- "$3"; x; fi
  eval "f$1=\\$2 t$1=\\$3"
  P="$P $1"
}
${body.join('\n')}
r
`;
}

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
  const tenths = Math.ceil(STOP_GRACE_MS / 100);
  return `kill -TERM -${pgid} 2>/dev/null || exit 0
i=0
while kill -0 -${pgid} 2>/dev/null && [ $i -lt ${tenths} ]; do sleep 0.1; i=$((i + 1)); done
kill -KILL -${pgid} 2>/dev/null
:
`;
}

/**
 * The hook's wrapper: exports the environment, starts the hook with `sh -c` under
 * `setsid` (a process group of its own, its output and errors on ssh's standard output),
 * and tells berth on standard error the group (`berth-run <pgid>`) and then the hook's
 * exit status (`berth-exit <code>`).
 */
export function runScript(script: string, env: Record<string, string>): string {
  const exports = Object.entries(env).map(([name, value]) => {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new MachineError('failed', `${name} cannot be the name of an environment variable`);
    }
    return `${name}=${quote(value)}; export ${name}`;
  });
  return `${exports.join('\n')}
cd / || exit 1
command -v setsid >/dev/null 2>&1 || { echo '${NO_SETSID}' >&2; exit 3; }
setsid sh -c ${quote(script)} </dev/null 2>&1 &
pid=$!
printf 'berth-run %s\\n' "$pid" >&2
wait "$pid"
printf 'berth-exit %s\\n' "$?" >&2
`;
}
