/** The usage of `ledgerline tenants` (tenants-command.ts), apart so that `ledgerline start` need not load the command. */
export const TENANTS_USAGE = `usage:
  ledgerline tenants list [--admin URL]
  ledgerline tenants get NAME [--admin URL]
  ledgerline tenants put NAME [--principal User:x]... [--policy key=value]... [--namespace NS [--policy key=value]...]... [--admin URL]
  ledgerline tenants put NAME --file tenant.json [--admin URL]
  ledgerline tenants delete NAME [--admin URL]
  (--admin: the broker's ledgerline.admin.listener, default http://127.0.0.1:9644)`;
