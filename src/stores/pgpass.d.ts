/** The ~/.pgpass reader that node-postgres uses; it ships no types of its own. */
declare module 'pgpass' {
  interface ConnectionInfo {
    host?: string;
    port?: number | string;
    database?: string;
    user?: string;
  }
  /** Calls back with the password the file (`$PGPASSFILE`, else ~/.pgpass) holds for `info`. */
  export default function pgpass(
    info: ConnectionInfo,
    callback: (password: string | undefined) => void,
  ): void;
}
