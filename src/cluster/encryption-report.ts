/**
 * What the admin endpoint's /v1/encryption shows: the topics whose `ledgerline.encryption.required` is
 * true (set on the topic, or inherited from the broker default `ledgerline.log.encryption.required`), and
 * the broker default itself. Only names and configs: the broker holds no end-to-end key.
 */
import { ENCRYPTION_REQUIRED_CONFIG } from '../crypto/check.js';
import type { TopicManager } from './topics.js';

export interface EncryptionReport {
  readonly brokerDefault: boolean;
  readonly topics: readonly { readonly name: string; readonly source: 'topic' | 'broker default' }[];
}

export function encryptionReport(topics: TopicManager): EncryptionReport {
  const out: { name: string; source: 'topic' | 'broker default' }[] = [];
  const brokerDefault = topics.defaultConfigValue(ENCRYPTION_REQUIRED_CONFIG) === 'true';
  for (const t of topics.list()) {
    if (t.internal) continue;
    const required = topics.configValue(t, ENCRYPTION_REQUIRED_CONFIG) === 'true';
    const own = Object.hasOwn(t.configs, ENCRYPTION_REQUIRED_CONFIG);
    if (required) out.push({ name: t.name, source: own ? 'topic' : 'broker default' });
  }
  out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { brokerDefault, topics: out };
}
