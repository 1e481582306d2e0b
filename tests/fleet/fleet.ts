/**
 * A fleet of real ssh hosts on this one machine, for the tests of berth's ssh nodes.
 *
 * Each host is a set of namespaces of its own, held by one "anchor" process (a shell
 * that is pid 1 of the host's pid namespace, reaps the daemons orphaned to it as an init
 * does, and waits on a pipe from this process):
 *
 * - network: a veth pair from the root namespace, one /30 per host out of a random
 *   10.x.y.0/24 chosen per fleet; the root side holds .4i+1, the host .4i+2 (on its
 *   `eth0`). The tests' `ssh` runs in the root namespace and reaches each host there.
 * - mount: the host's own view of the file system (see PRIVATE_PATHS, FRESH_PATHS);
 *   its user database, sudoers and hostname live in its own /etc.
 * - uts (its own hostname), ipc, and pid (everything it runs dies with its pid 1).
 *
 * In each host runs Debian's `/usr/sbin/sshd -D -e -E LOG -f CONFIG`, with a config,
 * ed25519 host key and authorized keys of the fleet's own, never the system's /etc/ssh.
 *
 * Nothing here is named in the root namespace except the veths and the temp dir: the
 * namespaces are unnamed (no `ip netns add`), so they and the veths go away with the
 * anchors, even if this process is killed (their stdin closes). stop() removes all; an
 * 'exit' handler does it best-effort; a later start removes temp dirs of dead runs.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from '../helpers/needs.ts';
import { type Run, runBerth } from '../helpers/world.ts';

/**
 * Directories every host sees as its own: an overlay over the machine's, so a host
 * starts with the machine's files (users, /etc/sudoers, shells) and what it writes
 * there stays its own. Anything a test writes on a host must be under one of these.
 * The fleet also makes `/etc/berth-test`, `/var/lib/berth-test` and `/srv` on each host.
 */
export const PRIVATE_PATHS = ['/etc', '/home', '/root', '/srv', '/opt', '/usr/local', '/var'];

/** Directories every host sees empty at its start, and its own (tmpfs). */
export const FRESH_PATHS = ['/run', '/tmp'];

/** The non-root user of the sudo host(s): logs in by key, gets root through sudo. */
export const SUDO_USER = 'berthdeploy';

/**
 * Every veth (root side) of this process's fleets starts so: `bf<pid in base 36>-`, then
 * the fleet's number and the host's (`bf2hz9k-0h1`): the dash ends the pid, so no other
 * process's prefix is a prefix of this one's. At most 15 characters, as Linux allows.
 */
export const VETH_PREFIX = `bf${process.pid.toString(36)}-`;

/** The domain of every host's fully qualified name in its /etc/hosts: `alpha.fleet.test`. */
export const FLEET_DOMAIN = 'fleet.test';

const HOST_NAMES = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot'];
const MAX_HOSTS = 64; // /30s in one /24
const SSHD = '/usr/sbin/sshd';
const SSH_PORT = 22;
const HOST_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// With --pid, nsenter forks (util-linux 2.38 has only --no-fork): the command is in the pid ns.
const NSENTER_ALL = ['--mount', '--uts', '--ipc', '--net', '--pid'];
/** Hosts whose namespaces and sshd are being made at once. */
const HOSTS_STARTED_AT_ONCE = 8;
const START_TIMEOUT_MS = 15_000;

export interface ExecResult {
  /** The exit code; 128 + the signal's number when a signal ended it. */
  code: number;
  stdout: string;
  stderr: string;
}

export interface FleetHost {
  /** Its name in the fleet's ssh config (`Host alpha`), and its hostname. */
  name: string;
  /** Its own address, e.g. 10.77.3.2, reached from the root namespace. */
  address: string;
  /** sshd's port on `address`. */
  port: number;
  /** Who the ssh config logs in as: 'root', or SUDO_USER on a sudo host. */
  user: string;
  /** True when `user` is not root and gets root through `sudo` (NOPASSWD unless requirePassword). */
  sudo: boolean;
  /** Its current host key, `ssh-ed25519 AAAA…` (no comment); changes on rekey. */
  hostKeyPublic: string;
  /** Its sshd's log file (LogLevel VERBOSE), readable from the root namespace. */
  sshdLog: string;
  /**
   * Runs `sh -c script` ON the host (inside all its namespaces) as root, to set up or
   * inspect files; `input` is its standard input. Never rejects on a non-zero exit.
   */
  exec(script: string, input?: string | Buffer): Promise<ExecResult>;
  /**
   * How many sessions its sshd has started so far: one per exec, shell or subsystem
   * request (also each over a shared ControlMaster connection). Counts sshd's line
   * `Starting session: command for root from 10.x.y.1 port N id 0`.
   */
  sessionsOpened(): Promise<number>;
  /** How many connections it has let in: counts `Accepted publickey for USER from …`. */
  connectionsAccepted(): Promise<number>;
}

export interface Fleet {
  hosts: FleetHost[];
  /** The host of that name; throws for a name the fleet does not have. */
  host(name: string): FleetHost;
  /** The fleet's temp dir: holds everything below and one dir per host. */
  dir: string;
  /** The ssh config file (`ssh -F`): a `Host` entry per host, then the fleet's defaults. */
  sshConfig: string;
  /** The client's private key (ed25519), authorized on every host. */
  identityFile: string;
  /** The known_hosts file the config names: each host's key, by name and by address. */
  knownHosts: string;
  /** The arguments that make `ssh` use only the fleet's files: `['-F', sshConfig]`. */
  sshArgs: string[];
  /** An environment for `ssh` (or berth) without SSH_AUTH_SOCK, so no agent is asked. */
  sshEnv: NodeJS.ProcessEnv;
  /** Runs the system `ssh -F sshConfig ...args host command` and collects what it printed. */
  ssh(
    host: string,
    command: string,
    options?: { args?: string[]; input?: string },
  ): Promise<ExecResult>;
  /**
   * Gives a host a new host key and restarts its sshd. known_hosts keeps the old key, so
   * ssh then refuses the host, unless `trust` (which writes the new key there too).
   */
  rekey(host: string, options?: { trust?: boolean }): Promise<void>;
  /**
   * Makes sudo on a sudo host ask for a password (`required` true, the default), or no
   * longer (false). The rule lives in that host's own /etc/sudoers.d only.
   */
  requirePassword(host: string, required?: boolean): Promise<void>;
  /** Ends every host and removes everything the fleet made. Safe to call twice. */
  stop(): Promise<void>;
}

export interface FleetOptions {
  /** How many hosts: 3 unless said (1 to 64). The second is the sudo host. */
  hosts?: number;
  /** Lines added to every host's sshd_config (e.g. `MaxSessions 20`). */
  sshdOptions?: string[];
  /**
   * Gives every host a /usr of its own too (an overlay like PRIVATE_PATHS'), so the
   * packages a host installs or removes are its own (dpkg's database is in its own /var).
   */
  ownUsr?: boolean;
  /**
   * A directory of .deb files with a `Packages` index (tests/fleet/apt-repository.ts), not
   * under FRESH_PATHS: every host's apt is pointed at it alone (`deb [trusted=yes] file:…
   * ./`, the machine's own sources hidden) and its lists fetched from it. Hosts reach no
   * network.
   */
  aptRepository?: string;
}

/* ------------------------------------------------------------------ availability */

let unavailable: { reason: string | undefined } | undefined;

/**
 * Why this machine cannot run the fleet, or undefined when it can: for
 * `test('…', { skip: fleetUnavailable() }, …)`, so a suite that cannot run is skipped
 * saying why, never passed. Tries the namespaces, a veth and an overlay in a throw-away
 * set of namespaces (nothing of it is left); the answer is kept for the process.
 */
export function fleetUnavailable(): string | undefined {
  unavailable ??= { reason: probe() };
  return unavailable.reason;
}

function probe(): string | undefined {
  if (process.platform !== 'linux') return 'the ssh fleet needs Linux namespaces';
  if (process.getuid?.() !== 0) return 'the ssh fleet needs root (namespaces, veths, mounts)';
  const missing =
    needs(SSHD, 'openssh-server') ||
    needs('ssh', 'openssh-client') ||
    needs('ssh-keygen', 'openssh-client') ||
    needs('sudo', 'sudo') ||
    needs('unshare', 'util-linux') ||
    needs('nsenter', 'util-linux') ||
    needs('ip', 'iproute2') ||
    needs('useradd', 'passwd');
  if (missing) return missing;
  let filesystems = '';
  try {
    filesystems = readFileSync('/proc/filesystems', 'utf8');
  } catch {}
  if (!/\boverlay\b/.test(filesystems)) return 'this kernel has no overlay file system';
  const trial = spawnSync(
    'unshare',
    [
      ...['--net', '--mount', '--uts', '--ipc', '--pid', '--fork', '--kill-child', '--mount-proc'],
      ...['--propagation', 'private', 'sh', '-ec'],
      [
        'ip link add name probe0 type veth peer name probe1',
        'mount -t tmpfs berth-fleet-probe /tmp',
        'mkdir /tmp/u /tmp/w',
        'mount -t overlay berth-fleet-probe -o lowerdir=/srv,upperdir=/tmp/u,workdir=/tmp/w /srv',
      ].join('\n'),
    ],
    { encoding: 'utf8', timeout: 10_000, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  if (trial.error) return `cannot make the fleet's namespaces: ${trial.error.message}`;
  if (trial.status !== 0) {
    const why = trial.stderr.trim().split('\n').at(-1) ?? `exit ${trial.status}`;
    return `this machine refuses the fleet's namespaces, veth or overlay: ${why}`;
  }
  return undefined;
}

/* ------------------------------------------------------------------ processes */

function run(
  command: string,
  args: string[],
  options: { input?: string | Buffer; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<ExecResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      env: options.env ?? process.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdin.on('error', () => {}); // a command that does not read its input
    child.once('error', reject);
    child.once('close', (code, signal) => {
      resolve({
        code: code ?? 128 + (signal ? constants.signals[signal] : 0),
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** Runs a command that must succeed; rejects with what it printed. */
async function must(command: string, args: string[], input?: string): Promise<string> {
  const result = await run(command, args, { input });
  if (result.code !== 0) {
    throw new Error(`${command} ${args.join(' ')}: exit ${result.code}: ${result.stderr.trim()}`);
  }
  return result.stdout;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function kill(child: ChildProcess | undefined, signal: NodeJS.Signals): void {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  try {
    child.kill(signal);
  } catch {}
}

/** The pids of a process's children (a process started by `--fork` is one). */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/* ------------------------------------------------------------------ addresses */

/** Every IPv4 prefix the root namespace already routes or holds, as [first, last]. */
async function takenRanges(): Promise<[number, number][]> {
  const routes = await must('ip', ['-4', '-o', 'route', 'show', 'table', 'all']);
  const addresses = await must('ip', ['-4', '-o', 'addr', 'show']);
  const ranges: [number, number][] = [];
  const prefix = /(\d+\.\d+\.\d+\.\d+)(?:\/(\d+))?/g;
  for (const line of [...routes.split('\n'), ...addresses.split('\n')]) {
    const words = line.split(/\s+/);
    for (const word of words) {
      for (const match of word.matchAll(prefix)) {
        const base = toNumber(match[1] ?? '');
        const bits = Number(match[2] ?? 32);
        const size = 2 ** (32 - bits);
        const first = base - (base % size);
        ranges.push([first, first + size - 1]);
      }
    }
  }
  return ranges;
}

function toNumber(address: string): number {
  return address.split('.').reduce((sum, part) => sum * 256 + Number(part), 0);
}

/** A 10.x.y.0/24 nothing on this machine uses yet; x from 64 on, away from common ones. */
async function freeSubnet(): Promise<string> {
  const taken = await takenRanges();
  for (let attempt = 0; attempt < 100; attempt++) {
    const x = randomInt(64, 255);
    const y = randomInt(0, 256);
    const first = toNumber(`10.${x}.${y}.0`);
    const last = first + 255;
    // A wide route (a /8 to a VPN, say) is no conflict: the fleet's /30s are more specific.
    if (taken.some(([a, b]) => a <= last && b >= first && b - a < 2 ** 16)) continue;
    return `10.${x}.${y}`;
  }
  throw new Error('found no free 10.x.y.0/24 for the fleet');
}

/* ------------------------------------------------------------------ the fleet */

interface HostState {
  host: FleetHost;
  index: number;
  dir: string;
  rootVeth: string;
  rootAddress: string;
  anchor?: ChildProcess;
  /** The anchor's child: pid 1 of the host's pid namespace, as the root namespace sees it. */
  pid1?: number;
  sshd?: ChildProcess;
  sshdStderr: string;
}

interface Live {
  dir: string;
  states: HostState[];
}

const live = new Set<Live>();
let exitHandlerSet = false;
let fleetsStarted = 0;

/** Best-effort, synchronous: what an 'exit' handler can still do. */
function killNow(fleet: Live): void {
  for (const state of fleet.states) {
    for (const pid of childrenOf(state.sshd?.pid ?? 0)) {
      try {
        process.kill(pid, 'SIGKILL'); // sshd, under its nsenter
      } catch {}
    }
    kill(state.sshd, 'SIGKILL');
    kill(state.anchor, 'SIGKILL'); // its child, the host's pid 1, is killed with it (--kill-child)
    spawnSync('ip', ['link', 'del', state.rootVeth], { stdio: 'ignore' });
  }
  rmSync(fleet.dir, { recursive: true, force: true });
}

/** Removes the temp dirs of fleets whose process is gone (killed before its stop). */
function sweepDeadRuns(): void {
  let names: string[] = [];
  try {
    names = readdirSync(tmpdir());
  } catch {}
  for (const name of names) {
    const pid = Number(/^berth-fleet-(\d+)-/.exec(name)?.[1]);
    if (!pid || pid === process.pid || alive(pid)) continue;
    rmSync(join(tmpdir(), name), { recursive: true, force: true });
  }
}

function sshdConfig(state: HostState, extra: string[]): string {
  return [
    `ListenAddress ${state.host.address}`,
    `Port ${SSH_PORT}`,
    `HostKey ${join(state.dir, 'ssh_host_ed25519_key')}`,
    'PidFile none',
    'UsePAM no',
    'PermitRootLogin prohibit-password',
    'PubkeyAuthentication yes',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'HostbasedAuthentication no',
    `AuthorizedKeysFile ${join(state.dir, 'authorized_keys', '%u')}`,
    'StrictModes no',
    'LogLevel VERBOSE',
    'PrintMotd no',
    'PrintLastLog no',
    'X11Forwarding no',
    'UseDNS no',
    'Subsystem sftp internal-sftp',
    ...extra,
    '',
  ].join('\n');
}

/** The shell that becomes the host's pid 1: makes its file system, then waits on stdin. */
function anchorScript(state: HostState, options: FleetOptions): string {
  const { name, user } = state.host;
  const q = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;
  // /usr before /usr/local: an overlay's lower layer is the directory without what is mounted in it.
  const privatePaths = options.ownUsr ? ['/usr', ...PRIVATE_PATHS] : PRIVATE_PATHS;
  const lines = [
    'set -eu',
    `H=${q(state.dir)}`,
    'S="$H/state"',
    'mount -t tmpfs -o mode=0700 berth-fleet "$S"',
    `for p in ${privatePaths.join(' ')}; do`,
    '  d="$S/$(printf %s "$p" | tr / _)"',
    '  mkdir -p "$d/upper" "$d/work"',
    '  mount -t overlay berth-fleet -o "lowerdir=$p,upperdir=$d/upper,workdir=$d/work" "$p"',
    'done',
    // /run and /tmp start empty. The host's own dir (config, keys, log) stays at the
    // same path inside as outside: kept aside in the new /run, then moved back.
    'mount -t tmpfs -o mode=0755 berth-fleet /run',
    'mkdir -m 0755 /run/sshd /run/berth-fleet-host',
    'mount --bind "$H" /run/berth-fleet-host',
    'mount -t tmpfs -o mode=1777 berth-fleet /tmp',
    'mkdir -p "$H"',
    'mount --move /run/berth-fleet-host "$H"',
    'rmdir /run/berth-fleet-host',
    `hostname ${q(name)}`,
    `printf '%s\\n' ${q(name)} > /etc/hostname`,
    // Its fully qualified name, as Debian's installer writes it: `hostname -f` says it.
    `printf '127.0.1.1\\t%s.%s\\t%s\\n' ${q(name)} ${q(FLEET_DOMAIN)} ${q(name)} >> /etc/hosts`,
    'ip link set lo up',
    'mkdir -p /etc/berth-test /var/lib/berth-test /srv',
    // root's dotfiles as Debian ships them: this machine's own may run anything at each
    // login (this one's starts a Python version manager), which no host of a fleet would.
    'for f in bashrc profile; do',
    '  if [ -f /usr/share/base-files/dot.$f ]; then cp /usr/share/base-files/dot.$f /root/.$f; fi',
    'done',
  ];
  if (user !== 'root') {
    lines.push(
      `id -u ${user} >/dev/null 2>&1 || useradd --create-home --shell /bin/bash --password '*' ${user}`,
      `mkdir -p /home/${user} && chown ${user}: /home/${user}`,
      `printf '%s\\n' ${q(sudoRule(user, false))} > /etc/sudoers.d/berth-fleet`,
      'chmod 0440 /etc/sudoers.d/berth-fleet',
    );
  }
  if (options.aptRepository !== undefined) lines.push(...aptSources(options.aptRepository));
  lines.push(
    'echo ready',
    // As an init does, pid 1 reaps the daemons orphaned to it (a daemon's init script waits
    // for its pid to be gone, not a zombie): `wait` takes every child that ends while the
    // read in the background waits on the pipe, which a background list may read only so.
    'exec 3<&0',
    '(read -r _ <&3 || true) &',
    'wait $! || true',
  );
  return lines.join('\n');
}

/** The lines that point a host's apt at `repository` alone and fetch its lists from it. */
function aptSources(repository: string): string[] {
  return [
    'rm -f /etc/apt/sources.list /etc/apt/sources.list.d/*',
    `printf 'deb [trusted=yes] file:%s ./\\n' '${repository}' > /etc/apt/sources.list.d/berth-test.list`,
    'rm -rf /var/lib/apt/lists/*',
    'apt-get update -qq -o APT::Update::Error-Mode=any >/dev/null',
  ];
}

function sudoRule(user: string, password: boolean): string {
  return `${user} ALL=(ALL:ALL) ${password ? '' : 'NOPASSWD: '}ALL`;
}

async function newKey(path: string, comment: string): Promise<string> {
  await rm(path, { force: true });
  await rm(`${path}.pub`, { force: true });
  await must('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', path]);
  const [type, key] = (await readFile(`${path}.pub`, 'utf8')).trim().split(/\s+/);
  return `${type} ${key}`;
}

async function countLines(file: string, pattern: RegExp): Promise<number> {
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch {}
  return text.split('\n').filter((line) => pattern.test(line)).length;
}

/** Starts the anchor and waits for its "ready": the host's namespaces and files exist. */
async function startAnchor(state: HostState, options: FleetOptions): Promise<void> {
  const anchor = spawn(
    'unshare',
    [
      ...['--net', '--mount', '--uts', '--ipc', '--pid', '--fork', '--kill-child', '--mount-proc'],
      ...['--propagation', 'private', 'sh', '-c', anchorScript(state, options)],
    ],
    { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: HOST_PATH, LANG: 'C' } },
  );
  state.anchor = anchor;
  anchor.stdin?.on('error', () => {});
  let stderr = '';
  anchor.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  await within(
    START_TIMEOUT_MS,
    `host ${state.host.name}: namespaces`,
    new Promise<void>((resolve, reject) => {
      let stdout = '';
      anchor.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        stdout += chunk;
        if (stdout.includes('ready\n')) resolve();
      });
      anchor.once('error', reject);
      anchor.once('exit', (code) => {
        reject(new Error(`host ${state.host.name}: setup failed (exit ${code}): ${stderr.trim()}`));
      });
    }),
  );
  const pid = anchor.pid;
  const pid1 = pid === undefined ? undefined : childrenOf(pid)[0];
  if (pid1 === undefined) throw new Error(`host ${state.host.name}: no pid 1 under unshare`);
  state.pid1 = pid1;
}

function nsenter(state: HostState, args: string[]): string[] {
  if (state.pid1 === undefined) throw new Error(`host ${state.host.name} is not running`);
  return ['--target', String(state.pid1), ...NSENTER_ALL, '--', ...args];
}

async function wire(state: HostState): Promise<void> {
  const pid1 = String(state.pid1);
  await must('ip', [
    ...['link', 'add', 'name', state.rootVeth, 'type', 'veth'],
    ...['peer', 'name', 'eth0', 'netns', pid1],
  ]);
  await must('ip', ['addr', 'add', `${state.rootAddress}/30`, 'dev', state.rootVeth]);
  await must('ip', ['link', 'set', state.rootVeth, 'up']);
  await must(
    'nsenter',
    nsenter(state, [
      'sh',
      '-ec',
      // A default route through the root side, as a real host has one, so that the host's
      // address is its default route's. Its private address is never translated, so what
      // leaves that way gets no answer even where this machine forwards.
      `ip addr add ${state.host.address}/30 dev eth0\nip link set eth0 up\nip route add default via ${state.rootAddress} dev eth0`,
    ]),
  );
  const route = await must('ip', ['-4', '-o', 'route', 'get', state.host.address]);
  if (!route.includes(`dev ${state.rootVeth} `)) {
    throw new Error(`${state.host.address} is not routed to ${state.rootVeth}: ${route.trim()}`);
  }
}

const LISTENING = /Server listening on \S+ port \d+\./;

/** Starts the host's sshd and waits until it listens (its log says so). */
async function startSshd(state: HostState): Promise<void> {
  const log = state.host.sshdLog;
  const before = await countLines(log, LISTENING);
  const sshd = spawn(
    'nsenter',
    nsenter(state, [SSHD, ...['-D', '-e', '-E', log, '-f', join(state.dir, 'sshd_config')]]),
    { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: HOST_PATH, LANG: 'C' } },
  );
  state.sshd = sshd;
  state.sshdStderr = '';
  sshd.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    state.sshdStderr += chunk;
  });
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if ((await countLines(log, LISTENING)) > before) return;
    if (sshd.exitCode !== null || sshd.signalCode !== null) {
      let tail = '';
      try {
        tail = (await readFile(log, 'utf8')).trim().split('\n').slice(-5).join('\n');
      } catch {}
      throw new Error(
        `host ${state.host.name}: sshd ended at start: ${state.sshdStderr.trim()}\n${tail}`,
      );
    }
    if (Date.now() > deadline) throw new Error(`host ${state.host.name}: sshd never listened`);
    await sleep(5);
  }
}

async function stopSshd(state: HostState): Promise<void> {
  const nsenterProcess = state.sshd;
  if (!nsenterProcess?.pid) return;
  // nsenter --fork waits for sshd, its child; signal sshd itself.
  for (const pid of childrenOf(nsenterProcess.pid)) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
  }
  await within(5_000, `host ${state.host.name}: sshd stop`, exited(nsenterProcess)).catch(() => {
    for (const pid of childrenOf(nsenterProcess.pid ?? 0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    return exited(nsenterProcess);
  });
  state.sshd = undefined;
}

async function stopHost(state: HostState): Promise<void> {
  // Deleting the root side of a veth deletes both ends, at once.
  await run('ip', ['link', 'del', state.rootVeth]).catch(() => undefined);
  // sshd first, reaped by its nsenter: killed only by the end of its pid namespace, it
  // can wait for a slow reaper (1.3 s here) before the host is gone.
  await stopSshd(state);
  const anchor = state.anchor;
  if (anchor) {
    anchor.stdin?.end(); // its pid 1 reads EOF and ends: the kernel kills the rest of the host
    await within(5_000, 'anchor', exited(anchor)).catch(() => {
      kill(anchor, 'SIGKILL');
      return exited(anchor);
    });
  }
}

/**
 * Starts a fleet of `hosts` (3 unless said) real ssh hosts. Host i is named alpha,
 * bravo, charlie, … and logs in as root, except the second (bravo), which logs in as
 * SUDO_USER with passwordless sudo. Rejects, having removed all it made, when a host
 * cannot start; call fleetUnavailable() first to skip where the machine cannot.
 */
export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const count = options.hosts ?? 3;
  if (!Number.isInteger(count) || count < 1 || count > MAX_HOSTS) {
    throw new Error(`a fleet has 1 to ${MAX_HOSTS} hosts, not ${count}`);
  }
  const reason = fleetUnavailable();
  if (reason) throw new Error(`the ssh fleet cannot run here: ${reason}`);
  sweepDeadRuns();

  const dir = await mkdtemp(join(tmpdir(), `berth-fleet-${process.pid}-`));
  const tag = `${VETH_PREFIX}${(fleetsStarted++).toString(36)}`;
  const fleet: Live = { dir, states: [] };
  live.add(fleet);
  if (!exitHandlerSet) {
    exitHandlerSet = true;
    process.once('exit', () => {
      for (const each of live) killNow(each);
    });
  }

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      await Promise.all(fleet.states.map(stopHost));
      await rm(dir, { recursive: true, force: true });
      live.delete(fleet);
    })();
    return stopping;
  };

  try {
    const subnet = await freeSubnet();
    const identityFile = join(dir, 'id_ed25519');
    const knownHosts = join(dir, 'known_hosts');
    const sshConfig = join(dir, 'ssh_config');
    const clientKey = newKey(identityFile, `berth-fleet-client-${process.pid}`);

    for (let index = 0; index < count; index++) {
      const name = HOST_NAMES[index] ?? `host${index + 1}`;
      const user = index === 1 ? SUDO_USER : 'root';
      const hostDir = join(dir, 'hosts', name);
      const state: HostState = {
        index,
        dir: hostDir,
        rootVeth: `${tag}h${index}`,
        rootAddress: `${subnet}.${4 * index + 1}`,
        sshdStderr: '',
        host: {
          name,
          address: `${subnet}.${4 * index + 2}`,
          port: SSH_PORT,
          user,
          sudo: user !== 'root',
          hostKeyPublic: '',
          sshdLog: join(hostDir, 'sshd.log'),
          exec: (script, input) =>
            run('nsenter', nsenter(state, ['sh', '-c', script]), {
              input,
              env: { PATH: HOST_PATH, HOME: '/root', LANG: 'C', USER: 'root', LOGNAME: 'root' },
            }),
          sessionsOpened: () => countLines(state.host.sshdLog, /\bStarting session: /),
          connectionsAccepted: () => countLines(state.host.sshdLog, /\bAccepted publickey for /),
        },
      };
      fleet.states.push(state);
    }

    const clientPublic = await clientKey;
    await Promise.all(
      fleet.states.map(async (state) => {
        await mkdir(join(state.dir, 'state'), { recursive: true });
        await mkdir(join(state.dir, 'authorized_keys'));
        await chmod(state.dir, 0o755);
        await writeFile(join(state.dir, 'authorized_keys', state.host.user), `${clientPublic}\n`, {
          mode: 0o644,
        });
        await writeFile(
          join(state.dir, 'sshd_config'),
          sshdConfig(state, options.sshdOptions ?? []),
        );
        state.host.hostKeyPublic = await newKey(
          join(state.dir, 'ssh_host_ed25519_key'),
          `berth-fleet-${state.host.name}`,
        );
      }),
    );

    const writeKnownHosts = () =>
      writeFile(
        knownHosts,
        fleet.states
          .map(({ host }) => `${host.name},${host.address} ${host.hostKeyPublic}\n`)
          .join(''),
      );
    await writeKnownHosts();
    await writeFile(
      sshConfig,
      [
        ...fleet.states.flatMap(({ host }) => [
          `Host ${host.name}`,
          `  HostName ${host.address}`,
          `  Port ${host.port}`,
          `  User ${host.user}`,
          `  HostKeyAlias ${host.name}`,
        ]),
        'Host *',
        `  IdentityFile ${identityFile}`,
        '  IdentitiesOnly yes',
        '  IdentityAgent none',
        `  UserKnownHostsFile ${knownHosts}`,
        '  GlobalKnownHostsFile /dev/null',
        '  StrictHostKeyChecking yes',
        '  UpdateHostKeys no',
        '  CheckHostIP no',
        '  BatchMode yes',
        '  ConnectTimeout 10',
        '',
      ].join('\n'),
    );

    // A few hosts at a time: fifty namespaces, veths and sshds begun at once on a loaded
    // machine outran each host's start timeout; eight at a time start as fast and never do.
    let next = 0;
    const starter = async () => {
      for (let state = fleet.states[next++]; state; state = fleet.states[next++]) {
        await startAnchor(state, options);
        await wire(state);
        await startSshd(state);
      }
    };
    await Promise.all(Array.from({ length: HOSTS_STARTED_AT_ONCE }, starter));

    const { SSH_AUTH_SOCK: _, ...sshEnv } = process.env;
    const byName = (name: string): HostState => {
      const state = fleet.states.find((each) => each.host.name === name);
      if (!state) throw new Error(`the fleet has no host ${name}`);
      return state;
    };
    return {
      hosts: fleet.states.map((state) => state.host),
      host: (name) => byName(name).host,
      dir,
      sshConfig,
      identityFile,
      knownHosts,
      sshArgs: ['-F', sshConfig],
      sshEnv,
      ssh: (host, command, sshOptions = {}) =>
        run('ssh', ['-F', sshConfig, ...(sshOptions.args ?? []), host, command], {
          input: sshOptions.input,
          env: sshEnv,
        }),
      async rekey(name, rekeyOptions = {}) {
        const state = byName(name);
        await stopSshd(state);
        state.host.hostKeyPublic = await newKey(
          join(state.dir, 'ssh_host_ed25519_key'),
          `berth-fleet-${name}-rekeyed`,
        );
        await startSshd(state);
        if (rekeyOptions.trust) await writeKnownHosts();
      },
      async requirePassword(name, required = true) {
        const { host } = byName(name);
        if (!host.sudo) throw new Error(`${name} logs in as root: it has no sudo to ask`);
        const rule = sudoRule(host.user, required);
        const result = await host.exec(
          `printf '%s\\n' '${rule}' > /etc/sudoers.d/berth-fleet && chmod 0440 /etc/sudoers.d/berth-fleet && rm -rf /run/sudo`,
        );
        if (result.code !== 0) throw new Error(`${name}: sudoers: ${result.stderr.trim()}`);
      },
      stop,
    };
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
}

/** Ends every ssh ControlMaster whose socket is in `dir` (or below it): none may outlive a run. */
export async function exitMasters(dir: string): Promise<void> {
  const sockets = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  await Promise.all(
    sockets.map(
      (socket) =>
        new Promise<void>((done) => {
          const child = spawn(
            'ssh',
            ['-o', `ControlPath=${join(dir, socket)}`, '-O', 'exit', 'x'],
            {
              stdio: 'ignore',
            },
          );
          child.on('error', () => done());
          child.on('close', () => done());
        }),
    ),
  );
}

/**
 * `sh -c script` as root on `host`, its standard output answered: a test's setting up and
 * looking; a non-zero exit fails the test, naming the host, the script and what it said.
 */
export async function onHost(host: FleetHost, script: string): Promise<string> {
  const result = await host.exec(script);
  assert.equal(result.code, 0, `${host.name}: ${script}: ${result.stderr}`);
  return result.stdout;
}

/**
 * The real binary on the state `state`, its ssh connections' sockets under `runtime` (a
 * directory of the test's own) and without the developer's ssh agent.
 */
export function berthIn(state: string, runtime: string, args: readonly string[]): Promise<Run> {
  return runBerth(['--state', state, ...args], {
    XDG_RUNTIME_DIR: runtime,
    SSH_AUTH_SOCK: undefined,
  });
}
