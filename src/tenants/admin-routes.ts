/**
 * The tenants' admin API on the admin HTTP endpoint (src/observability/admin-http.ts), as Pulsar's
 * /admin/v2/tenants; `ledgerline tenants` (tenants-command.ts) is its client:
 *
 *   GET    /v1/tenants          200 [tenant, ...] by name
 *   GET    /v1/tenants/<name>   200 tenant, 404 {"error"} when there is none
 *   PUT    /v1/tenants/<name>   body {principals, policies, namespaces}: creates or replaces the tenant named by
 *                               the path; 200 with the tenant as stored, 400 {"error"} for one the store refuses
 *   DELETE /v1/tenants/<name>   204, 404 {"error"} when there was none
 *
 * A tenant is {"name", "principals": ["User:alice"], "policies": {"retention.ms": "..."},
 * "namespaces": {"orders": {"policies": {...}}}} (model.ts).
 */
import type { AdminResponse, AdminRoute } from '../observability/admin-http.js';
import type { Tenant } from './model.js';
import { TenantError, type TenantStore } from './tenant-store.js';

export const TENANTS_PATH = '/v1/tenants';

const BODY_FIELDS = new Set(['name', 'principals', 'policies', 'namespaces']);

function error(status: number, message: string): AdminResponse {
  return { status, json: { error: message } };
}

/** The tenant name a path under /v1/tenants/ names, null for the list, undefined for no tenant path at all. */
function nameIn(path: string): string | null | undefined {
  if (path === TENANTS_PATH || path === `${TENANTS_PATH}/`) return null;
  const rest = path.slice(TENANTS_PATH.length + 1);
  if (rest === '' || rest.includes('/')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}

/** The tenant a PUT body describes, or why it describes none. */
function tenantFrom(name: string, body: unknown): Tenant | string {
  if (body === undefined) return 'a tenant needs a body: {"principals": [...], "policies": {...}, "namespaces": {...}}';
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return 'the body must be a JSON object';
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !BODY_FIELDS.has(k));
  if (unknown.length > 0) return `unknown field${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}: a tenant has principals, policies, namespaces`;
  if (b.name !== undefined && b.name !== name) return `the body names tenant ${JSON.stringify(b.name)}, the path ${JSON.stringify(name)}`;
  // Shapes are checked by the store (model.ts invalidTenant); missing fields are empty.
  return {
    name,
    principals: (b.principals ?? []) as Tenant['principals'],
    policies: (b.policies ?? {}) as Tenant['policies'],
    namespaces: (b.namespaces ?? {}) as Tenant['namespaces'],
  };
}

/** The admin HTTP route of the tenants in `tenants`, for AdminHttpOptions.routes. */
export function tenantAdminRoutes(tenants: TenantStore): ReadonlyMap<string, AdminRoute> {
  const route: AdminRoute = {
    methods: (path) => (nameIn(path) === null ? ['GET'] : ['GET', 'PUT', 'DELETE']),
    handle: async (method, path, body) => {
      const name = nameIn(path);
      if (name === undefined) return error(404, `not found: ${path} (try ${TENANTS_PATH} or ${TENANTS_PATH}/<tenant>)`);
      if (name === null) return { status: 200, json: tenants.list() };
      switch (method) {
        case 'GET': {
          const t = tenants.get(name);
          return t ? { status: 200, json: t } : error(404, `tenant ${name} does not exist`);
        }
        case 'PUT': {
          const t = tenantFrom(name, body);
          if (typeof t === 'string') return error(400, t);
          try {
            await tenants.put(t);
          } catch (err) {
            if (err instanceof TenantError) return error(400, err.message);
            throw err;
          }
          return { status: 200, json: tenants.get(name) ?? t };
        }
        case 'DELETE':
          return (await tenants.delete(name)) ? { status: 204 } : error(404, `tenant ${name} does not exist`);
        default:
          return error(405, `${method} is not served at ${path}`);
      }
    },
  };
  return new Map([[TENANTS_PATH, route]]);
}
