import { spawn } from 'node:child_process';
import { type MachineFacts, readFactLines } from '../model/facts.ts';
import { shellText } from '../shell/shell-text.ts';
import { HOOK_PATH } from './limits.ts';

/** The facts' sh the ssh machine ships (facts.sh), run here for this machine. */
const FACTS = shellText('machines/facts.sh');

/**
 * How long this machine's facts, once asked, answer every rooted node's survey: the
 * rooted nodes of one preview (a thousand in a trial) share one run of the sh, not one
 * each, and a fact is never older than this.
 */
const SHARED_MS = 2_000;

let shared: { at: number; facts: Promise<MachineFacts> } | undefined;

/**
 * This machine's facts, by the same sh an ssh machine's survey runs (facts.sh), in a
 * clean environment: a rooted node whose root is `/` is this machine, and says what an
 * ssh node would. Asked within SHARED_MS of the last time, the same answer.
 */
export function localFacts(): Promise<MachineFacts> {
  const now = performance.now();
  if (!shared || now - shared.at > SHARED_MS) shared = { at: now, facts: runFacts() };
  return shared.facts;
}

function runFacts(): Promise<MachineFacts> {
  return new Promise((done) => {
    const child = spawn('sh', ['-c', `${FACTS}H\n`], {
      cwd: '/',
      env: { PATH: HOOK_PATH, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A machine without sh tells nothing of itself: each fact is then one it cannot tell.
    child.on('error', () => done({}));
    child.on('close', () =>
      done(readFactLines(Buffer.concat(chunks).toString('utf8').split('\n'))),
    );
  });
}

/**
 * The facts of a rooted node whose root is not `/`: a directory tree standing in for a
 * machine. What its own files say (read through the safe walk by `read`, undefined where
 * there is no such file): `hostname` from its /etc/hostname, `fqdn` the name its
 * /etc/hosts gives that hostname first (else the hostname: a tree has no resolver),
 * `codename` from its /etc/os-release. It runs on this machine's kernel and network, so
 * `arch` and `address` are this machine's.
 */
export function treeFacts(
  read: (path: string) => string | undefined,
  here: MachineFacts,
): MachineFacts {
  const facts: MachineFacts = {};
  const hostname = read('/etc/hostname')?.split('\n')[0]?.trim();
  if (hostname) {
    facts.hostname = hostname;
    facts.fqdn = canonicalIn(read('/etc/hosts') ?? '', hostname) ?? hostname;
  }
  const codename = codenameIn(read('/etc/os-release') ?? '');
  if (codename) facts.codename = codename;
  if (here.arch) facts.arch = here.arch;
  if (here.address) facts.address = here.address;
  return facts;
}

/** The first name of the hosts file's first line that names `hostname`, as the resolver's files do. */
function canonicalIn(hosts: string, hostname: string): string | undefined {
  for (const line of hosts.split('\n')) {
    const [, canonical, ...aliases] = (line.split('#')[0] ?? '').trim().split(/\s+/);
    if (canonical !== undefined && [canonical, ...aliases].includes(hostname)) return canonical;
  }
  return undefined;
}

/** os-release's VERSION_CODENAME, its quotes taken off. */
function codenameIn(osRelease: string): string | undefined {
  const line = /^VERSION_CODENAME=(.*)$/m.exec(osRelease)?.[1]?.trim();
  return line?.replace(/^["']|["']$/g, '') || undefined;
}
