/**
 * The tests' throwaway PKI: compat/lib/pki.ts, shared with the benchmarks (which must not import from test/),
 * under the name the tests know it by.
 */
export { Pki as TestPki } from '../../compat/lib/pki.js';
export type { IssuedCertificate, IssueOptions } from '../../compat/lib/pki.js';
