/**
 * What the `ledgerline` commands that talk to a broker's admin HTTP endpoint (observability/admin-http.ts) share:
 * `ledgerline tenants` (src/tenants/tenants-command.ts), `ledgerline links|mirrors|migrate` and
 * `ledgerline replicated` (src/replication/). Their options, the client of the endpoint, and the exit statuses:
 * 0 done, 1 refused or not found (the broker's message on stderr) or the endpoint unreachable, 2 a usage error
 * (with the command's usage).
 */

/** Where the commands look for the admin endpoint without --admin. */
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:9644';

/** How long a request to the admin endpoint may take. */
const REQUEST_TIMEOUT_MS = 30_000;

export type Writer = (line: string) => void;

export class UsageError extends Error {}

/** A request the broker answered with an error, or could not be made (`unreachable`: worth retrying). */
export class RequestError extends Error {
  constructor(
    message: string,
    readonly unreachable = false,
    /** The request was given up at its timeout (a kind of unreachable). */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

// ---- options ------------------------------------------------------------------------------------------

/** The options a command knows. */
export interface OptionSpec {
  /** Options with a value, given at most once. */
  readonly values: readonly string[];
  /** Options with a value, given any number of times. */
  readonly lists?: readonly string[];
  /** Options without a value. */
  readonly flags?: readonly string[];
}

export interface Parsed {
  readonly positional: string[];
  readonly values: Map<string, string>;
  readonly lists: Map<string, string[]>;
  readonly flags: Set<string>;
  /** The options given, in order, each once. */
  readonly given: string[];
}

/** What `scanArgs` finds in a command line, in order. */
export interface ArgVisitor {
  positional(arg: string): void;
  /**
   * `--name` or `--name=inline`. `value()` is the option's value: the inline one, else the next argument, which it
   * consumes (undefined when there is none, or when the next argument is itself an option).
   */
  option(name: string, inline: string | undefined, value: () => string | undefined): void;
}

/** Options may come anywhere, as `--name value` or `--name=value`; a value that is the next option is none. */
export function scanArgs(args: readonly string[], visit: ArgVisitor): void {
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (!a.startsWith('--')) {
      visit.positional(a);
      continue;
    }
    const eq = a.indexOf('=');
    const inline = eq >= 0 ? a.slice(eq + 1) : undefined;
    visit.option(a.slice(2, eq < 0 ? undefined : eq), inline, () => (inline !== undefined ? inline : args[i + 1]?.startsWith('--') ? undefined : args[++i]));
  }
}

/** The options of `spec`, wherever they come (scanArgs). */
export function parse(args: string[], spec: OptionSpec): Parsed {
  const p: Parsed = { positional: [], values: new Map(), lists: new Map(), flags: new Set(), given: [] };
  scanArgs(args, {
    positional: (a) => p.positional.push(a),
    option(name, inline, next) {
      if (!p.given.includes(name)) p.given.push(name);
      if (spec.flags?.includes(name)) {
        if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
        p.flags.add(name);
        return;
      }
      const isList = spec.lists?.includes(name) ?? false;
      if (!isList && !spec.values.includes(name)) throw new UsageError(`unknown option --${name}`);
      const value = next();
      if (value === undefined) throw new UsageError(`--${name} needs a value`);
      if (isList) p.lists.set(name, [...(p.lists.get(name) ?? []), value]);
      else if (p.values.has(name)) throw new UsageError(`--${name} is given twice`);
      else p.values.set(name, value);
    },
  });
  return p;
}

/** Refuses the options (besides --admin) that `where` does not take. */
export function onlyOptions(p: Parsed, allowed: readonly string[], where: string): void {
  const extra = p.given.find((o) => o !== 'admin' && !allowed.includes(o));
  if (extra !== undefined) throw new UsageError(`--${extra} is not an option of ${where}`);
}

export function noMoreArguments(positional: string[]): void {
  if (positional.length > 0) throw new UsageError(`unexpected argument ${JSON.stringify(positional[0])}`);
}

export function needName(positional: string[], sub: string, what: string): string {
  const [name, ...extra] = positional;
  if (name === undefined) throw new UsageError(`${sub} needs ${what}`);
  noMoreArguments(extra);
  return name;
}

// ---- the admin endpoint -----------------------------------------------------------------------------------

/** `--admin` (default DEFAULT_ADMIN_URL) as a base URL without a trailing slash; UsageError for anything else. */
export function adminBase(p: Parsed): string {
  return adminUrl(p.values.get('admin') ?? DEFAULT_ADMIN_URL);
}

export function adminUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--admin must be a URL such as ${DEFAULT_ADMIN_URL}, got ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`--admin must be an http:// URL, got ${JSON.stringify(value)}`);
  return url.href.replace(/\/+$/, '');
}

interface RequestOptions {
  /** At most REQUEST_TIMEOUT_MS. */
  readonly timeoutMs?: number;
  /** Ends the request early (Ctrl-C). */
  readonly signal?: AbortSignal;
}

/** The admin endpoint: each request answers the parsed JSON (undefined for none), or throws RequestError. */
export class AdminClient {
  constructor(readonly base: string) {}

  async request(method: string, path: string, body?: unknown, opts: RequestOptions = {}): Promise<unknown> {
    const timeoutMs = Math.max(1, Math.min(REQUEST_TIMEOUT_MS, opts.timeoutMs ?? REQUEST_TIMEOUT_MS));
    const timeout = AbortSignal.timeout(timeoutMs);
    let res: Response;
    let text: string;
    try {
      res = await fetch(`${this.base}${path}`, {
        method,
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
      });
      text = await res.text();
    } catch (err) {
      if (timeout.aborted) throw new RequestError(`the admin endpoint ${this.base} did not answer ${method} ${path} within ${timeoutMs} ms`, true, true);
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new RequestError(`cannot reach the admin endpoint ${this.base}: ${cause ?? (err as Error).message}`, true);
    }
    return answer(method, path, res.status, text);
  }
}

function answer(method: string, path: string, status: number, text: string): unknown {
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (status < 200 || status > 299) {
    const message = (json as { error?: unknown } | undefined)?.error;
    throw new RequestError(typeof message === 'string' ? message : `${method} ${path}: HTTP ${status}${text ? `: ${text.trim()}` : ''}`);
  }
  return json;
}

// ---- running a command ----------------------------------------------------------------------------------

/** Runs a command's body; usage errors exit 2 with the usage, the others 1. */
export async function run(command: string, usage: string, err: Writer, body: () => Promise<number>): Promise<number> {
  try {
    return await body();
  } catch (e) {
    if (e instanceof UsageError) {
      err(`ledgerline ${command}: ${e.message}\n${usage}`);
      return 2;
    }
    err(`ledgerline ${command}: ${(e as Error).message}`);
    return 1;
  }
}

export function pretty(out: Writer): (json: unknown) => void {
  return (json) => out(JSON.stringify(json, null, 2));
}

export function unknownSubcommand(sub: string | undefined): UsageError {
  return new UsageError(sub === undefined ? 'a subcommand is needed' : `unknown subcommand ${JSON.stringify(sub)}`);
}
