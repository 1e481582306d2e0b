import { isIP } from 'node:net';

/** Where the view listens: a host on loopback, and a port (0: any free one). */
export interface ListenAddress {
  hostname: string;
  port: number;
}

/**
 * `--listen host:port` (IPv6 in brackets), on loopback alone: `127.0.0.1`, `::1` or
 * `localhost`, or the refusal in words. The view is the command line's trust shown in a
 * browser: another machine reaches it through ssh's port forwarding, as the operator. It
 * is served under a name of its own in `.localhost`, which browsers resolve to 127.0.0.1
 * and ::1 alone, so another address of 127.0.0.0/8 could not be reached by that name.
 */
export function parseListenAddress(text: string): ListenAddress | { refused: string } {
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]+)):(\d{1,5})$/.exec(text);
  const port = Number(match?.[3]);
  if (!match || port > 65535)
    return {
      refused: `--listen takes host:port, like 127.0.0.1:8082 or [::1]:8082, not ${JSON.stringify(text)}`,
    };
  const hostname = match[1] ?? (match[2] as string);
  const loopback =
    hostname === 'localhost' ||
    hostname === '127.0.0.1' ||
    (isIP(hostname) === 6 && /^(0{0,4}:){2,7}0{0,3}1$|^::1$/.test(hostname));
  if (isIP(hostname) === 4 && hostname.startsWith('127.') && !loopback)
    return {
      refused: `berth view serves on 127.0.0.1, ::1 or localhost, not ${hostname}: browsers reach the name of its own it is served under (under .localhost) at 127.0.0.1 and ::1 alone`,
    };
  if (!loopback)
    return {
      refused: `berth view serves on loopback alone (127.0.0.1, ::1 or localhost), not ${hostname}: it shows what the command line may see. To look from another machine, forward a port: ssh -L 8082:127.0.0.1:8082 THIS-HOST`,
    };
  return { hostname, port };
}
