import type { CommandRequest } from '../model/request.ts';

/** A target's command as an operator types it after `berth`: `converge @web --filter redis`. */
export function targetWords(
  command: string,
  request: Pick<CommandRequest, 'node' | 'filter'> & { module?: string },
): string {
  const words = [command, request.node];
  if (request.module) words.push(request.module);
  if (request.filter) words.push('--filter', request.filter);
  return words.join(' ');
}
