/**
 * What the group API handlers take from a request's context: the broker's group coordinator and the
 * client's identity as Kafka's coordinator records it (client id, and the host as `/address`).
 */
import type { GroupCoordinator } from './coordinator.js';
import type { RequestInfo } from './context.js';

/** The parts of an API handler's RequestContext (src/api/handler.ts) used here. */
export interface GroupRequestContext {
  readonly services: { readonly groups?: GroupCoordinator };
  readonly header: { readonly clientId: string | null };
  readonly apiVersion: number;
  readonly connection: { readonly remoteAddress: string };
}

/** The broker's coordinator (`services.groups`), or null while it is not active (starting or stopping). */
export function groupCoordinatorOf(ctx: GroupRequestContext): GroupCoordinator | null {
  const c = ctx.services.groups;
  return c && c.isActive ? c : null;
}

/** Kafka's clientHost: the peer address without its port, prefixed with '/' (InetAddress.toString()). */
export function clientHostOf(remoteAddress: string): string {
  const host = remoteAddress.replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
  return `/${host}`;
}

export function requestInfoOf(ctx: GroupRequestContext): RequestInfo {
  return { clientId: ctx.header.clientId ?? '', clientHost: clientHostOf(ctx.connection.remoteAddress), apiVersion: ctx.apiVersion };
}

/**
 * Waits for a parked response (JoinGroup, SyncGroup) unless the connection closes first; then answers with
 * `closed` at once (the connection drops it), so nothing waits on a client that is gone.
 */
export function unlessClosed<T>(response: Promise<T>, signal: AbortSignal, closed: () => T): Promise<T> {
  if (signal.aborted) return Promise.resolve(closed());
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => resolve(closed());
    signal.addEventListener('abort', onAbort, { once: true });
    response.then(
      (r) => {
        signal.removeEventListener('abort', onAbort);
        resolve(r);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
