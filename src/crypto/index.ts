/**
 * `ledgerline/crypto`: end-to-end encryption for Kafka clients (README.md here is the specification).
 */
export { RecordEncryptor, MAX_RECORDS_PER_DATA_KEY, type EncryptorOptions } from './encryptor.js';
export { RecordDecryptor, type DecryptorOptions, type DecryptResult, type FailureAction } from './decryptor.js';
export { sealRecord, openRecord, envelopeOf, pseudonymOf, E2eError, type E2eRecord, type E2eHeader, type SealParams } from './record.js';
export { decodeEnvelope, encodeEnvelope, encodeHead, ENVELOPE_HEADER, ENVELOPE_VERSION, EnvelopeFormatError, WrapAlgorithm, Section, type Envelope, type WrappedKey } from './envelope.js';
export { wrapDataKey, unwrapDataKey } from './wrap.js';
export { PemDirectoryKeyReader, EnvKeyReader, CompositeKeyReader, generateKey, rotateKey, keyVersions, newestVersion, type KeyReader, type KeyType } from './keys.js';
export { encryptingKafkajsProducer, decryptingEachMessage, decryptingEachBatch, decryptKafkajsMessage, headersFromKafkajs, headersToKafkajs, type E2eStatus } from './kafkajs.js';
export { encryptingPlatformaticProducer, decryptPlatformaticMessage, decryptedPlatformaticMessages } from './platformatic.js';
export { ENCRYPTION_REQUIRED_CONFIG } from './check.js';
