/** The ledger store: the contract (types.ts), its errors, and the embedded local implementation. */
export type * from './types.js';
export * from './errors.js';
export { LocalLedgerStore, openMemoryLedgerStore, type LocalLedgerStoreOptions, type LocalLedgerStoreStats } from './local-store.js';
export { nodeLedgerFs, type LedgerFs, type LedgerFile, type LedgerFsLock, type LedgerFsOpenMode } from './fs.js';
export { MemoryLedgerFs } from './memory-fs.js';
export { FaultInjectingLedgerFs } from './fault-fs.js';
