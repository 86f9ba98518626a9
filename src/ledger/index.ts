/** The ledger store: the contract (types.ts), its errors, the embedded local implementation, and the factory. */
export type * from './types.js';
export * from './errors.js';
export {
  DEFAULT_LEDGER_STORE,
  LEDGER_STORE_CONFIG,
  LEDGER_STORE_KINDS,
  ledgerStoreKind,
  ledgerStoreReads,
  ledgerStoreSpace,
  openLedgerStore,
  type LedgerStoreKind,
  type LedgerStoreReads,
  type LedgerStoreSpace,
  type OpenLedgerStoreOptions,
} from './open-store.js';
export { LocalLedgerStore, openMemoryLedgerStore, type LocalLedgerStoreOptions, type LocalLedgerStoreStats } from './local-store.js';
export { nodeLedgerFs, type LedgerFs, type LedgerFile, type LedgerFsLock, type LedgerFsOpenMode } from './fs.js';
export { MemoryLedgerFs } from './memory-fs.js';
export { FaultInjectingLedgerFs } from './fault-fs.js';
