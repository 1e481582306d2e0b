import { toJsonSchema } from '@valibot/to-json-schema';
import type { GenericSchema } from 'valibot';
import { CommandRequestSchema, RefusalSchema } from '../model/request.ts';
import { CommandAnswerSchema } from '../model/result.ts';
import type { Route } from './command-shape.ts';

type Json = Record<string, unknown>;

const schemaOf = (schema: GenericSchema) =>
  toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json;

/** A JSON answer of the given shape, described in docs/api.md's words. */
function answerOf(description: string, schema: string, headers?: Json): Json {
  return {
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/json': { schema: { $ref: `#/components/schemas/${schema}` } } },
  };
}

/**
 * The Command API as OpenAPI 3.1: the request and answer shapes are the valibot schemas
 * the API validates and answers with, converted; each route's required fields come from
 * the command table, as the API's own check does; the statuses and their words are
 * docs/api.md's. Made when asked for (`berth openapi`), never by `berth api`.
 */
export function openApiDocument(routes: readonly Route[], version = '0.1.0'): Json {
  const { $schema: _, ...request } = schemaOf(CommandRequestSchema);
  const { $schema: __, ...commandAnswer } = schemaOf(CommandAnswerSchema);
  const { $schema: ___, ...refusal } = schemaOf(RefusalSchema);
  const paths: Json = {};
  for (const command of routes) {
    const needs = [...command.needs];
    paths[command.route] = {
      post: {
        operationId: command.name,
        summary: command.summary,
        description: `Calls what \`berth ${command.name}\` calls. Processing order: authentication (401), decoding (400), required fields (400), opening the stores (503), the command (409 or 200).`,
        security: [{ bearer: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: '#/components/schemas/CommandRequest' },
                  {
                    type: 'object',
                    required: needs,
                    properties: Object.fromEntries(
                      needs.map((field) => [field, { type: 'string', minLength: 1 }]),
                    ),
                  },
                ],
              },
            },
          },
        },
        responses: {
          '200': answerOf(
            'Done (or, without yes, the preview): `said` holds the words',
            'CommandAnswer',
          ),
          '400': answerOf(
            `Not a request berth understands: "this is not a request berth understands: <decoder message>", or "${needs.length === 2 ? 'both node and module are needed' : 'node is needed'}"`,
            'Refusal',
          ),
          '401': answerOf(
            'No token, or one berth does not accept; while no identity provider answers: "berth cannot yet verify a token from <issuer>: the identity provider is a module, and none is running; use the berth command line instead"',
            'Refusal',
            {
              'WWW-Authenticate': {
                description: 'Bearer, with an RFC 6750 error',
                schema: { type: 'string' },
              },
            },
          ),
          '409': answerOf(
            "Refused by the command: `said` and `refused` in the command line's words",
            'CommandAnswer',
          ),
          '413': answerOf('The request body is larger than berth reads (64 KiB)', 'Refusal'),
          '503': answerOf(
            '"the stores cannot be opened: <why>", or berth api is shutting down',
            'Refusal',
          ),
        },
      },
    };
  }
  const listed = routes.map((command) => `POST ${command.route}`).join(', ');
  return {
    openapi: '3.1.0',
    info: {
      title: 'berth Command API',
      version,
      description: `Every route calls what the command line calls. Anything but ${listed} is answered 404, unauthenticated: "no route for <METHOD> <path>; berth answers ${listed}". Every answer is application/json.`,
    },
    paths,
    components: {
      schemas: {
        CommandRequest: request,
        CommandAnswer: commandAnswer,
        Refusal: refusal,
      },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description:
            'A token from the issuer given to berth api as --issuer, for the audience --audience (default berth)',
        },
      },
    },
  };
}
