/**
 * The names a certificate is for: DNS names and IP addresses, as a `tls` secret's `names`
 * lists them, read as RFC 5280's subjectAltName holds them (dNSName, iPAddress). Apart
 * from the code that makes certificates, so a definition's names are checked without it.
 */

export type CertificateName = { dns: string } | { ip: Uint8Array<ArrayBuffer>; text: string };

/** A name as a certificate holds it, or why it cannot be one, in words. */
export function certificateName(text: string): CertificateName | { refused: string } {
  const v4 = ipv4(text);
  if (v4) return { ip: v4, text };
  if (text.includes(':')) {
    const v6 = ipv6(text);
    return v6 ? { ip: v6, text } : { refused: `${JSON.stringify(text)} is not an IPv6 address` };
  }
  if (/^[0-9.]+$/.test(text))
    return { refused: `${JSON.stringify(text)} is not an IPv4 address (four numbers of 0 to 255)` };
  const labels = text.split('.');
  const wildcard = labels[0] === '*' && labels.length > 2;
  const ok =
    text.length <= 253 &&
    labels.every(
      (label, index) =>
        (index === 0 && wildcard) || /^[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?$/.test(label),
    );
  if (!ok)
    return {
      refused: `${JSON.stringify(text)} is neither a DNS name (labels of letters, digits and -, joined by dots) nor an IP address`,
    };
  return { dns: text.toLowerCase() };
}

function ipv4(text: string): Uint8Array<ArrayBuffer> | undefined {
  const parts = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text)?.slice(1);
  // Leading zeros read as octal to some, as decimal to others: such an address is refused.
  if (!parts || parts.some((part) => Number(part) > 255 || /^0\d/.test(part))) return undefined;
  return Uint8Array.from(parts, Number);
}

function ipv6(text: string): Uint8Array<ArrayBuffer> | undefined {
  const url = `http://[${text}]/`;
  if (!URL.canParse(url)) return undefined;
  // The URL parser checks the address and writes it back in hex groups, `::` at most once.
  const host = new URL(url).hostname.slice(1, -1);
  const [head = '', tail] = host.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const all =
    tail === undefined
      ? groups(head)
      : [
          ...groups(head),
          ...Array<string>(8 - groups(head).length - groups(tail).length).fill('0'),
          ...groups(tail),
        ];
  return Uint8Array.from(
    all.flatMap((group) => [Number.parseInt(group, 16) >> 8, Number.parseInt(group, 16) & 0xff]),
  );
}

/** An address's bytes as words: dotted for IPv4, as the URL standard writes IPv6. */
export function addressText(bytes: Uint8Array): string {
  if (bytes.length === 4) return [...bytes].join('.');
  const groups: string[] = [];
  for (let at = 0; at + 1 < bytes.length; at += 2)
    groups.push((((bytes[at] ?? 0) << 8) | (bytes[at + 1] ?? 0)).toString(16));
  return new URL(`http://[${groups.join(':')}]/`).hostname.slice(1, -1);
}
