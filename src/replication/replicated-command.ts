/**
 * `ledgerline replicated`: active-active topic selections (README.md, "Active-active topics") through a broker's
 * admin HTTP endpoint (admin-routes.ts), with the option parsing, requests and exit statuses of `ledgerline links`
 * and `ledgerline mirrors` (command.ts).
 *
 *   ledgerline replicated put 'orders*' --link east --link west
 *   ledgerline replicated list
 *   ledgerline replicated delete 'orders*'
 *
 * `put` replaces the selection's links with those given (one --link per other cluster of the mesh); the broker
 * answers 404 for a link it does not have and 400 for a pattern or a list of links it refuses.
 *
 * Exit status: 0 done, 1 refused or not found (the broker's message on stderr) or the endpoint unreachable, 2 a
 * usage error.
 */
import { AdminClient, adminBase, needName, noMoreArguments, onlyOptions, parse, pretty, run, unknownSubcommand, UsageError, type OptionSpec, type Writer } from '../observability/admin-command.js';
import { REPLICATED_USAGE } from './usage.js';

const REPLICATED_PATH = '/v1/replicated-topics';

const REPLICATED_OPTIONS: OptionSpec = { values: ['admin'], lists: ['link'] };

function replicatedPath(pattern: string): string {
  return `${REPLICATED_PATH}/${encodeURIComponent(pattern)}`;
}

/** Runs `ledgerline replicated ...`; returns the exit status. */
export async function replicatedCommand(args: string[], out: Writer = console.log, err: Writer = console.error): Promise<number> {
  return run('replicated', REPLICATED_USAGE, err, async () => {
    const p = parse(args, REPLICATED_OPTIONS);
    const sub = p.positional.shift();
    const admin = new AdminClient(adminBase(p));
    const show = pretty(out);
    switch (sub) {
      case 'list':
        onlyOptions(p, [], 'replicated list');
        noMoreArguments(p.positional);
        show(await admin.request('GET', REPLICATED_PATH));
        return 0;
      case 'put': {
        const pattern = needName(p.positional, 'put', 'a topic or prefix*');
        const links = p.lists.get('link');
        if (links === undefined) throw new UsageError('put needs --link LINK (one for each other cluster)');
        show(await admin.request('PUT', replicatedPath(pattern), { links }));
        return 0;
      }
      case 'delete':
        onlyOptions(p, [], 'replicated delete');
        await admin.request('DELETE', replicatedPath(needName(p.positional, 'delete', 'a topic or prefix*')));
        return 0;
      default:
        throw unknownSubcommand(sub);
    }
  });
}
