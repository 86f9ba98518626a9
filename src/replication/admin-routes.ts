/**
 * Cluster links and mirror topics on the admin HTTP endpoint (src/observability/admin-http.ts); `ledgerline links`,
 * `ledgerline mirrors` and `ledgerline migrate` (command.ts) are its clients:
 *
 *   GET    /v1/links                      200 [link, ...] (SASL passwords shown as null)
 *   GET    /v1/links/<name>               200 {link, sourceError, syncError, lastGroupSync, partitions: [...]}
 *   PUT    /v1/links/<name>               body: the link's settings (model.ts); 200 the link as stored, 400 {"error"}
 *   DELETE /v1/links/<name>               204; 404 none; 409 mirrors still read from it
 *   GET    /v1/mirrors                    200 [mirror + its partitions copied by this broker, with lag, ...]
 *   GET    /v1/mirrors/<topic>            200 mirror + partitions; 404
 *   POST   /v1/mirrors                    body {"topic", "link", "sourceTopic"?}: 201 the mirror; 400, 404, 409
 *   POST   /v1/mirrors/<topic>/promote    200 the mirror (state promoting, then promoted); 404, 409
 *   POST   /v1/mirrors/<topic>/failover   200 the mirror (state failing-over, then failed-over); 404, 409
 *   GET    /v1/replicated-topics          200 [{pattern, links, createdAtMs}, ...]: active-active selections
 *   PUT    /v1/replicated-topics/<pattern>  body {"links": [...]}: topics `pattern` (a name, or a prefix ending in *)
 *                                        selects are copied from every link named; 200; 400; 404 for an unknown link
 *   DELETE /v1/replicated-topics/<pattern>  204; 404
 *
 * Partition figures are those of the broker answering: in a shared cluster each broker copies the partitions it
 * leads.
 */
import type { AdminResponse, AdminRoute } from '../observability/admin-http.js';
import { ClusterApiError } from '../cluster/errors.js';
import type { ClusterLink } from './model.js';
import { ReplicationAdminError } from './mirrors.js';
import type { Replication } from './replication.js';

export const LINKS_PATH = '/v1/links';
export const MIRRORS_PATH = '/v1/mirrors';
export const REPLICATED_PATH = '/v1/replicated-topics';

const LINK_FIELDS = new Set(['name', 'bootstrapServers', 'securityProtocol', 'sasl', 'tls', 'syncGroupOffsets', 'groupFilters', 'autoMirrorTopics', 'offsetSyncIntervalMs', 'metadataSyncIntervalMs']);

function error(status: number, message: string): AdminResponse {
  return { status, json: { error: message } };
}

/** The path's segments after `prefix`, decoded; undefined when one does not decode. */
function segmentsAfter(prefix: string, path: string): string[] | undefined {
  const rest = path.slice(prefix.length).replace(/^\/+|\/+$/g, '');
  if (rest === '') return [];
  try {
    return rest.split('/').map(decodeURIComponent);
  } catch {
    return undefined;
  }
}

function object(body: unknown): Record<string, unknown> | string {
  if (body === undefined) return 'this needs a JSON body';
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object';
  return body as Record<string, unknown>;
}

async function answer(fn: () => Promise<AdminResponse>): Promise<AdminResponse> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ReplicationAdminError) return error(err.status, err.message);
    if (err instanceof ClusterApiError) return error(400, err.message);
    throw err;
  }
}

export function replicationAdminRoutes(replication: Replication): ReadonlyMap<string, AdminRoute> {
  const links: AdminRoute = {
    methods: (path) => ((segmentsAfter(LINKS_PATH, path) ?? []).length === 0 ? ['GET'] : ['GET', 'PUT', 'DELETE']),
    handle: (method, path, body) =>
      answer(async () => {
        const segs = segmentsAfter(LINKS_PATH, path);
        if (segs === undefined || segs.length > 1) return error(404, `not found: ${path} (try ${LINKS_PATH} or ${LINKS_PATH}/<link>)`);
        if (segs.length === 0) return { status: 200, json: replication.links.list().map((l) => replication.links.describe(l.name)) };
        const name = segs[0]!;
        switch (method) {
          case 'GET': {
            const s = replication.linkStatus(name);
            return s ? { status: 200, json: s } : error(404, `cluster link ${name} does not exist`);
          }
          case 'PUT': {
            const b = object(body);
            if (typeof b === 'string') return error(400, b);
            const unknown = Object.keys(b).filter((k) => !LINK_FIELDS.has(k));
            if (unknown.length > 0) return error(400, `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: a link has ${[...LINK_FIELDS].join(', ')}`);
            if (b.name !== undefined && b.name !== name) return error(400, `the body names link ${JSON.stringify(b.name)}, the path ${JSON.stringify(name)}`);
            const link = await replication.putLink({ ...(b as Partial<ClusterLink>), name });
            return { status: 200, json: replication.links.describe(link.name) };
          }
          default:
            return (await replication.deleteLink(name)) ? { status: 204 } : error(404, `cluster link ${name} does not exist`);
        }
      }),
  };
  const mirrorView = (topic: string): Record<string, unknown> | undefined => {
    const m = replication.mirrors.get(topic);
    if (!m) return undefined;
    const partitions = replication.linkStatus(m.link)?.partitions.filter((p) => p.topic === topic) ?? [];
    return { ...m, partitions };
  };
  const mirrors: AdminRoute = {
    methods: (path) => {
      const segs = segmentsAfter(MIRRORS_PATH, path) ?? [];
      return segs.length === 0 ? ['GET', 'POST'] : segs.length === 1 ? ['GET'] : ['POST'];
    },
    handle: (method, path, body) =>
      answer(async () => {
        const segs = segmentsAfter(MIRRORS_PATH, path);
        if (segs === undefined || segs.length > 2 || (segs.length === 2 && segs[1] !== 'promote' && segs[1] !== 'failover')) {
          return error(404, `not found: ${path} (try ${MIRRORS_PATH}, ${MIRRORS_PATH}/<topic>, ${MIRRORS_PATH}/<topic>/promote or /failover)`);
        }
        if (segs.length === 0) {
          if (method === 'GET') return { status: 200, json: replication.mirrors.list().map((m) => mirrorView(m.topic)) };
          const b = object(body);
          if (typeof b === 'string') return error(400, b);
          if (typeof b.topic !== 'string' || typeof b.link !== 'string' || (b.sourceTopic !== undefined && typeof b.sourceTopic !== 'string')) {
            return error(400, 'a mirror needs {"topic": "...", "link": "...", "sourceTopic": "..." (default: the topic)}');
          }
          const m = await replication.createMirror({ topic: b.topic, link: b.link, ...(b.sourceTopic !== undefined ? { sourceTopic: b.sourceTopic as string } : {}) });
          return { status: 201, json: m };
        }
        const topic = segs[0]!;
        if (segs.length === 1) {
          const v = mirrorView(topic);
          return v ? { status: 200, json: v } : error(404, `topic ${topic} is not a mirror topic`);
        }
        const m = segs[1] === 'promote' ? await replication.promote(topic) : await replication.failover(topic);
        return { status: 200, json: m };
      }),
  };
  const replicated: AdminRoute = {
    methods: (path) => ((segmentsAfter(REPLICATED_PATH, path) ?? []).length === 0 ? ['GET'] : ['PUT', 'DELETE']),
    handle: (method, path, body) =>
      answer(async () => {
        const segs = segmentsAfter(REPLICATED_PATH, path);
        if (segs === undefined || segs.length > 1) return error(404, `not found: ${path} (try ${REPLICATED_PATH} or ${REPLICATED_PATH}/<topic or prefix*>)`);
        if (segs.length === 0) return { status: 200, json: replication.replicated.list() };
        const pattern = segs[0]!;
        if (method === 'DELETE') return (await replication.deleteReplicated(pattern)) ? { status: 204 } : error(404, `no active-active selection ${pattern}`);
        const b = object(body);
        if (typeof b === 'string') return error(400, b);
        if (!Array.isArray(b.links)) return error(400, 'the body must be {"links": ["<link to each other cluster>", ...]}');
        return { status: 200, json: await replication.putReplicated(pattern, b.links as string[]) };
      }),
  };
  return new Map([
    [LINKS_PATH, links],
    [MIRRORS_PATH, mirrors],
    [REPLICATED_PATH, replicated],
  ]);
}
