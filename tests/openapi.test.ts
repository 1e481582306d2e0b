import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Validator } from '@seriousme/openapi-schema-validator';
import openapiTS, { astToString } from 'openapi-typescript';
import { CODES } from '../src/model/codes.ts';
import { apiWorld, type ServedApiWorld } from './helpers/api-world.ts';
import { untimed } from './helpers/timed.ts';
import { makeWorld, type World } from './helpers/world.ts';

const TSC = resolve(import.meta.dirname, '../node_modules/typescript/bin/tsc');

/**
 * A typed client made from the document alone: openapi-typescript's types, and a fetch
 * whose request and answer are those types. A request without a field the route needs
 * does not compile (the @ts-expect-error line).
 */
const CLIENT = `import type { paths } from './berth-api.ts';

type Route = keyof paths;
type Post<R extends Route> = paths[R]['post'];
type Body<R extends Route> = NonNullable<Post<R>['requestBody']>['content']['application/json'];
type Answered<R extends Route> = {
  [S in keyof Post<R>['responses']]: {
    status: S;
    body: Post<R>['responses'][S] extends { content: { 'application/json': infer A } } ? A : never;
  };
}[keyof Post<R>['responses']];

export async function call<R extends Route>(
  base: string,
  token: string | undefined,
  route: R,
  body: Body<R>,
): Promise<Answered<R>> {
  const response = await fetch(new URL(route, base), {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      ...(token ? { Authorization: \`Bearer \${token}\` } : {}),
    },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() } as Answered<R>;
}

export function untypedCallsDoNotCompile(base: string) {
  // @ts-expect-error: /assign needs module as well as node
  void call(base, undefined, '/assign', { node: 'box' });
}
`;

function run(file: string, args: string[]) {
  return new Promise<{ code: number; output: string }>((done) =>
    execFile(file, args, { timeout: 120_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr }),
    ),
  );
}

type Json = Record<string, unknown>;

describe('berth openapi', () => {
  let world: World;
  let document: Record<string, unknown>;
  let dir: string;
  before(async () => {
    world = await makeWorld({ m: { description: 'a module' } });
    const printed = await world.berth('openapi');
    assert.equal(printed.code, 0, printed.stderr);
    document = JSON.parse(printed.stdout);
    dir = await mkdtemp(join(tmpdir(), 'berth-openapi-'));
  });
  after(async () => {
    await world.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  it('is a valid OpenAPI 3.1 document, to a standard validator', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    assert.equal(validator.version, '3.1');
    assert.deepEqual(result.errors, undefined);
    assert.equal(result.valid, true);
  });

  it('names the five routes alone, each with its statuses and words', () => {
    const paths = document.paths as Record<
      string,
      { post: { responses: Record<string, { description: string }> } }
    >;
    assert.deepEqual(Object.keys(paths).sort(), [
      '/adopt',
      '/assign',
      '/converge',
      '/take',
      '/unassign',
    ]);
    const assign = paths['/assign']?.post.responses ?? {};
    assert.deepEqual(Object.keys(assign).sort(), ['200', '400', '401', '409', '413', '503']);
    assert.match(assign['400']?.description ?? '', /both node and module are needed/);
    assert.match(
      assign['401']?.description ?? '',
      /the identity provider is a module, and none is running/,
    );
    assert.match(assign['503']?.description ?? '', /the stores cannot be opened: <why>/);
    assert.match(paths['/adopt']?.post.responses['400']?.description ?? '', /"node is needed"/);
  });

  it('describes the codes beside refused as the one closed list, in every answer', () => {
    const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
    const codesOf = (schema: Json | undefined) => (schema?.properties as Json)?.code as Json;
    const answer = schemas.CommandAnswer as Json;
    const refusal = schemas.Refusal as Json;
    assert.deepEqual(codesOf(answer)?.enum, [...CODES]);
    assert.deepEqual(codesOf(refusal)?.enum, [...CODES]);
    assert.deepEqual((refusal.required as string[]).sort(), ['code', 'refused']);
    const node = ((answer.properties as Json).nodes as Json).additionalProperties as Json;
    assert.deepEqual(codesOf(node)?.enum, [...CODES]);
    const blocker = ((node.properties as Json).blockers as Json).items as Json;
    assert.deepEqual(codesOf(blocker)?.enum, [...CODES]);
    assert.ok((blocker.required as string[]).includes('code'));
  });

  describe('a client generated from it (openapi-typescript) calls a real berth api', () => {
    let api: ServedApiWorld;
    /** One believing an identity provider that is not running. */
    let idle: ServedApiWorld;
    before(async () => {
      api = await apiWorld({ world });
      idle = await apiWorld({ world, issuerDown: true });
    });
    after(async () => {
      await api?.close();
      await idle?.close();
    });

    it('compiles, strictly, and its answers are the ones the document describes', async () => {
      await writeFile(join(dir, 'berth-api.ts'), astToString(await openapiTS(document as never)));
      await writeFile(join(dir, 'client.ts'), CLIENT);
      await writeFile(
        join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            noEmit: true,
            target: 'es2022',
            module: 'nodenext',
            lib: ['es2022', 'dom'],
            types: [],
            allowImportingTsExtensions: true,
          },
          files: ['client.ts'],
        }),
      );
      const compiled = await run(process.execPath, [TSC, '-p', dir]);
      assert.equal(compiled.code, 0, compiled.output);

      const { call } = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
        call: (
          base: string,
          token: string | undefined,
          route: string,
          body: object,
        ) => Promise<{ status: number; body: Record<string, unknown> }>;
      };
      const token = await api.token();
      const assigned = await call(api.url, token, '/assign', { node: 'box', module: 'm' });
      assert.deepEqual(
        { ...assigned, body: untimed(assigned.body) },
        {
          status: 200,
          body: {
            format_version: 1,
            said: 'box is to run m',
            nodes: { box: { steps: [], blockers: [], outcome: 'done' } },
          },
        },
      );
      const refused = await call(api.url, token, '/unassign', { node: 'box', module: 'x' });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.code, 'not_assigned');
      assert.deepEqual(Object.keys(refused.body).sort(), [
        'code',
        'format_version',
        'nodes',
        'refused',
        'said',
      ]);
      const missing = await call(api.url, token, '/adopt', { node: '' });
      assert.deepEqual(missing, {
        status: 400,
        body: { refused: 'node is needed', code: 'fields_missing' },
      });
      const noProvider = await call(idle.url, token, '/adopt', { node: 'box' });
      assert.equal(noProvider.status, 401);
      assert.match(String(noProvider.body.refused), /^berth cannot yet verify a token from /);
    });
  });
});
