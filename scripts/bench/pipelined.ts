// A server's own CPU time a request with the scheduler taken out: requests pipelined on one
// connection, fifty at a time, so that a wake-up serves many, and the time read from
// /proc/<pid>/schedstat, which the kernel keeps in nanoseconds.
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';

const BATCH = 50;

/** The server's CPU µs a request over `batches` batches of the same request; NaN off Linux. */
export function pipelinedCpuUs(url: string, pid: number, request: string, batches = 200) {
  const { hostname, port } = new URL(url);
  const batch = request.repeat(BATCH);
  return new Promise<number>((done, fail) => {
    const socket = connect(Number(port), hostname);
    const before = ranNs(pid);
    let sent = 0;
    let answered = 0;
    let tail = '';
    socket.setEncoding('latin1');
    socket.on('error', fail);
    socket.on('connect', () => {
      sent++;
      socket.write(batch);
    });
    socket.on('data', (chunk: string) => {
      // Counted by their status lines; a split one is found with the tail kept.
      const text = tail + chunk;
      for (let at = text.indexOf('HTTP/1.1 '); at !== -1; at = text.indexOf('HTTP/1.1 ', at + 9))
        answered++;
      tail = text.slice(-8);
      if (answered < sent * BATCH) return;
      if (sent < batches) {
        sent++;
        socket.write(batch);
        return;
      }
      socket.destroy();
      done((ranNs(pid) - before) / 1000 / (batches * BATCH));
    });
  });
}

function ranNs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
  } catch {
    return Number.NaN;
  }
}
