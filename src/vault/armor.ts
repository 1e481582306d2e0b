/**
 * age's ASCII armor (a strict subset of PEM): the binary file as base64 in lines of 64
 * characters between BEGIN and END lines, as `age -a` writes it and `age -d` reads it.
 */
import { base64 } from '@scure/base';

const BEGIN = '-----BEGIN AGE ENCRYPTED FILE-----';
const END = '-----END AGE ENCRYPTED FILE-----';
const LINE = 64;

/** The armored file, with a final newline. */
export function armor(file: Uint8Array): string {
  const text = base64.encode(file);
  const lines = [BEGIN];
  for (let at = 0; at < text.length; at += LINE) lines.push(text.slice(at, at + LINE));
  lines.push(END, '');
  return lines.join('\n');
}

/**
 * The binary file of an armored one, read as strictly as age reads it: space around it
 * and CRLF line ends are let be, nothing else.
 */
export function unarmor(text: string): Uint8Array | { broken: string } {
  const lines = text.trim().replaceAll('\r\n', '\n').split('\n');
  if (lines.shift() !== BEGIN) return { broken: 'it does not begin as an armored age file' };
  if (lines.pop() !== END) return { broken: 'it does not end as an armored age file' };
  const last = lines.length - 1;
  const lengthsRight = lines.every((line, index) =>
    index === last
      ? line.length > 0 && line.length <= LINE && line.length % 4 === 0
      : line.length === LINE,
  );
  if (!lengthsRight) return { broken: 'a line of its armor has a wrong length' };
  try {
    return base64.decode(lines.join(''));
  } catch {
    return { broken: 'its armor is not base64' };
  }
}
