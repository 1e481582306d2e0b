import { ARCHIVE_SHA256, isPackageName, isPackageVersion } from './debian-grammar.ts';
import type {
  Installed,
  Malformed,
  PackageAsk,
  PackageFacts,
  PackageMove,
  PackageState,
  Simulation,
} from './packages.ts';

/**
 * apt, the package managers' table's one entry (Debian, Ubuntu): how the answers of its sh
 * (apt-scripts.ts) are read, as values.
 */

/** A line the survey's apt part writes; the lines of apt's own output follow `| `. */
const MARK = 'P';

/** Reads the survey's packages part (its lines, in order); throws words when it is broken. */
export function readAptSurvey(asks: readonly PackageAsk[], lines: readonly string[]): PackageFacts {
  const broken = (why: string) => new Error(`the survey's packages could not be read: ${why}`);
  let at = 0;
  const head = lines[at++]?.split(' ') ?? [];
  if (head[0] !== MARK) throw broken('no answer');
  if (head[1] === 'none')
    return head[2] && head[2] !== '-' ? { manager: 'none', found: head[2] } : { manager: 'none' };
  if (head[1] !== 'apt') throw broken(`it says ${head[1]}`);
  const now = Number(head[2]);
  const mtime = Number(head[3]);
  const held = /^P starts-held (kept|-)$/.exec(lines[at] ?? '');
  if (held) at++;
  const asked = new Set(asks.flatMap((ask) => ask.packages.map((spec) => spec.name)));
  // What fails Debian's grammar is said (once, wherever apt said it), and used nowhere.
  const malformed: Malformed[] = [];
  const seen = new Set<string>();
  const isMalformed = (item: Malformed) => {
    const key = JSON.stringify([item.module, item.package, item.what, item.value]);
    if (!seen.has(key)) malformed.push(item);
    seen.add(key);
  };
  const version = (text: string, of: { package?: string; module?: string }) => {
    if (isPackageVersion(text)) return text;
    isMalformed({ ...of, what: 'version', value: text });
    return undefined;
  };
  const packages: Record<string, PackageState> = {};
  const installed = new Map<string, string>();
  const configurationLeft = new Map<string, string>();
  while (lines[at]?.startsWith(`${MARK} status `)) {
    const [, , name = '', status, text] = (lines[at++] as string).split(' ');
    if (!asked.has(name) || (status !== 'installed' && status !== 'config-files') || !text)
      continue;
    const checked = version(text, { package: name });
    if (checked) (status === 'installed' ? installed : configurationLeft).set(name, checked);
  }
  const policy: string[] = [];
  while (at < lines.length && lines[at] !== `${MARK} policy-end`) policy.push(unpiped(lines[at++]));
  if (lines[at++] !== `${MARK} policy-end`) throw broken('apt-cache policy was cut off');
  const offered = readPolicy(policy);
  for (const name of asked) {
    const known = offered.get(name);
    const candidate = known?.candidate && version(known.candidate, { package: name });
    packages[name] = {
      ...(installed.has(name) ? { installed: installed.get(name) } : {}),
      ...(candidate ? { candidate } : {}),
      offered: (known?.offered ?? []).flatMap((text) => version(text, { package: name }) ?? []),
      ...(configurationLeft.has(name) ? { configurationLeft: configurationLeft.get(name) } : {}),
    };
  }
  const simulations: Record<string, Simulation> = {};
  for (const ask of asks) {
    if (lines[at++] !== `${MARK} sim ${ask.module}`)
      throw broken(`no simulation for ${ask.module}`);
    const said: string[] = [];
    const shown: string[] = [];
    let showing = false;
    while (at < lines.length && !lines[at]?.startsWith(`${MARK} sim-end `)) {
      const line = lines[at++] as string;
      if (line === `${MARK} archives`) showing = true;
      else (showing ? shown : said).push(unpiped(line));
    }
    const code = Number((lines[at++] ?? '').split(' ')[2]);
    if (Number.isNaN(code)) throw broken(`the simulation for ${ask.module} was cut off`);
    if (code !== 0) {
      simulations[ask.module] = refusal(said);
      continue;
    }
    const installs: PackageMove[] = [];
    const records = readRecords(shown);
    const archives: Record<string, string[]> = {};
    for (const move of readInst(said)) {
      if (!isPackageName(move.package, true)) {
        isMalformed({ module: ask.module, what: 'name', value: move.package });
        continue;
      }
      const of = { module: ask.module, package: move.package };
      const to = version(move.version, of);
      const from = move.from === undefined ? undefined : version(move.from, of);
      if (to === undefined || (move.from !== undefined && from === undefined)) continue;
      installs.push(from === undefined ? { ...move, version: to } : { ...move, version: to, from });
      // The bits the lists give for that version: a hash, or several from several sources.
      const name = move.package.split(':')[0] as string;
      const hashes = records.filter((record) => record.name === name && record.version === to);
      for (const { sha256 } of hashes)
        if (!ARCHIVE_SHA256.test(sha256)) isMalformed({ ...of, what: 'hash', value: sha256 });
      const good = hashes
        .map((record) => record.sha256)
        .filter((hash) => ARCHIVE_SHA256.test(hash));
      archives[`${move.package}=${to}`] = [...new Set(good)].sort();
    }
    const removes: { package: string; purge: boolean }[] = [];
    for (const line of said) {
      const removed = /^(Remv|Purg) (\S+)/.exec(line);
      if (!removed) continue;
      const name = removed[2] as string;
      if (isPackageName(name, true)) removes.push({ package: name, purge: removed[1] === 'Purg' });
      else isMalformed({ module: ask.module, what: 'name', value: name });
    }
    simulations[ask.module] = {
      ok: true,
      installs,
      ...(installs.length > 0 ? { archives } : {}),
      ...(removes.length > 0 ? { removes } : {}),
    };
  }
  return {
    manager: 'apt',
    packages,
    ...(Number.isFinite(now) && Number.isFinite(mtime)
      ? { listsAge: Math.max(0, now - mtime) }
      : head[3] === 'never'
        ? { listsNeverFetched: true as const }
        : {}),
    simulations,
    ...(held ? { startsHeld: { kept: held[1] === 'kept' } } : {}),
    ...(malformed.length > 0 ? { malformed } : {}),
  };
}

/** apt-cache show's records, as their Package, Version and SHA256 lines: those with all three. */
function readRecords(
  lines: readonly string[],
): { name: string; version: string; sha256: string }[] {
  const records: { name: string; version: string; sha256: string }[] = [];
  let name: string | undefined;
  let version: string | undefined;
  for (const line of lines) {
    const [field, value = ''] = line.split(': ', 2);
    if (field === 'Package') [name, version] = [value, undefined];
    else if (field === 'Version') version = value;
    else if (field === 'SHA256' && name !== undefined && version !== undefined)
      records.push({ name, version, sha256: value });
  }
  return records;
}

function unpiped(line: string | undefined): string {
  return line?.startsWith('| ') ? line.slice(2) : (line ?? '');
}

/**
 * apt-cache policy's answer, by package: its candidate, and the versions its lists offer
 * (a version known only from the package database, `/var/lib/dpkg/status`, is not offered).
 */
function readPolicy(
  lines: readonly string[],
): Map<string, { candidate?: string; offered: string[] }> {
  const found = new Map<string, { candidate?: string; offered: string[] }>();
  let current: { candidate?: string; offered: string[] } | undefined;
  let version: string | undefined;
  for (const line of lines) {
    const header = /^(\S+):$/.exec(line);
    if (header) {
      current = { offered: [] };
      found.set(header[1] as string, current);
      version = undefined;
      continue;
    }
    if (!current) continue;
    const candidate = /^ {2}Candidate: (\S+)$/.exec(line);
    if (candidate) {
      if (candidate[1] !== '(none)') current.candidate = candidate[1];
      continue;
    }
    // A version's row; the installed one's is marked ` *** `.
    const row = /^ (?:\*\*\*| {3}) (\S+) -?\d+$/.exec(line);
    if (row) {
      version = row[1];
      continue;
    }
    const source = /^ {8}-?\d+ (.+)$/.exec(line);
    if (source && version !== undefined && source[1] !== '/var/lib/dpkg/status') {
      if (!current.offered.includes(version)) current.offered.push(version);
    }
  }
  return found;
}

/** The lists of what an install would do whose packages it installs (apt before 2.9, `-V`). */
const INSTALLING = new Set([
  'The following NEW packages will be installed:',
  'The following packages will be upgraded:',
  'The following packages will be DOWNGRADED:',
]);

/**
 * The packages an install would install (or upgrade, or downgrade): from a simulation,
 * `Inst name [was] (version …)`; else from apt's lists, `   name (version)` or `   name
 * (was => version)` under the headings of those it installs.
 */
function readInst(lines: readonly string[]): PackageMove[] {
  const moves: PackageMove[] = [];
  for (const line of lines) {
    const inst = /^Inst (\S+) (?:\[(\S+)\] )?\((\S+) /.exec(line);
    if (!inst) continue;
    const move: PackageMove = { package: inst[1] as string, version: inst[3] as string };
    if (inst[2] !== undefined) move.from = inst[2];
    moves.push(move);
  }
  if (moves.length > 0) return moves;
  let listing = false;
  for (const line of lines) {
    if (!line.startsWith(' ')) {
      listing = INSTALLING.has(line);
      continue;
    }
    const listed = listing ? /^ +(\S+) \((?:(\S+) => )?(\S+)\)$/.exec(line) : null;
    if (!listed) continue;
    const move: PackageMove = { package: listed[1] as string, version: listed[3] as string };
    if (listed[2] !== undefined) move.from = listed[2];
    moves.push(move);
  }
  return moves;
}

/** apt's refusal: its `E:` lines, or its last line when it wrote none. */
function refusal(lines: readonly string[]): { ok: false; errors: string[] } {
  const errors = lines.filter((line) => line.startsWith('E: '));
  const last = lines.filter((line) => line.trim() !== '').at(-1);
  return { ok: false, errors: errors.length > 0 ? errors : last ? [last] : ['apt-get failed'] };
}

/** The last line apt-install.sh and apt-refresh.sh write: apt's exit, so that an answer cut short is told. */
const ENDED = /^berth-apt-exit (\d+)$/;

/**
 * What an install (or a refresh) said: done, or its `E:` lines, and who held apt's lock
 * when that was why; undefined when the answer ended before apt did (the connection, or the
 * script, was cut).
 */
export function readAptInstall(output: string): Installed | undefined {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  const ended = ENDED.exec(lines.at(-1) ?? '');
  if (!ended) return undefined;
  if (ended[1] === '0') return { ok: true };
  const { errors } = refusal(lines.slice(0, -1));
  const held = /It is held by process (\d+) \(([^)]*)\)/.exec(output);
  return held
    ? { ok: false, errors, busy: { pid: Number(held[1]), command: held[2] as string } }
    : { ok: false, errors };
}
