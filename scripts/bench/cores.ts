// Where the HTTP bench runs each side. On a machine with two cores or more, the server gets
// the first core and the load generator the others (taskset, from util-linux), so neither
// steals the other's time and a round measures the server, not the scheduler.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';

const CORES = availableParallelism();
const CAN_PIN = CORES >= 2 && spawnSync('taskset', ['-V'], { stdio: 'ignore' }).status === 0;

/** How a server process is started: `node ...args`, on the server's core when it can be. */
export function onServerCore(args: readonly string[]): { command: string; args: string[] } {
  return CAN_PIN
    ? { command: 'taskset', args: ['-c', '0', process.execPath, ...args] }
    : { command: process.execPath, args: [...args] };
}

/** Moves this process (the load generator) off the server's core; the result moves it back. */
export function pinLoadGenerator(): { where: string; release(): void } {
  if (!CAN_PIN) return { where: 'not pinned (one core, or no taskset)', release: () => {} };
  const others = CORES === 2 ? '1' : `1-${CORES - 1}`;
  const pin = (cores: string) =>
    execFileSync('taskset', ['-a', '-p', '-c', cores, String(process.pid)], { stdio: 'ignore' });
  pin(others);
  return {
    where: `server on core 0, load generator on core ${others}`,
    release: () => pin(`0-${CORES - 1}`),
  };
}

const TICKS_PER_SECOND = Number(
  spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim() || 100,
);

/**
 * The CPU time (user and system) a process has used so far, in milliseconds, from
 * /proc; NaN where there is none. It measures the server's own cost of a request,
 * which the load generator's share of the machine does not blur.
 */
export function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

/**
 * The CPU time (user and system) of this process's children that have ended and been
 * waited for, in milliseconds, from /proc; NaN where there is none. The kernel adds each
 * child's exact time at its end, so the difference over many runs is exact to a tick,
 * with nothing loaded into the children to measure them.
 */
export function childrenCpuMs(): number {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ') ?? [];
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}
