import { EXIT, type Io } from './io.ts';

/** `berth openapi`: the Command API's OpenAPI 3.1 document, made where it is asked for. */
export async function printOpenApi(io: Io): Promise<number> {
  const { openApiDocument } = await import('../http/openapi.ts');
  io.out(JSON.stringify(openApiDocument(), null, 2));
  return EXIT.done;
}
