/**
 * A hook's output is cleared of secrets before it is cut short, never after: a secret
 * printed so that the cut falls inside it leaves no piece of itself in what berth says
 * (said), refuses with, journals, or shows as the hook runs. On a rooted node, through
 * the real binary.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import {
  clearHookOutput,
  clearingLines,
  mintSecret,
  SHOWN_OUTPUT,
} from '../../src/commands/secrets.ts';
import { RAW_OUTPUT_KEPT } from '../../src/machines/machine.ts';
import { digestOf, makeWorld, type Run, type World } from '../helpers/world.ts';

/** Every 8-character piece of a text, to ask of a secret whether any piece of it shows. */
function pieces(text: string): Set<string> {
  const all = new Set<string>();
  for (let at = 0; at + 8 <= text.length; at++) all.add(text.slice(at, at + 8));
  return all;
}

/** The pieces of `secret` that `seen` holds: none, when it was cleared whole. */
function leaked(secret: string, seen: Set<string>): string[] {
  const found: string[] = [];
  for (let at = 0; at + 8 <= secret.length; at++) {
    const piece = secret.slice(at, at + 8);
    if (seen.has(piece)) found.push(`${piece} at ${at}`);
  }
  return found;
}

/** A module whose secret `k` the hook prints, then `tail` characters more: the cut falls in it. */
const printing = (module: string, bytes: number, times: number, tail: number, fails = false) => ({
  description: 'prints its secret',
  secrets: { k: { path: `/etc/${module}/k`, bytes } },
  start: `i=0; while [ $i -lt ${times} ]; do cat "$BERTH_ROOT/etc/${module}/k"; i=$((i+1)); done; head -c ${tail} /dev/zero | tr '\\0' x${fails ? '; exit 1' : ''}`,
});

const secretOf = async (world: World, module: string) =>
  (await readFile(join(world.root, 'etc', module, 'k'), 'utf8')).trim();

describe('hook output, cleared of secrets before it is cut', () => {
  let world: World;
  beforeEach(async () => {
    world = await makeWorld();
  });
  afterEach(() => world.cleanup());

  /** Box is to run `modules`, as declared in berth.json: one file, not a process an assign. */
  const runs = (modules: string[]) =>
    world.writeSettings({ nodes: { box: { root: world.root } }, run: { box: modules } });

  /** A converge act on box: what the command line printed, and the journal after it. */
  const converge = async (): Promise<{ run: Run; seen: Set<string> }> => {
    const preview = await world.berth('converge', 'box');
    const run = await world.berth('converge', 'box', '--yes', '--digest', digestOf(preview.stdout));
    const journal = JSON.stringify(await world.journal());
    return { run, seen: pieces(`${run.stdout}\n${run.stderr}\n${journal}`) };
  };

  it('leaves no piece of a 64-character secret at any offset of the cut, in said, the journal or the lines shown', async () => {
    // 48 bytes are 64 characters of base64url. Module o<j>: the cut falls j characters
    // before the secret's end, for every j from 1 to 63.
    const offsets = Array.from({ length: 63 }, (_, j) => j + 1);
    for (const j of offsets)
      await world.writeModule(`o${j}`, printing(`o${j}`, 48, 1, SHOWN_OUTPUT - j));
    await runs(offsets.map((j) => `o${j}`));
    const { run, seen } = await converge();
    assert.equal(run.code, 0, run.stderr);
    for (const j of offsets) {
      const secret = await secretOf(world, `o${j}`);
      assert.equal(secret.length, 64);
      assert.deepEqual(leaked(secret, seen), [], `o${j}: the cut ${j} before the secret's end`);
    }
    // Said keeps the hook's last line, cleared and then cut, its label whole.
    const entry = (await world.journal()).at(-1) as { said: string };
    assert.match(entry.said, /ran start of o1\n {2}> \[secret k of o1\]x{1999}\n/);
    assert.match(run.stdout, /^ {2}\[secret k of o63\]x{1937}$/m);
  });

  it('leaves no piece in a refusal, at the offsets around the cut', async () => {
    await runs(['fails']);
    for (const j of [1, 7, 8, 9, 32, 56, 57, 63]) {
      await world.writeModule('fails', printing('fails', 48, 1, SHOWN_OUTPUT - j, true));
      const { run, seen } = await converge();
      assert.equal(run.code, 1);
      assert.match(run.stderr, /start of fails failed \(exit 1\): \[secret k of fails\]x+\n/);
      assert.deepEqual(leaked(await secretOf(world, 'fails'), seen), [], `cut ${j} before the end`);
    }
  });

  it("clears the tail of a secret that the machine's own cut left at the start", async () => {
    // 512 bytes are 683 characters. Printed 100 times and then `tail` characters, the
    // machine keeps the last RAW_OUTPUT_KEPT: it begins inside a secret, 32 + tail in.
    const length = 683;
    const times = 100;
    for (const tail of [1, 7, 8, 268, 548]) {
      const module = `b${tail}`;
      await world.writeModule(module, printing(module, 512, times, tail));
      const into = (times * length + tail - RAW_OUTPUT_KEPT) % length;
      assert.equal(into, 32 + tail);
    }
    await runs([1, 7, 8, 268, 548].map((tail) => `b${tail}`));
    const { run, seen } = await converge();
    assert.equal(run.code, 0, run.stderr);
    for (const tail of [1, 7, 8, 268, 548]) {
      const secret = await secretOf(world, `b${tail}`);
      assert.equal(secret.length, length);
      assert.deepEqual(leaked(secret, seen), [], `b${tail}`);
    }
  });
});

describe('the clearing, on its own', () => {
  const pem = '-----BEGIN KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7\n-----END KEY-----';
  const secrets = [{ module: 'db', secret: 'key', value: new TextEncoder().encode(pem) }];

  it('holds back the lines a secret spans until it is whole, in whatever chunks it comes', () => {
    const text = `before\n${pem}\nafter\n`;
    for (let size = 1; size <= text.length; size++) {
      const told: string[] = [];
      const lines = clearingLines(secrets, (line) => told.push(line));
      for (let at = 0; at < text.length; at += size) lines.write(text.slice(at, at + size));
      lines.end();
      assert.deepEqual(told, ['before', '[secret key of db]', 'after'], `chunks of ${size}`);
    }
  });

  it('tells every line of a chatty hook on a node with many secrets', () => {
    // How fast is `npm run bench -- hooks`.
    const many = Array.from({ length: 50 }, (_, n) => ({
      module: `m${n}`,
      secret: 'k',
      value: mintSecret(48),
    }));
    let told = 0;
    const lines = clearingLines(many, () => told++);
    for (let n = 0; n < 20_000; n++) lines.write(`progress ${n}: copied files to /var/lib/app\n`);
    lines.end();
    assert.equal(told, 20_000);
  });

  it('hides whole each line holding a secret too short to clear in place, streamed or kept', () => {
    const short = [
      ...secrets,
      { module: 'app', secret: 'pw', value: new TextEncoder().encode('q7z\n') },
    ];
    const text = 'connecting as app\nauth q7z refused\ndone\n';
    const told: string[] = [];
    const lines = clearingLines(short, (line) => told.push(line));
    lines.write(text);
    lines.end();
    const hidden = ['connecting as app', '[a line holding secret pw of app]', 'done'];
    assert.deepEqual(told, hidden);
    assert.equal(clearHookOutput(text, short, false), `${hidden.join('\n')}\n`);
  });

  it('clears the tail of a secret at the start of a kept text that was cut, and only then', () => {
    const kept = `${pem.slice(30)} and then`;
    assert.equal(clearHookOutput(kept, secrets, true), '[secret key of db] and then');
    assert.equal(clearHookOutput('Y and then', secrets, false), 'Y and then');
  });
});
