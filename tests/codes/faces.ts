/**
 * The user's two faces for the codes suites: the real binary with `--json`, and a real
 * `berth api` over a socket, believing a loopback issuer's tokens. Each suite says which
 * codes it produces where (coverage.ts); `codesSeen` records what a test saw and its last
 * test checks the suite produced every code the table gives it.
 */
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import * as v from 'valibot';
import { type Code, CodeSchema } from '../../src/model/codes.ts';
import type { ApiProcess } from '../helpers/api-process.ts';
import { apiWorld } from '../helpers/api-world.ts';
import { type Run, runBerth, type World } from '../helpers/world.ts';
import { type Cell, claimsOf, type Suite } from './coverage.ts';

/** What `--json` and the API's body hold of a refusal: the answer's code, each node's, each blocker's. */
export interface Body {
  format_version?: number;
  said?: string;
  refused?: string;
  code?: string;
  digest?: string;
  nodes?: Record<
    string,
    { code?: string; outcome?: string; blockers: { code: string; kind: string; words: string }[] }
  >;
}

/** A request as the API takes it; the command line is given the same as words and flags. */
export interface Asked {
  node: string;
  module?: string;
  yes?: boolean;
  digest?: string;
  filter?: string;
  batch?: number;
  parallel?: number;
}

export interface Answered {
  /** The exit code on the command line, the HTTP status over the API. */
  status: number;
  body: Body;
}

/** The command line's words for a request of `command`. */
export function wordsOf(command: string, asked: Asked): string[] {
  const words = [command, asked.node, ...(asked.module === undefined ? [] : [asked.module])];
  if (asked.yes) words.push('--yes');
  if (asked.digest !== undefined) words.push('--digest', asked.digest);
  if (asked.filter !== undefined) words.push('--filter', asked.filter);
  if (asked.batch !== undefined) words.push('--batch', String(asked.batch));
  if (asked.parallel !== undefined) words.push('--parallel', String(asked.parallel));
  return words;
}

/** The one JSON object `--json` printed. */
export function bodyOf(run: Run): Body {
  assert.equal(run.stdout.trim().split('\n').length, 1, `one line of JSON:\n${run.stdout}`);
  return JSON.parse(run.stdout);
}

/**
 * A world of nodes each under its own root, one `berth api` over its state believing a
 * loopback issuer, and a token for each subject: `ops` may do anything anywhere.
 */
export interface Faces {
  world: World;
  api: ApiProcess;
  rootOf(node: string): string;
  /** The command line with `--json`: its exit and its one object. */
  cli(...args: string[]): Promise<Answered & { stderr: string }>;
  /** The same request on the command line. */
  line(command: string, asked: Asked, ...more: string[]): Promise<Answered & { stderr: string }>;
  /** The request over the API, as `subject` (ops unless told). */
  served(command: string, asked: Asked, subject?: string): Promise<Answered>;
  /** A token for `subject`, made once. */
  token(subject: string): Promise<string>;
  close(): Promise<void>;
}

export async function openFaces(options: {
  modules?: Record<string, unknown>;
  nodes: string[];
  settings?: Record<string, unknown>;
  /** The environment of both faces, laid over the user's. */
  env?: Record<string, string | undefined>;
  /** Flags `berth api` is started with beside its listen, issuer and state. */
  apiFlags?: string[];
  /** A command both faces' berth runs through (runBerth's `launcher`). */
  launcher?: string[];
}): Promise<Faces> {
  const served = await apiWorld({
    modules: options.modules,
    async prepare(world) {
      const roots = options.nodes.map((node) => [node, { root: join(world.dir, node) }] as const);
      for (const [, { root }] of roots) await mkdir(root, { recursive: true });
      await world.writeSettings({
        nodes: Object.fromEntries(roots),
        grants: [{ sub: 'ops', may: ['*'], on: '@all' }],
        ...options.settings,
      });
    },
    env: options.env,
    flags: options.apiFlags,
    launcher: options.launcher,
  });
  const { world, api, token } = served;
  const rootOf = (node: string) => join(world.dir, node);
  const cli = async (...args: string[]) => {
    const run = await runBerth(
      ['--state', world.state, ...args, '--json'],
      options.env,
      options.launcher,
    );
    return { status: run.code, body: bodyOf(run), stderr: run.stderr };
  };
  return {
    world,
    api,
    rootOf,
    cli,
    line: (command, asked, ...more) => cli(...wordsOf(command, asked), ...more),
    async served(command, asked, subject = 'ops') {
      const answer = await served.ask(`/${command}`, asked, { as: subject });
      return { status: answer.status, body: (answer.body ?? {}) as Body };
    },
    token,
    close: served.close,
  };
}

/**
 * What a suite saw, code by cell; `finally` (the suite's last test) checks it saw every
 * code coverage.ts says it produces.
 */
export function codesSeen(suite: Suite) {
  const seen = new Set<string>();
  const saw = (cell: Cell, code: Code) => seen.add(`${code} on ${cell}`);
  /**
   * The answer refused with `code`, beside `refused`, and so did each node of `nodes`
   * (the code in the closed list, the words a sentence for people).
   */
  const refused = (cell: Cell, answer: Answered, code: Code, nodes: string[] = []) => {
    const { body } = answer;
    assert.equal(body.code, code, `${cell}: ${body.refused ?? JSON.stringify(body)}`);
    assert.ok(v.is(CodeSchema, body.code), `${cell}: ${body.code} is in the list`);
    assert.equal(typeof body.refused, 'string', `${cell}: refused beside the code`);
    assert.ok((body.refused ?? '').length > 0, `${cell}: words beside the code`);
    for (const node of nodes)
      assert.equal(body.nodes?.[node]?.code, code, `${cell}: ${node}'s code`);
    saw(cell, code);
  };
  return {
    refused,
    /**
     * `command` asked on both faces, the command line exiting `exit` and the API answering
     * `status`, each refused with `code`.
     */
    async refusedOnBoth(
      faces: Faces,
      scope: 'node' | 'group',
      command: string,
      asked: Asked,
      expected: { exit: number; status: number; code: Code },
    ) {
      const line = await faces.line(command, asked);
      assert.equal(line.status, expected.exit, `${command} ${asked.node}`);
      refused(`cli ${scope}`, line, expected.code);
      const served = await faces.served(command, asked);
      assert.equal(served.status, expected.status, `${command} ${asked.node}`);
      refused(`api ${scope}`, served, expected.code);
    },
    /** A converge of `node` and one of the group @web, each refused on both faces alike. */
    async convergeRefusedOnBoth(
      faces: Faces,
      node: string,
      expected: { exit: number; status: number; code: Code },
    ) {
      for (const [scope, asked] of [
        ['node', node],
        ['group', '@web'],
      ] as const)
        await this.refusedOnBoth(faces, scope, 'converge', { node: asked }, expected);
    },
    /** `node`'s entry refused or failed with `code`, whatever the answer's own code. */
    nodeRefused(cell: Cell, answer: Answered, node: string, code: Code) {
      const entry = answer.body.nodes?.[node];
      assert.equal(entry?.code, code, `${cell}: ${node}: ${JSON.stringify(answer.body)}`);
      assert.equal(typeof answer.body.refused, 'string', `${cell}: refused beside the code`);
      saw(cell, code);
    },
    /** `node`'s entry carries a blocker of `code`, with its words. */
    blocker(cell: Cell, answer: Answered, node: string, code: Code) {
      const blockers = answer.body.nodes?.[node]?.blockers ?? [];
      const found = blockers.find((blocker) => blocker.code === code);
      assert.ok(found, `${cell}: ${node} has no ${code} blocker: ${JSON.stringify(answer.body)}`);
      assert.ok(found.words.length > 0, `${cell}: words beside ${code}`);
      saw(cell, code);
    },
    /** The last test of the suite: each code the table gives it, seen where the table says. */
    finally(options: { skip?: string | false } = {}) {
      test(`the ${suite} suite produced each code coverage.ts names it for`, options, () => {
        const missing = claimsOf(suite).filter((claim) => !seen.has(claim));
        assert.deepEqual(missing, []);
      });
    },
  };
}
