import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository's root, and the built binary exactly as `bin` runs it. */
export const ROOT = resolve(import.meta.dirname, '../..');
export const BERTH = join(ROOT, 'dist/berth.mjs');

/** The environment a user would have, less the CA bundle (it slows every start) and BERTH_STATE. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _, BERTH_STATE: __, ...rest } = process.env;
  return { ...rest, ...extra };
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** The first and third quartiles: where the middle half of the values lies. */
export function quartiles(values: readonly number[]): [number, number] {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => {
    const position = (sorted.length - 1) * q;
    const low = Math.floor(position);
    const high = Math.ceil(position);
    return (
      (sorted[low] as number) +
      ((sorted[high] as number) - (sorted[low] as number)) * (position - low)
    );
  };
  return sorted.length ? [at(0.25), at(0.75)] : [Number.NaN, Number.NaN];
}

export interface Timed {
  ms: number;
  code: number;
  /** Peak resident set of the child, in MiB, when it was asked for. */
  rssMiB?: number;
  stdout: string;
  stderr: string;
}

const RSS_PRELOAD = join(import.meta.dirname, 'rss.cjs');

/**
 * Runs `node ...args` to its end and times it, wall clock from spawn to exit. With
 * `rss`, a preload writes the child's peak resident set (process.resourceUsage) to a file.
 */
export async function timeNode(
  args: readonly string[],
  options: { rss?: boolean; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Timed> {
  let rssFile: string | undefined;
  let rssDir: string | undefined;
  if (options.rss) {
    rssDir = await mkdtemp(join(tmpdir(), 'berth-bench-rss-'));
    rssFile = join(rssDir, 'rss');
  }
  const env = { ...(options.env ?? cleanEnv()), ...(rssFile ? { BERTH_BENCH_RSS: rssFile } : {}) };
  const argv = rssFile ? ['--require', RSS_PRELOAD, ...args] : [...args];
  const started = performance.now();
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: code ?? -1, stdout, stderr });
    });
  });
  const ms = performance.now() - started;
  let rssMiB: number | undefined;
  if (rssFile && rssDir) {
    const kib = Number(await readFile(rssFile, 'utf8').catch(() => 'NaN'));
    rssMiB = kib / 1024;
    await rm(rssDir, { recursive: true, force: true });
  }
  return { ms, rssMiB, ...result };
}

/** Numbers as the table shows them. */
export function fmt(value: number, digits = 0): string {
  if (!Number.isFinite(value)) return '—';
  return value.toLocaleString('en-US', {
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  });
}

export function ratio(value: number, digits = 2): string {
  return Number.isFinite(value) ? `${value.toFixed(digits)}×` : '—';
}

/** A median ratio with the middle half of the ratios it was taken from, when there are enough. */
export function ratioSpread(values: readonly number[]): string {
  const middle = median(values);
  if (!Number.isFinite(middle)) return '—';
  // Fewer than three rounds (--quick) have no middle half worth showing.
  if (values.length < 3) return ratio(middle);
  const [low, high] = quartiles(values);
  return `${ratio(middle)} (${low.toFixed(2)}–${high.toFixed(2)})`;
}

/** A markdown table, so docs/performance.md can take it as printed. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((cell, i) =>
    Math.max(cell.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const rule = `|${widths.map((width, i) => (i === 0 ? '-'.repeat(width + 2) : `${'-'.repeat(width + 1)}:`)).join('|')}|`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}

export function log(line: string) {
  process.stderr.write(`bench: ${line}\n`);
}
