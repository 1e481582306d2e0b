import { type ChildProcess, spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { posix } from 'node:path';
import { packageManager } from '../packages/managers.ts';
import { waitSeconds } from '../packages/packages.ts';
import {
  type Change,
  type Machine,
  MachineError,
  RAW_OUTPUT_KEPT,
  type RunOptions,
  type RunResult,
  type StoppedBy,
  stoppedLine,
  whenToStop,
} from './machine.ts';
import {
  applyScript,
  doneIn,
  NO_SETSID,
  parseSurvey,
  printfFormat,
  REACHED,
  reached,
  refusal,
  runScript,
  stopScript,
  surveyScript,
  whatOf,
} from './ssh-scripts.ts';
import { type Answer, failedAs, lines, noShell, noSsh, sshWords } from './ssh-words.ts';

/** The options of a connection of its own, which shares no ControlMaster. */
const OWN_CONNECTION = ['-o', 'ControlMaster=no', '-o', 'ControlPath=none'];

/** Seconds ssh waits for a connection before it gives up: no call hangs on a dead host. */
const CONNECT_TIMEOUT = 10;
/** A ControlMaster lives this many seconds after its last session. */
const CONTROL_PERSIST = 60;

/**
 * A host that goes silent (its link cut, its machine frozen) is given up within about
 * 12 s: a keep-alive after 4 s without a word from it, and the connection dropped when
 * 2 more go unanswered; the other nodes of a target carry on.
 */
const SERVER_ALIVE_INTERVAL = 4;
const SERVER_ALIVE_COUNT_MAX = 2;
/**
 * The longest script (as a printf format) that rides in the command itself. The far side's
 * login shell gets the whole command as one argument, and Linux takes at most 128 KiB in one.
 */
export const IN_COMMAND_LIMIT = 96 * 1024;

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

/**
 * A machine reached through the system `ssh`, so the operator's config, agent,
 * identities, ProxyJump and known_hosts all apply. berth adds BatchMode (never a prompt),
 * a multiplexed connection (ControlMaster), a connect timeout and keepalives; it never
 * loosens host key checking. Each call ships a POSIX sh script, so the far side needs sh,
 * coreutils and stat, nothing berth installs. A survey is one round trip whatever the
 * number of paths, a batch of changes one whatever the number of changes, a hook one
 * (stopping it early is a second).
 *
 * A script with secrets in it (a batch of changes) goes on ssh's standard input, never on
 * a command line. sshd opens a session's window only once its command runs, so what is
 * sent on standard input follows a round trip behind the command: a script without
 * secrets (a survey, a hook, a stop) rides in the command instead, as a printf format
 * that any login shell passes on untouched, unless it is too long for one argument.
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
    `ServerAliveInterval=${SERVER_ALIVE_INTERVAL}`,
    '-o',
    `ServerAliveCountMax=${SERVER_ALIVE_COUNT_MAX}`,
    ...(port === undefined ? [] : ['-p', String(port)]),
    ...(sshConfig === undefined ? [] : ['-F', sshConfig]),
  ];
  /** The remote command: a shell that reads its script from standard input. */
  const remote = sudo ? ['sudo', '-n', 'sh', '-s'] : ['sh', '-s'];
  // A process group of its own: a Ctrl-C at berth's terminal reaches berth, which stops
  // a hook on the far side, and not ssh, whose end would leave the hook running there.
  // `own`: a connection of its own rather than the shared master's (ssh takes the first
  // value it is given of an option, so these come before `common`).
  const ssh = (extra: string[], own = false) =>
    spawn('ssh', [...(own ? OWN_CONNECTION : []), ...common, ...extra], {
      stdio: 'pipe',
      detached: true,
    });

  /** An ssh session running `script` on the far side, shipped as `carried` says. */
  const start = (script: string, carried: Carried, own = false): ChildProcess => {
    const format = carried === 'in the command' ? printfFormat(script) : undefined;
    const inCommand = format !== undefined && format.length <= IN_COMMAND_LIMIT;
    const child = ssh(
      ['--', destination, ...(inCommand ? [`printf '${format}' | ${remote.join(' ')}`] : remote)],
      own,
    );
    child.stdin?.on('error', () => {}); // The far side may stop reading early.
    child.stdin?.end(inCommand ? undefined : script);
    return child;
  };

  /** One round trip: the script out, the whole answer back. */
  const call = (script: string, carried: Carried, own = false): Promise<Answer> =>
    new Promise((done, fail) => {
      const child = start(script, carried, own);
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
    const answer = await call(script, 'in the command');
    if (!reached(answer.stdout)) throw await notReached(answer);
    if (answer.code !== 0) throw failedAs(what, answer);
    return answer;
  };

  /**
   * A package manager's script, run as root: its output read as the manager says. One whose
   * answer ended before the package manager did lost its host on the way (the manager may
   * still be running there): said with ssh's words, never the manager's last line. It runs
   * long, over a connection of its own: a session over the shared master hears nothing
   * when the master gives the host up, where ssh itself says why it did.
   */
  const packageCall = async (script: string) => {
    const answer = await call(`printf '${REACHED}\\n'\n${script}`, 'in the command', true);
    if (!reached(answer.stdout)) throw await notReached(answer);
    const said = answer.stdout.subarray(REACHED.length + 1).toString('utf8');
    const read = packageManager.readInstall(said);
    if (read) return read;
    const words =
      lines(answer.stderr).length > 0
        ? sshWords(lines(answer.stderr), answer.stderr)
        : `ssh: the connection ended without a word (exit ${answer.code})`;
    throw new MachineError(
      'unreachable',
      `${node} went silent while apt ran there (${words}); apt may still be at work on ${node}: converge it again once it answers`,
    );
  };

  return {
    async survey(paths, names, packages, asks) {
      const answer = await act('survey', surveyScript(paths, names, packages, asks));
      return parseSurvey(paths, answer.stdout, names, packages, asks);
    },
    install: (pins, { waitMs, holdStarts }) =>
      packageCall(packageManager.installScript(pins, waitSeconds(waitMs), holdStarts)),
    refreshPackages: ({ waitMs }) => packageCall(packageManager.refreshScript(waitSeconds(waitMs))),
    unholdStarts: () => packageCall(packageManager.unholdScript()),
    async apply(changes) {
      // A change berth cannot ship (a path not normalised, an id not a number) ends the
      // batch where it stands: those before it are made, and it is the failure.
      const refused = changes.findIndex((change) => refusal(change) !== undefined);
      const shipped = refused === -1 ? changes : changes.slice(0, refused);
      if (shipped.length > 0) {
        const answer = await call(applyScript(shipped), 'on standard input').catch(
          (error: MachineError) => error,
        );
        if (answer instanceof MachineError) return { done: 0, failure: answer };
        if (!reached(answer.stdout)) return { done: 0, failure: await notReached(answer) };
        const done = doneIn(answer.stdout, shipped.length);
        if (done < shipped.length) {
          const failure =
            answer.code === 0
              ? new MachineError('failed', `the batch's answer could not be read: it ended early`)
              : failedAs(whatOf(shipped[done] as Change), answer, shipped[done]?.path);
          return { done, failure };
        }
      }
      if (refused === -1) return { done: changes.length };
      return { done: refused, failure: refusal(changes[refused] as Change) };
    },
    async run(script, env, runOptions) {
      const hook = runScript(script, { ...env, BERTH_ROOT: '/' });
      const child = start(hook, 'in the command');
      const result = await watchHook(child, runOptions, (pgid) =>
        // Stopping a hook is a second round trip: its whole process group on the far side.
        call(stopScript(pgid), 'in the command').then(
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

/**
 * How a script travels to the far side: in the command (a round trip sooner; seen in the
 * process lists on both sides, so never with a secret in it) or on ssh's standard input.
 */
type Carried = 'in the command' | 'on standard input';

type Watched = RunResult | { answer: Answer };

/** Follows a hook's ssh call: its output as it comes, its end, stopping it on request. */
function watchHook(
  child: ChildProcess,
  options: RunOptions = {},
  kill: (pgid: number) => Promise<void>,
): Promise<Watched> {
  return new Promise((done, fail) => {
    let output = '';
    const decoder = new TextDecoder();
    child.stdout?.on('data', (chunk: Buffer) => {
      const text = decoder.decode(chunk, { stream: true });
      output = (output + text).slice(-RAW_OUTPUT_KEPT);
      if (text) options.output?.(text);
    });
    let stderr = '';
    let pending = '';
    let pgid: number | undefined;
    let exitCode: number | undefined;
    let stoppedBy: StoppedBy | undefined;
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
    const stop = (why: StoppedBy) => {
      if (stoppedBy) return;
      stoppedBy = why;
      stopNow();
    };
    const letGo = whenToStop(options, stop);
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
        // A session over a ControlMaster hears nothing when the master gives the host up.
        const said =
          lines(stderr).at(-1) ??
          `ssh: the connection ended without a word (exit ${code}): the host stopped answering or went away`;
        fail(new MachineError('unreachable', `the connection broke while the hook ran: ${said}`));
        return;
      }
      const stopped = stoppedBy ? `\n${stoppedLine(stoppedBy, options.deadlineMs)}` : '';
      done({
        code: exitCode,
        output: `${output.slice(-RAW_OUTPUT_KEPT).trimEnd()}${stopped}`.trim(),
        ...(stoppedBy ? { stopped: stoppedBy } : {}),
      });
    });
  });
}
