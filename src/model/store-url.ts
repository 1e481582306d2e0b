/**
 * Checks a store URL: PostgreSQL's, and without a password. The password comes the
 * libpq ways (~/.pgpass, $PGPASSWORD, a PGPASSFILE): a URL is kept in berth.json, and
 * berth.json is kept in version control. Never says the URL back: it may hold the
 * password it refuses. Read with the web's own `URL` (as pg-connection-string reads it),
 * so that checking berth.json stays in the standards-only core and loads no driver.
 */
export function checkStoreUrl(url: string): string | undefined {
  if (!/^postgres(ql)?:\/\//i.test(url))
    return 'a store is a PostgreSQL URL: postgresql://USER@HOST[:PORT]/DATABASE';
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'the store URL cannot be read: postgresql://USER@HOST[:PORT]/DATABASE';
  }
  if (parsed.password !== '' || parsed.searchParams.get('password'))
    return 'the store URL carries a password, and berth keeps none in its settings: take it out of the URL, and give it in ~/.pgpass, a PGPASSFILE or $PGPASSWORD';
  return undefined;
}
