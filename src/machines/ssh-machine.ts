import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { posix } from 'node:path';
import {
  type AccountNames,
  type Change,
  KEPT_OUTPUT,
  type Machine,
  MachineError,
  type PathFacts,
  READ_LIMIT,
  type RunOptions,
  type RunResult,
  STOP_GRACE_MS,
  type Survey,
  type SurveyPath,
  whenToStop,
} from './machine.ts';

/** Seconds ssh waits for a connection before it gives up: no call hangs on a dead host. */
const CONNECT_TIMEOUT = 10;
/** A ControlMaster lives this many seconds after its last session. */
const CONTROL_PERSIST = 60;

export interface SshMachineOptions {
  /** The node's name, for the words of a refusal. */
  node: string;
  /** As ssh takes it: `admin@web1.lan`, or a `Host` alias of the operator's ssh config. */
  destination: string;
  port?: number;
  /** The login is not root: everything runs through `sudo -n`. */
  sudo?: boolean;
  /** A private directory (0700) for the ControlMaster sockets: see sshRuntimeDir. */
  runtimeDir: string;
  /** An ssh config file to use instead of the operator's (`-F`): berth.json's `sshConfig`. */
  sshConfig?: string;
  /** Seconds to wait for the connection; 10 unless a test says otherwise. */
  connectTimeout?: number;
}

/**
 * An ssh machine lets go of nothing on `close`: its ControlMaster is shared by every act
 * on the node in this process (and by the next berth command within the minute), and
 * ends by itself a minute after its last session (ControlPersist). `exit` ends it now,
 * for a process that knows it is done with the node, such as a test.
 */
export interface SshMachine extends Machine {
  exit(): Promise<void>;
}

/** What one ssh call came back with. */
interface Answer {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/**
 * A machine reached through the system `ssh`, so the operator's config, agent,
 * identities, ProxyJump and known_hosts all apply. berth adds BatchMode (never a prompt),
 * a multiplexed connection (ControlMaster), a connect timeout and keepalives; it never
 * loosens host key checking. Each call ships a POSIX sh script on ssh's standard input
 * (never on a command line), so the far side needs sh, coreutils and stat, nothing
 * berth installs. A survey is one round trip whatever the number of paths, a batch of
 * changes one whatever the number of changes, a hook one (stopping it early is a second).
 */
export function sshMachine(options: SshMachineOptions): SshMachine {
  const { node, destination, port, sudo = false, runtimeDir, sshConfig } = options;
  const connectTimeout = options.connectTimeout ?? CONNECT_TIMEOUT;
  if (port !== undefined && !(Number.isInteger(port) && port >= 1 && port <= 65_535)) {
    throw new MachineError('failed', `${node}: port ${port} is not a port (1 to 65535)`);
  }
  const common = [
    '-T',
    '-o',
    'BatchMode=yes',
    '-o',
    'ControlMaster=auto',
    '-o',
    `ControlPath=${runtimeDir.replaceAll('%', '%%')}/%C`,
    '-o',
    `ControlPersist=${CONTROL_PERSIST}`,
    '-o',
    `ConnectTimeout=${connectTimeout}`,
    '-o',
    'ServerAliveInterval=15',
    '-o',
    'ServerAliveCountMax=3',
    ...(port === undefined ? [] : ['-p', String(port)]),
    ...(sshConfig === undefined ? [] : ['-F', sshConfig]),
  ];
  /** The remote command: a shell that reads its script from standard input. */
  const remote = sudo ? ['sudo', '-n', 'sh', '-s'] : ['sh', '-s'];
  // A process group of its own: a Ctrl-C at berth's terminal reaches berth, which stops
  // a hook on the far side, and not ssh, whose end would leave the hook running there.
  const ssh = (extra: string[]) =>
    spawn('ssh', [...common, ...extra], { stdio: 'pipe', detached: true });

  /** One round trip: the script on stdin, the whole answer back. */
  const call = (script: string): Promise<Answer> =>
    new Promise((done, fail) => {
      const child = ssh(['--', destination, ...remote]);
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout?.on('data', (chunk: Buffer) => out.push(chunk));
      child.stderr?.on('data', (chunk: Buffer) => err.push(chunk));
      child.on('error', (error) => fail(noSsh(error)));
      child.on('close', (code) =>
        done({
          code: code ?? 255,
          stdout: Buffer.concat(out),
          stderr: Buffer.concat(err).toString('utf8'),
        }),
      );
      child.stdin?.on('error', () => {}); // The far side may stop reading early.
      child.stdin?.end(script);
    });

  /** The refusal for a call that never reached the script: ssh, sudo or sh said no. */
  const notReached = async (answer: Answer): Promise<MachineError> => {
    const said = lines(answer.stderr);
    const last = said.at(-1) ?? '';
    if (answer.code === 255) return new MachineError('unreachable', sshWords(said, answer.stderr));
    if (said.includes(NO_SETSID)) {
      return new MachineError(
        'failed',
        `${node} has no setsid (util-linux): berth runs a hook there in a process group of its own with it, so that stopping the hook stops all it started`,
      );
    }
    if (noShell(said, answer.code)) {
      return new MachineError(
        'unreachable',
        `the far side has no sh on its PATH (${last}); berth needs a POSIX sh, coreutils and stat there`,
      );
    }
    const fromSudo = sudo ? said.find((line) => line.startsWith('sudo:')) : undefined;
    if (fromSudo !== undefined) {
      const user = await loginUser();
      if (/password/i.test(fromSudo)) {
        return new MachineError(
          'denied',
          `${node}: sudo asks for a password for ${user}; berth runs sudo -n: allow ${user} to run sudo without a password (a NOPASSWD rule) or log in as root`,
        );
      }
      return new MachineError(
        'denied',
        `${node}: sudo refused ${user} (${fromSudo}); berth runs everything there through sudo -n`,
      );
    }
    return new MachineError(
      'failed',
      `${node}: ssh reached it but its shell did not run berth's script (exit ${answer.code}${last ? `: ${last}` : ''})`,
    );
  };

  /** Who ssh logs in as, for sudo's words: ssh's own resolution of the destination. */
  const loginUser = async (): Promise<string> => {
    const at = destination.lastIndexOf('@');
    if (at > 0) return destination.slice(0, at);
    const answer = await new Promise<string>((done) => {
      const child = spawn('ssh', [...common, '-G', '--', destination], { stdio: 'pipe' });
      let text = '';
      child.stdout.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
      });
      child.on('error', () => done(''));
      child.on('close', () => done(text));
    });
    return /^user (\S+)$/m.exec(answer)?.[1] ?? 'the login user';
  };

  /** Runs a script that starts with REACHED; refuses as the answer says when it fails. */
  const act = async (what: string, script: string): Promise<Answer> => {
    const answer = await call(script);
    if (!reached(answer)) throw await notReached(answer);
    if (answer.code !== 0) throw failedAs(what, answer);
    return answer;
  };

  return {
    async survey(paths, names) {
      const answer = await act('survey', surveyScript(paths, names));
      return parseSurvey(paths, answer.stdout, names);
    },
    async apply(changes) {
      // A change berth cannot ship (a path not normalised, an id not a number) ends the
      // batch where it stands: those before it are made, and it is the failure.
      const refused = changes.findIndex((change) => refusal(change) !== undefined);
      const shipped = refused === -1 ? changes : changes.slice(0, refused);
      if (shipped.length > 0) {
        const answer = await call(applyScript(shipped)).catch((error: MachineError) => error);
        if (answer instanceof MachineError) return { done: 0, failure: answer };
        if (!reached(answer)) return { done: 0, failure: await notReached(answer) };
        const done = doneIn(answer.stdout, shipped.length);
        if (done < shipped.length) {
          const failure =
            answer.code === 0
              ? new MachineError('failed', `the batch's answer could not be read: it ended early`)
              : failedAs(whatOf(shipped[done] as Change), answer);
          return { done, failure };
        }
      }
      if (refused === -1) return { done: changes.length };
      return { done: refused, failure: refusal(changes[refused] as Change) };
    },
    async run(script, env, runOptions) {
      const hook = runScript(script, { ...env, BERTH_ROOT: '/' });
      const child = ssh(['--', destination, ...remote]);
      const result = await watchHook(child, hook, runOptions, (pgid) =>
        // Stopping a hook is a second round trip: its whole process group on the far side.
        call(stopScript(pgid)).then(
          () => {},
          () => {},
        ),
      );
      if ('answer' in result) throw await notReached(result.answer);
      return result;
    },
    close: async () => {},
    exit: () =>
      new Promise((done) => {
        const child = ssh(['-O', 'exit', '--', destination]);
        child.on('error', () => done());
        child.on('close', () => done());
        child.stdin?.end();
      }),
  };
}

/**
 * The directory for ControlMaster sockets, made once per process and private (0700):
 * `$XDG_RUNTIME_DIR/berth-ssh`, else `berth-ssh-<uid>` in the temporary directory (so a
 * berth command within the minute reuses the connection the last one left), else a fresh
 * one when that name is taken by someone else or too long for a socket path.
 */
export function sshRuntimeDir(): string {
  if (runtimeDirMade !== undefined) return runtimeDirMade;
  const uid = process.getuid?.() ?? 0;
  const candidates = [
    ...(process.env.XDG_RUNTIME_DIR ? [posix.join(process.env.XDG_RUNTIME_DIR, 'berth-ssh')] : []),
    posix.join(tmpdir(), `berth-ssh-${uid}`),
  ];
  for (const dir of candidates) {
    // A unix socket's path has room for about 100 bytes: the directory, a slash, 40 of %C.
    if (dir.length > 60) continue;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') continue;
    }
    const info = lstatSync(dir, { throwIfNoEntry: false });
    if (info?.isDirectory() && info.uid === uid && (info.mode & 0o077) === 0) {
      runtimeDirMade = dir;
      return dir;
    }
  }
  runtimeDirMade = mkdtempSync(posix.join(tmpdir().length > 40 ? '/tmp' : tmpdir(), 'berth-ssh-'));
  return runtimeDirMade;
}
let runtimeDirMade: string | undefined;

/** What the hook's wrapper says, before it starts anything, where there is no setsid. */
const NO_SETSID = 'berth: no setsid';

/** The first line of every script's answer: the far side was reached and runs berth's sh. */
const REACHED = 'berth 1';

/** A string as one word of sh: single quotes, each inner quote as '\''. */
export function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function checkPath(path: string) {
  const refused = pathRefusal(path);
  if (refused) throw refused;
}

function pathRefusal(path: string): MachineError | undefined {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.includes('\0'))
    return new MachineError('failed', `${path} is not an absolute, normalised machine path`);
  return undefined;
}

function lines(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.replaceAll('\r', '').trim())
    .filter((line) => line.length > 0);
}

function noSsh(error: Error): MachineError {
  const code = (error as NodeJS.ErrnoException).code;
  return new MachineError(
    'unreachable',
    code === 'ENOENT'
      ? 'there is no ssh command here; install the OpenSSH client'
      : `ssh could not start: ${error.message}`,
  );
}

function noShell(said: string[], code: number): boolean {
  return (
    said.some(
      (line) =>
        /(^|[\s:])sh: (command )?not found$/.test(line) ||
        /(^|[\s:])sh: No such file or directory$/.test(line),
    ) ||
    (code === 127 && said.some((line) => /\bsh\b/.test(line)))
  );
}

/** ssh's own last words when it could not get there, with what the operator can do. */
function sshWords(said: string[], all: string): string {
  const last = said.at(-1) ?? 'ssh failed and said nothing';
  /** ssh's line (said as ssh's), then what the operator can do about it. */
  const words = (line: string, todo: string) =>
    `${line.startsWith('ssh:') ? '' : 'ssh: '}${line.replace(/\.$/, '')}; ${todo}`;
  /** The line that says more than the last, "Host key verification failed.", and the last. */
  const withLast = (line: string | undefined) => (line && line !== last ? `${line} ${last}` : last);
  if (all.includes('REMOTE HOST IDENTIFICATION HAS CHANGED')) {
    const line = said.find((each) => /^Host key for \S+ has changed/.test(each));
    const host = line && /^Host key for (\S+) has changed/.exec(line)?.[1];
    return words(
      `REMOTE HOST IDENTIFICATION HAS CHANGED: ${withLast(line)}`,
      `if the host was reinstalled, remove the old key with ssh-keygen -R ${host ? `'${host}'` : 'HOST'} and add the new one after checking its fingerprint by hand; if it was not, someone may be in between`,
    );
  }
  const unknown = said.find((each) => /^No \S+ host key is known for \S+/.test(each));
  if (unknown || /Host key verification failed/.test(all)) {
    const host = unknown && /^No \S+ host key is known for (\S+)/.exec(unknown)?.[1];
    return words(
      withLast(unknown),
      `add its key to known_hosts (ssh-keyscan ${host ? keyscanArgs(host) : 'HOST'}, checked by hand against the host's own fingerprint)`,
    );
  }
  if (/Permission denied \(/.test(last)) {
    return words(
      last,
      'berth logs in without prompting (BatchMode): give ssh a key that this login accepts (the agent, or IdentityFile in ~/.ssh/config)',
    );
  }
  if (/Connection refused/.test(last)) {
    return words(last, 'check that sshd runs there and listens on that port (port in berth.json)');
  }
  if (/timed out/i.test(last)) {
    return words(last, 'check that the host is up, the address is right and sshd answers there');
  }
  if (/Could not resolve hostname/.test(last)) {
    return words(last, 'check the name in berth.json or its Host entry in ~/.ssh/config');
  }
  if (/No route to host|Network is unreachable/.test(last)) {
    return words(last, 'check the network between here and the host');
  }
  return last.startsWith('ssh:') ? last : `ssh: ${last}`;
}

/** `[host]:port` as known_hosts spells a host on another port, as ssh-keyscan wants it. */
function keyscanArgs(host: string): string {
  const bracketed = /^\[(.+)\]:(\d+)$/.exec(host);
  return bracketed ? `-p ${bracketed[2]} ${bracketed[1]}` : host;
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
function surveyScript(paths: readonly SurveyPath[], names?: AccountNames): string {
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

function parseSurvey(paths: readonly SurveyPath[], stdout: Buffer, names?: AccountNames): Survey {
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
function reached(answer: Answer): boolean {
  return answer.stdout.subarray(0, REACHED.length + 1).equals(Buffer.from(`${REACHED}\n`));
}

/** The refusal for a script that ran and failed: its last words on standard error. */
function failedAs(what: string, answer: Answer): MachineError {
  const said = lines(answer.stderr).filter((line) => !line.startsWith('Warning: '));
  const last = said.at(-1) ?? `exit ${answer.code}`;
  const denied = /Permission denied|Operation not permitted|Read-only file system/.test(last);
  return new MachineError(denied ? 'denied' : 'failed', `${what} failed: ${last}`);
}

/** A change as the words of its failure name it. */
function whatOf(change: Change): string {
  return `${change.kind === 'file' ? 'write' : 'create'} ${change.path}`;
}

/** Why a change cannot be shipped as it is, if it cannot. */
function refusal(change: Change): MachineError | undefined {
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
function doneIn(stdout: Buffer, shipped: number): number {
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
function applyScript(changes: readonly Change[]): string {
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
function stopScript(pgid: number): string {
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
function runScript(script: string, env: Record<string, string>): string {
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

type Watched = RunResult | { answer: Answer };

/** Follows a hook's ssh call: its output as it comes, its end, stopping it on request. */
function watchHook(
  child: ChildProcess,
  script: string,
  options: RunOptions = {},
  kill: (pgid: number) => Promise<void>,
): Promise<Watched> {
  const { signal } = options;
  return new Promise((done, fail) => {
    let output = '';
    const decoder = new TextDecoder();
    child.stdout?.on('data', (chunk: Buffer) => {
      const text = decoder.decode(chunk, { stream: true });
      output = (output + text).slice(-KEPT_OUTPUT);
      if (text) options.output?.(text);
    });
    let stderr = '';
    let pending = '';
    let pgid: number | undefined;
    let exitCode: number | undefined;
    let stoppedBy = '';
    let killing = false;
    const stopNow = () => {
      if (pgid === undefined || killing || exitCode !== undefined) return;
      killing = true;
      void kill(pgid);
    };
    child.stderr?.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const parts = pending.split('\n');
      pending = parts.pop() ?? '';
      for (const line of parts) {
        const started = /^berth-run (\d+)$/.exec(line);
        const ended = /^berth-exit (\d+)$/.exec(line);
        if (started) {
          pgid = Number(started[1]);
          if (stoppedBy) stopNow();
        } else if (ended) {
          exitCode = Number(ended[1]);
          // The hook's shell is done; a daemon it left may hold the output open. Let the
          // last output arrive, then let go of the session.
          setTimeout(() => child.kill('SIGTERM'), 100).unref();
        } else stderr += `${line}\n`;
      }
    });
    const stop = (why: string) => {
      if (stoppedBy) return;
      stoppedBy = why;
      stopNow();
    };
    const letGo = whenToStop(signal, stop);
    const finish = () => {
      letGo();
      child.stdout?.destroy();
      child.stderr?.destroy();
    };
    child.on('error', (error) => {
      finish();
      fail(noSsh(error));
    });
    child.on('close', (code) => {
      finish();
      output += decoder.decode();
      if (exitCode === undefined) {
        stderr += pending;
        if (pgid === undefined) {
          done({ answer: { code: code ?? 255, stdout: Buffer.alloc(0), stderr } });
          return;
        }
        const said = lines(stderr).at(-1) ?? `ssh ended with ${code}`;
        fail(new MachineError('unreachable', `the connection broke while the hook ran: ${said}`));
        return;
      }
      const stopped = stoppedBy && exitCode !== 0 ? `\nstopped by ${stoppedBy}` : '';
      done({ code: exitCode, output: `${output.slice(-KEPT_OUTPUT)}${stopped}`.trim() });
    });
    child.stdin?.on('error', () => {});
    child.stdin?.end(script);
  });
}
