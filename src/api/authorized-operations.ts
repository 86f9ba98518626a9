/**
 * KIP-430 authorized-operation fields: the principal's operations on a resource come from `ctx.access`
 * (src/api/access.ts); a field not asked for carries Kafka's sentinel.
 */

/** Kafka's sentinel for "not requested" (Integer.MIN_VALUE). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
