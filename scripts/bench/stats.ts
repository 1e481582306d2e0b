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
  /** Peak resident set of the child, in MiB, when its usage was asked for. */
  rssMiB?: number;
  /** The child's CPU time (all its threads), and the part in user space, when asked for. */
  cpuMs?: number;
  userMs?: number;
  stdout: string;
  stderr: string;
}

const USAGE_PRELOAD = join(import.meta.dirname, 'usage.cjs');

/**
 * Runs `node ...args` to its end and times it, wall clock from spawn to exit. With
 * `usage`, a preload writes what the child used (process.resourceUsage) to a file.
 */
export async function timeNode(
  args: readonly string[],
  options: { usage?: boolean; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<Timed> {
  let usageFile: string | undefined;
  let usageDir: string | undefined;
  if (options.usage) {
    usageDir = await mkdtemp(join(tmpdir(), 'berth-bench-usage-'));
    usageFile = join(usageDir, 'usage');
  }
  const env = {
    ...(options.env ?? cleanEnv()),
    ...(usageFile ? { BERTH_BENCH_USAGE: usageFile } : {}),
  };
  const argv = usageFile ? ['--require', USAGE_PRELOAD, ...args] : [...args];
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
  if (!usageFile || !usageDir) return { ms, ...result };
  const used = await readFile(usageFile, 'utf8')
    .then((text) => JSON.parse(text) as Record<string, number>)
    .catch(() => ({}) as Record<string, number>);
  await rm(usageDir, { recursive: true, force: true });
  const { maxRSS = Number.NaN, userCPUTime = Number.NaN, systemCPUTime = Number.NaN } = used;
  return {
    ms,
    rssMiB: maxRSS / 1024,
    cpuMs: (userCPUTime + systemCPUTime) / 1000,
    userMs: userCPUTime / 1000,
    ...result,
  };
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
