// One Command API request over a keep-alive agent, as the bench's clients send them.
import { type Agent, request } from 'node:http';

export interface Posted {
  status: number;
  body: { said?: string; refused?: string };
}

/** POSTs `body` (JSON text) to `path` with a bearer token; the status and the parsed answer. */
export function post(
  url: string,
  path: string,
  body: string,
  agent: Agent,
  token: string,
): Promise<Posted> {
  return new Promise((done, fail) => {
    const sent = request(
      new URL(path, url),
      {
        method: 'POST',
        agent,
        headers: {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(body)),
          Authorization: `Bearer ${token}`,
        },
      },
      (response) => {
        let answer = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          answer += chunk;
        });
        response.on('end', () =>
          done({ status: response.statusCode ?? 0, body: answer ? JSON.parse(answer) : {} }),
        );
        response.on('error', fail);
      },
    );
    sent.on('error', fail);
    sent.end(body);
  });
}
