/**
 * The usage of `ledgerline links`, `ledgerline mirrors` and `ledgerline migrate` (command.ts) and of `ledgerline
 * replicated` (replicated-command.ts), apart so that `ledgerline start` need not load the commands.
 */

const ADMIN_NOTE = '  (--admin: the broker\'s ledgerline.admin.listener, default http://127.0.0.1:9644)';

/** The security options of a link, shared by `links put` and `migrate`. */
const SECURITY = '[--security-protocol PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL] [--sasl-mechanism SCRAM-SHA-256|SCRAM-SHA-512 --username U (--password P | --password-file F)] [--ca-file ca.pem]';

export const LINKS_USAGE = `usage:
  ledgerline links list [--admin URL]
  ledgerline links get NAME [--admin URL]
  ledgerline links put NAME --bootstrap HOST:PORT[,HOST:PORT...]
      ${SECURITY}
      [--group-filter 'GROUP|PREFIX*']... [--no-group-offsets] [--auto-mirror 'TOPIC|PREFIX*']...
      [--offset-sync-interval-ms N] [--metadata-sync-interval-ms N] [--admin URL]
  ledgerline links put NAME --file link.json [--admin URL]
  ledgerline links delete NAME [--admin URL]
${ADMIN_NOTE}`;

export const MIRRORS_USAGE = `usage:
  ledgerline mirrors list [--admin URL]
  ledgerline mirrors get TOPIC [--admin URL]
  ledgerline mirrors create TOPIC --link LINK [--source-topic SOURCE] [--admin URL]
  ledgerline mirrors promote TOPIC [--wait [--timeout-ms 120000]] [--admin URL]
  ledgerline mirrors failover TOPIC [--wait [--timeout-ms 120000]] [--admin URL]
${ADMIN_NOTE}`;

export const REPLICATED_USAGE = `usage:
  ledgerline replicated list [--admin URL]
  ledgerline replicated put 'TOPIC|PREFIX*' --link LINK [--link LINK]... [--admin URL]
  ledgerline replicated delete 'TOPIC|PREFIX*' [--admin URL]
${ADMIN_NOTE}`;

export const MIGRATE_USAGE = `usage:
  ledgerline migrate --link LINK --bootstrap HOST:PORT[,HOST:PORT...] --topics 'TOPIC|PREFIX*[,...]' [--groups 'GROUP|PREFIX*[,...]']
      ${SECURITY}
      [--interval-ms 5000] [--until-caught-up] [--admin URL]
  ledgerline migrate --link LINK --cutover [--timeout-ms 120000] [--admin URL]
${ADMIN_NOTE}`;
