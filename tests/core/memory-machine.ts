/**
 * A machine held in memory: files and directories in maps, hooks recorded and answered
 * with exit 0 (or the code a test sets). It keeps the core's tests off the file system,
 * so that they run on any runtime; machines/contract.ts holds the real machines to the
 * same interface.
 */

import { READ_LIMIT } from '../../src/machines/limits.ts';
import {
  type Change,
  type Machine,
  MachineError,
  type PathFacts,
  type RunResult,
  type Survey,
  type SurveyPath,
} from '../../src/machines/machine.ts';

export interface MemoryMachine extends Machine {
  readonly files: Map<string, { bytes: Uint8Array; mode: number }>;
  readonly directories: Set<string>;
  /** The hooks run, in order. */
  readonly ran: string[];
  /** The exit code and output the next hooks give; 0 and '' unless set. */
  hookResult: RunResult;
  /** While set, every method fails as a machine that cannot be reached. */
  unreachable: boolean;
}

function parents(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.slice(0, -1).map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}

export function memoryMachine(name = 'box'): MemoryMachine {
  const machine: MemoryMachine = {
    files: new Map(),
    directories: new Set(['/']),
    ran: [],
    hookResult: { code: 0, output: '' },
    unreachable: false,
    async survey(
      paths: readonly SurveyPath[],
      _names?: unknown,
      packages?: readonly unknown[],
    ): Promise<Survey> {
      reach();
      const answer = new Map<string, PathFacts>();
      for (const { path, read } of paths) answer.set(path, facts(path, read === true));
      // A machine in memory has no package manager.
      return packages?.length
        ? Object.assign(answer, { packages: { manager: 'none' as const } })
        : answer;
    },
    async install() {
      throw new MachineError('failed', `${name} has no package manager`);
    },
    async refreshPackages() {
      throw new MachineError('failed', `${name} has no package manager`);
    },
    async unholdStarts() {
      throw new MachineError('failed', `${name} has no package manager`);
    },
    async apply(changes: readonly Change[]) {
      if (machine.unreachable)
        return { done: 0, failure: new MachineError('unreachable', `${name} cannot be reached`) };
      for (const change of changes) {
        for (const parent of parents(change.path)) machine.directories.add(parent);
        if (change.kind === 'directory') machine.directories.add(change.path);
        else
          machine.files.set(change.path, {
            bytes: new Uint8Array(change.data),
            mode: change.options.mode,
          });
      }
      return { done: changes.length };
    },
    async run(script: string) {
      reach();
      machine.ran.push(script);
      return machine.hookResult;
    },
    async close() {},
  };
  function reach() {
    if (machine.unreachable) throw new MachineError('unreachable', `${name} cannot be reached`);
  }
  function facts(path: string, read: boolean): PathFacts {
    const file = machine.files.get(path);
    if (file) {
      const mode = file.mode.toString(8).padStart(4, '0');
      const bytes = read && file.bytes.length <= READ_LIMIT ? file.bytes : undefined;
      return {
        kind: 'file',
        size: file.bytes.length,
        mode,
        uid: 0,
        gid: 0,
        ...(bytes && { bytes }),
      };
    }
    if (machine.directories.has(path)) {
      const empty = ![...machine.files.keys(), ...machine.directories].some((other) =>
        other.startsWith(`${path.replace(/\/$/, '')}/`),
      );
      return { kind: 'directory', empty, mode: '0755', uid: 0, gid: 0 };
    }
    return { kind: 'missing' };
  }
  return machine;
}
