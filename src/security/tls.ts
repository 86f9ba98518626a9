/**
 * The TLS side of Kafka's SSL and SASL_SSL listeners: Kafka's `ssl.*` configs read into Node's TLS options, the
 * client certificate checked as Java's TLS stack checks it, and key and trust stores reloaded without a restart.
 * Matches DefaultSslEngineFactory (createKeystore/createTruststore, PemStore of KIP-651), SslClientAuth, and
 * SslFactory's checks on a dynamic keystore update (KIP-226; ssl.allow.dn.changes / ssl.allow.san.changes).
 *
 * | config                                  | default           | read as                                                 |
 * |-----------------------------------------|-------------------|---------------------------------------------------------|
 * | ssl.keystore.type                       | JKS               | PEM, PKCS12; JKS/JCEKS files refused (a PKCS12 file     |
 * |                                         |                   | under type JKS is read, as Java's keystore.type.compat) |
 * | ssl.keystore.location                   | none              | PEM: one file, private key + certificate chain          |
 * | ssl.keystore.password                   | none              | PKCS12 password (refused with PEM, as Kafka)            |
 * | ssl.key.password                        | none              | password of an encrypted PEM key (PKCS12: must equal    |
 * |                                         |                   | ssl.keystore.password when set)                         |
 * | ssl.keystore.key                        | none              | inline PEM private key (with the chain below, PEM only) |
 * | ssl.keystore.certificate.chain          | none              | inline PEM certificate chain, leaf first                |
 * | ssl.truststore.type                     | JKS               | PEM only (JKS and PKCS12 trust stores refused)          |
 * | ssl.truststore.location                 | none              | PEM file of trusted certificates                        |
 * | ssl.truststore.password                 | none              | refused with PEM, as Kafka                              |
 * | ssl.truststore.certificates             | none              | inline PEM trusted certificates                         |
 * | ssl.client.auth                         | none              | none / requested / required (case-insensitive)          |
 * | ssl.enabled.protocols                   | TLSv1.2,TLSv1.3   | minVersion..maxVersion (a contiguous range)             |
 * | ssl.protocol                            | TLSv1.3           | checked only: on a server JSSE's SSLContext protocol    |
 * |                                         |                   | does not bound the versions, ssl.enabled.protocols does |
 * | ssl.cipher.suites                       | none (Node's)     | IANA names → OpenSSL names (TLS 1.2), TLS 1.3 suites    |
 * | ssl.allow.dn.changes                    | false             | a reload may change the certificate's subject           |
 * | ssl.allow.san.changes                   | false             | a reload may drop subject alternative names             |
 *
 * Not read (Java-specific, nothing to map to): ssl.provider, ssl.keymanager.algorithm, ssl.trustmanager.algorithm,
 * ssl.secure.random.implementation, ssl.engine.factory.class, ssl.endpoint.identification.algorithm (client side).
 *
 * Where Node cannot do what Java does, the config is refused with a message saying what to do instead:
 *   - JKS / JCEKS key and trust stores: Node has no reader. Convert to PKCS12 (`keytool -importkeystore
 *     -srckeystore ks.jks -destkeystore ks.p12 -deststoretype PKCS12`) or PEM.
 *   - PKCS12 trust stores: Node reads PKCS12 only as a key and certificate (its `pfx`), never as trusted
 *     certificates. Export them to PEM (`openssl pkcs12 -in ts.p12 -nokeys -out ts.pem`).
 *   - A PKCS12 key store with ssl.client.auth requested or required: Node's `pfx` loader also adds the CA
 *     certificates inside the PKCS12 to the store client certificates are verified against, so clients signed by
 *     the key store's chain would be trusted although the trust store does not name it (Kafka trusts only the
 *     trust store). Use a PEM key store there.
 *   - A PKCS12 key password different from its store password: Node opens a PKCS12 with one password.
 *   - SSLv3 in ssl.enabled.protocols (SSLv2Hello is ignored: OpenSSL never reads SSLv2 hellos). TLSv1 and TLSv1.1
 *     are passed on, and as on current JDKs (jdk.tls.disabledAlgorithms) no handshake can use them: OpenSSL 3
 *     refuses them at its default security level.
 *   - Cipher suites OpenSSL does not have (Java's static-ECDH, Kerberos, export and anonymous suites).
 * Node also accepts more than Kafka's PEM reader (PKCS#1 and SEC1 keys, encrypted legacy PEM), which is harmless.
 *
 * Differences in behaviour that remain:
 *   - Without a trust store, client certificates are verified against Node's bundled Mozilla roots, as Java's
 *     against its cacerts: with ssl.client.auth set, give a trust store.
 *   - ssl.client.auth=requested: Java fails the handshake of a client that presents a certificate the trust store
 *     does not verify (alert certificate_unknown; only a client with no certificate gets through, as ANONYMOUS).
 *     Node completes the handshake and reports the failure, so `verifiedClientCertificate` throws for such a
 *     connection and the caller closes it.
 *   - The dynamic-update check compares subjects as X500Principal.getName() texts ignoring case, where Kafka also
 *     accepts equal canonical forms (which differ from getName() only in case, repeated spaces and AVA order).
 *
 * Certificates are reloaded by watching the files read (tls-reloader.ts, TlsContextReloader): each file is polled (fs.watchFile,
 * which sees a file replaced by rename too), and once the changes settle the stores are read again, checked as
 * Kafka checks a dynamic keystore update, and installed with server.setSecureContext: new connections get the new
 * certificate, established ones keep theirs, and sessions of the old context are not resumed (new ticket keys;
 * Node keeps no server-side session cache). A reload that fails leaves the current context and is logged.
 *
 * Messages name the config and the file; they never hold passwords or key material.
 */
import { createPrivateKey, type KeyObject, X509Certificate } from 'node:crypto';
import { readFileSync, statSync, type Stats } from 'node:fs';
import tls from 'node:tls';
import { ErrorCode } from '../../protocol/error-codes.js';
import { LedgerlineError } from '../../protocol/errors.js';
import type { Logger } from '../observability/logger.js';
import { distinguishedName } from './distinguished-name.js';

// ---------------------------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------------------------

/** An `ssl.*` config Kafka would refuse or Node cannot honour (Kafka's ConfigException: INVALID_CONFIG). */
export class TlsConfigError extends LedgerlineError {
  /** The config at fault. */
  readonly config: string;
  /** The file it names, when it names one. */
  readonly file: string | null;
  constructor(config: string, message: string, options: { file?: string | null; cause?: unknown } = {}) {
    super('LL_ERR_CONFIG', ErrorCode.INVALID_CONFIG, `${config}${options.file ? ` (${options.file})` : ''}: ${message}`, { cause: options.cause });
    this.config = config;
    this.file = options.file ?? null;
  }
}

/**
 * A client certificate the trust store does not verify, on a listener with ssl.client.auth=requested (with
 * `required` the handshake itself fails). Java's TLS stack fails such a handshake, Kafka's SslTransportLayer
 * closes the connection; there is no response to carry an error code.
 */
export class TlsAuthenticationError extends LedgerlineError {
  constructor(message: string) {
    super('LL_ERR_SSL_AUTHENTICATION', ErrorCode.UNKNOWN_SERVER_ERROR, message);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------------------------

export type SslClientAuth = 'none' | 'requested' | 'required';

export interface TlsListenerSettings {
  /**
   * For tls.createServer (with requestCert and rejectUnauthorized) and server.setSecureContext. Holds the key and
   * its passphrase: never log it.
   */
  readonly secureContext: tls.SecureContextOptions;
  readonly requestCert: boolean;
  readonly rejectUnauthorized: boolean;
  readonly clientAuth: SslClientAuth;
  /** The files read (key store, trust store), which a reload reads again. */
  readonly files: readonly string[];
  /** The listener's certificate (the chain's leaf). */
  readonly certificate: X509Certificate;
  /** ssl.allow.dn.changes: a reload may change the certificate's subject. */
  readonly allowDnChanges: boolean;
  /** ssl.allow.san.changes: a reload may drop subject alternative names. */
  readonly allowSanChanges: boolean;
}

/** Key and trust store files larger than this are refused (a big trust store of CA bundles is a few hundred KiB). */
const MAX_STORE_BYTES = 16 * 1024 * 1024;

const DEFAULT_ENABLED_PROTOCOLS = 'TLSv1.2,TLSv1.3';
const TLS_VERSIONS: readonly tls.SecureVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];
/** SSLContext.getInstance names JSSE knows for TLS (ssl.protocol); case-insensitive, as provider lookups are. */
const SSL_CONTEXT_PROTOCOLS = new Set(['tls', 'tlsv1', 'tlsv1.1', 'tlsv1.2', 'tlsv1.3', 'ssl', 'sslv3']);

/** TLS 1.3 suites: the same names in IANA's registry, Java and OpenSSL. */
const TLS13_SUITES: ReadonlySet<string> = new Set(['TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256', 'TLS_AES_128_CCM_SHA256', 'TLS_AES_128_CCM_8_SHA256']);

/**
 * IANA (Java) names of the TLS 1.2 suites OpenSSL 3 has, with their OpenSSL names (`openssl ciphers -stdname`):
 * ECDHE, DHE and RSA key exchange with AES-GCM, AES-CCM, ChaCha20-Poly1305 and AES-CBC.
 */
export const OPENSSL_CIPHER_NAMES: ReadonlyMap<string, string> = new Map([
  ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384', 'ECDHE-ECDSA-AES256-GCM-SHA384'],
  ['TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'ECDHE-RSA-AES256-GCM-SHA384'],
  ['TLS_DHE_DSS_WITH_AES_256_GCM_SHA384', 'DHE-DSS-AES256-GCM-SHA384'],
  ['TLS_DHE_RSA_WITH_AES_256_GCM_SHA384', 'DHE-RSA-AES256-GCM-SHA384'],
  ['TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-ECDSA-CHACHA20-POLY1305'],
  ['TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'ECDHE-RSA-CHACHA20-POLY1305'],
  ['TLS_DHE_RSA_WITH_CHACHA20_POLY1305_SHA256', 'DHE-RSA-CHACHA20-POLY1305'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CCM_8', 'ECDHE-ECDSA-AES256-CCM8'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CCM', 'ECDHE-ECDSA-AES256-CCM'],
  ['TLS_DHE_RSA_WITH_AES_256_CCM_8', 'DHE-RSA-AES256-CCM8'],
  ['TLS_DHE_RSA_WITH_AES_256_CCM', 'DHE-RSA-AES256-CCM'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'ECDHE-ECDSA-AES128-GCM-SHA256'],
  ['TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'ECDHE-RSA-AES128-GCM-SHA256'],
  ['TLS_DHE_DSS_WITH_AES_128_GCM_SHA256', 'DHE-DSS-AES128-GCM-SHA256'],
  ['TLS_DHE_RSA_WITH_AES_128_GCM_SHA256', 'DHE-RSA-AES128-GCM-SHA256'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CCM_8', 'ECDHE-ECDSA-AES128-CCM8'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CCM', 'ECDHE-ECDSA-AES128-CCM'],
  ['TLS_DHE_RSA_WITH_AES_128_CCM_8', 'DHE-RSA-AES128-CCM8'],
  ['TLS_DHE_RSA_WITH_AES_128_CCM', 'DHE-RSA-AES128-CCM'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384', 'ECDHE-ECDSA-AES256-SHA384'],
  ['TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384', 'ECDHE-RSA-AES256-SHA384'],
  ['TLS_DHE_RSA_WITH_AES_256_CBC_SHA256', 'DHE-RSA-AES256-SHA256'],
  ['TLS_DHE_DSS_WITH_AES_256_CBC_SHA256', 'DHE-DSS-AES256-SHA256'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256', 'ECDHE-ECDSA-AES128-SHA256'],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256', 'ECDHE-RSA-AES128-SHA256'],
  ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA256', 'DHE-RSA-AES128-SHA256'],
  ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA256', 'DHE-DSS-AES128-SHA256'],
  ['TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA', 'ECDHE-ECDSA-AES256-SHA'],
  ['TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA', 'ECDHE-RSA-AES256-SHA'],
  ['TLS_DHE_RSA_WITH_AES_256_CBC_SHA', 'DHE-RSA-AES256-SHA'],
  ['TLS_DHE_DSS_WITH_AES_256_CBC_SHA', 'DHE-DSS-AES256-SHA'],
  ['TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA', 'ECDHE-ECDSA-AES128-SHA'],
  ['TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA', 'ECDHE-RSA-AES128-SHA'],
  ['TLS_DHE_RSA_WITH_AES_128_CBC_SHA', 'DHE-RSA-AES128-SHA'],
  ['TLS_DHE_DSS_WITH_AES_128_CBC_SHA', 'DHE-DSS-AES128-SHA'],
  ['TLS_RSA_WITH_AES_256_GCM_SHA384', 'AES256-GCM-SHA384'],
  ['TLS_RSA_WITH_AES_256_CCM_8', 'AES256-CCM8'],
  ['TLS_RSA_WITH_AES_256_CCM', 'AES256-CCM'],
  ['TLS_RSA_WITH_AES_128_GCM_SHA256', 'AES128-GCM-SHA256'],
  ['TLS_RSA_WITH_AES_128_CCM_8', 'AES128-CCM8'],
  ['TLS_RSA_WITH_AES_128_CCM', 'AES128-CCM'],
  ['TLS_RSA_WITH_AES_256_CBC_SHA256', 'AES256-SHA256'],
  ['TLS_RSA_WITH_AES_128_CBC_SHA256', 'AES128-SHA256'],
  ['TLS_RSA_WITH_AES_256_CBC_SHA', 'AES256-SHA'],
  ['TLS_RSA_WITH_AES_128_CBC_SHA', 'AES128-SHA'],
]);
/** Java lists it among its suites; OpenSSL always signals secure renegotiation, so it is accepted and dropped. */
const RENEGOTIATION_SCSV = 'TLS_EMPTY_RENEGOTIATION_INFO_SCSV';

/** A config's value: null when unset. */
type ConfigGetter = (name: string) => string | null;

/**
 * The TLS settings of a listener from its effective `ssl.*` configs (`get` returns a config's value on this
 * listener, listener.name.<listener>.ssl.* already resolved over ssl.*; null when unset). Reads the key and trust
 * store files; throws TlsConfigError for what Kafka would refuse or Node cannot do.
 *
 * On a SASL_SSL listener Kafka applies ssl.client.auth only when it is set with the listener prefix (KIP-684);
 * the caller resolves that.
 */
export function tlsServerOptions(get: ConfigGetter): TlsListenerSettings {
  const files: string[] = [];
  const clientAuth = readClientAuth(get);
  const allowDnChanges = readBoolean(get, 'ssl.allow.dn.changes');
  const allowSanChanges = readBoolean(get, 'ssl.allow.san.changes');
  const keystore = readKeystore(get, clientAuth, files);
  const truststore = readTruststore(get, files);
  const { minVersion, maxVersion, ciphers } = readProtocolsAndCiphers(get);
  const secureContext: tls.SecureContextOptions = {
    ...keystore.options,
    // Java's PKIX takes every trust store certificate as an anchor, intermediates too; OpenSSL wants this flag.
    ...(truststore ? { ca: truststore.certificates, allowPartialTrustChain: true } : {}),
    minVersion,
    maxVersion,
    ...(ciphers !== undefined ? { ciphers } : {}),
  };
  // OpenSSL has the last word; each part is tried alone first so that its refusal names the right config.
  secureContextOf({ minVersion, maxVersion, ...(ciphers !== undefined ? { ciphers } : {}) }, ciphers !== undefined ? 'ssl.cipher.suites' : 'ssl.enabled.protocols', null);
  const keyContext = secureContextOf(keystore.options, keystore.config, keystore.file);
  secureContextOf(secureContext, truststore?.config ?? keystore.config, null);
  const certificate = keystore.certificate ?? contextCertificate(keyContext, keystore.config, keystore.file);
  return {
    secureContext,
    requestCert: clientAuth !== 'none',
    rejectUnauthorized: clientAuth === 'required',
    clientAuth,
    files,
    certificate,
    allowDnChanges,
    allowSanChanges,
  };
}

function readClientAuth(get: ConfigGetter): SslClientAuth {
  const value = (get('ssl.client.auth') ?? 'none').trim().toLowerCase();
  if (value !== 'none' && value !== 'requested' && value !== 'required') throw new TlsConfigError('ssl.client.auth', `${JSON.stringify(value)} is not one of required, requested, none`);
  return value;
}

function readBoolean(get: ConfigGetter, name: string): boolean {
  const value = (get(name) ?? 'false').trim().toLowerCase();
  if (value !== 'true' && value !== 'false') throw new TlsConfigError(name, `${JSON.stringify(value)} is not true or false`);
  return value === 'true';
}

/** A config whose empty value counts as unset (a location, inline PEM text). */
function present(get: ConfigGetter, name: string): string | null {
  const value = get(name);
  return value === null || value.trim() === '' ? null : value;
}

interface Keystore {
  readonly options: Pick<tls.SecureContextOptions, 'key' | 'cert' | 'passphrase' | 'pfx'>;
  /** The leaf certificate, when read here (null for PKCS12: taken from the secure context). */
  readonly certificate: X509Certificate | null;
  /** What to blame when the secure context refuses the store. */
  readonly config: string;
  readonly file: string | null;
}

/** DefaultSslEngineFactory.createKeystore's checks, then the store read. */
function readKeystore(get: ConfigGetter, clientAuth: SslClientAuth, files: string[]): Keystore {
  const type = (get('ssl.keystore.type') ?? 'JKS').trim().toUpperCase();
  const location = present(get, 'ssl.keystore.location');
  const password = get('ssl.keystore.password');
  const keyPassword = get('ssl.key.password');
  const key = present(get, 'ssl.keystore.key');
  const chain = present(get, 'ssl.keystore.certificate.chain');
  if (key !== null) {
    if (type !== 'PEM') throw new TlsConfigError('ssl.keystore.key', `a private key can be given only with ssl.keystore.type=PEM, but the key store type is ${type}`);
    if (chain === null) throw new TlsConfigError('ssl.keystore.certificate.chain', 'the private key (ssl.keystore.key) is given, but not its certificate chain');
    if (location !== null) throw new TlsConfigError('ssl.keystore.location', 'both a key store location and a separate private key (ssl.keystore.key) are given');
    if (password !== null) throw new TlsConfigError('ssl.keystore.password', 'a key store password cannot be given with PEM, only a key password (ssl.key.password)');
    const keySource = { config: 'ssl.keystore.key', file: null };
    const chainSource = { config: 'ssl.keystore.certificate.chain', file: null };
    return pemKeystore(pemBlocks(key, keySource), keySource, pemBlocks(chain, chainSource), chainSource, keyPassword);
  }
  if (chain !== null) throw new TlsConfigError('ssl.keystore.certificate.chain', 'the certificate chain is given, but not its private key (ssl.keystore.key)');
  if (location === null) {
    if (password !== null) throw new TlsConfigError('ssl.keystore.password', 'a key store password is given, but no key store (ssl.keystore.location)');
    throw new TlsConfigError('ssl.keystore.location', 'a TLS listener needs a key store: ssl.keystore.location, or ssl.keystore.key with ssl.keystore.certificate.chain (ssl.keystore.type=PEM)');
  }
  const source = { config: 'ssl.keystore.location', file: location };
  const bytes = readStore(source);
  files.push(location);
  const format = storeFormat(bytes);
  if (type === 'PEM') {
    if (password !== null) throw new TlsConfigError('ssl.keystore.password', 'a key store password cannot be given with PEM, only a key password (ssl.key.password)');
    if (format !== 'PEM') throw new TlsConfigError(source.config, `is not a PEM file (it looks like ${format})`, { file: location });
    const blocks = pemBlocks(bytes.toString('utf8'), source);
    return pemKeystore(blocks, source, blocks, source, keyPassword);
  }
  if (type !== 'PKCS12' && type !== 'JKS' && type !== 'JCEKS') throw new TlsConfigError('ssl.keystore.type', `${type} key stores cannot be read (use PEM or PKCS12)`);
  if (password === null) throw new TlsConfigError('ssl.keystore.password', 'the key store is given (ssl.keystore.location), but not its password', { file: location });
  refuseUnreadable(source, type, format, 'ssl.keystore.type');
  if (clientAuth !== 'none') {
    throw new TlsConfigError(source.config, `a PKCS12 key store cannot be used with ssl.client.auth=${clientAuth}: Node.js would also trust the CA certificates inside it for client certificates, which Kafka does not; use ssl.keystore.type=PEM (openssl pkcs12 -in ${location} -nodes -out keystore.pem, then encrypt the key with ssl.key.password if wanted)`, { file: location });
  }
  if (keyPassword !== null && keyPassword !== password) throw new TlsConfigError('ssl.key.password', 'differs from ssl.keystore.password, but Node.js opens a PKCS12 key store with one password', { file: location });
  return { options: { pfx: bytes, passphrase: password }, certificate: null, config: source.config, file: location };
}

interface Truststore {
  /** The trusted certificates, PEM. */
  readonly certificates: string[];
  /** The config they came from. */
  readonly config: string;
}

/** DefaultSslEngineFactory.createTruststore's checks, then the trusted certificates, or null: Node's roots. */
function readTruststore(get: ConfigGetter, files: string[]): Truststore | null {
  const type = (get('ssl.truststore.type') ?? 'JKS').trim().toUpperCase();
  const location = present(get, 'ssl.truststore.location');
  const password = get('ssl.truststore.password');
  const certificates = present(get, 'ssl.truststore.certificates');
  if (certificates !== null) {
    if (type !== 'PEM') throw new TlsConfigError('ssl.truststore.certificates', `trusted certificates can be given only with ssl.truststore.type=PEM, but the trust store type is ${type}`);
    if (location !== null) throw new TlsConfigError('ssl.truststore.location', 'both a trust store location and separate trusted certificates (ssl.truststore.certificates) are given');
    if (password !== null) throw new TlsConfigError('ssl.truststore.password', 'a trust store password cannot be given with PEM');
    const source = { config: 'ssl.truststore.certificates', file: null };
    return { certificates: trustedCertificates(pemBlocks(certificates, source), source), config: source.config };
  }
  if (location === null) {
    if (password !== null) throw new TlsConfigError('ssl.truststore.password', 'a trust store password is given, but no trust store (ssl.truststore.location)');
    return null;
  }
  const source = { config: 'ssl.truststore.location', file: location };
  const bytes = readStore(source);
  files.push(location);
  const format = storeFormat(bytes);
  if (type === 'PEM') {
    if (password !== null) throw new TlsConfigError('ssl.truststore.password', 'a trust store password cannot be given with PEM');
    if (format !== 'PEM') throw new TlsConfigError(source.config, `is not a PEM file (it looks like ${format})`, { file: location });
    return { certificates: trustedCertificates(pemBlocks(bytes.toString('utf8'), source), source), config: source.config };
  }
  if (type !== 'PKCS12' && type !== 'JKS' && type !== 'JCEKS') throw new TlsConfigError('ssl.truststore.type', `${type} trust stores cannot be read (use PEM)`);
  refuseUnreadable(source, type, format, 'ssl.truststore.type');
  throw new TlsConfigError(source.config, `a PKCS12 trust store cannot be read: Node.js reads PKCS12 only as a key and certificate; export the certificates to PEM (openssl pkcs12 -in ${location} -nokeys -out truststore.pem) and set ssl.truststore.type=PEM`, { file: location });
}

/** Refuses the file formats Node cannot read, for a JKS/JCEKS/PKCS12 store type. */
function refuseUnreadable(source: Source, type: string, format: StoreFormat, typeConfig: string): void {
  if (format === 'JKS' || format === 'JCEKS') {
    throw new TlsConfigError(source.config, `is a ${format} key store, which Node.js cannot read: convert it to PKCS12 (keytool -importkeystore -srckeystore ${source.file} -srcstoretype ${format} -destkeystore store.p12 -deststoretype PKCS12) or to PEM, and set ${typeConfig}`, { file: source.file });
  }
  if (format === 'PEM') throw new TlsConfigError(source.config, `is a PEM file, but ${typeConfig} is ${type}: set ${typeConfig}=PEM`, { file: source.file });
  if (format !== 'PKCS12') throw new TlsConfigError(source.config, `is not a ${type} key store`, { file: source.file });
}

// ---------------------------------------------------------------------------------------------------------------
// Store files and PEM
// ---------------------------------------------------------------------------------------------------------------

interface Source {
  readonly config: string;
  readonly file: string | null;
}

type StoreFormat = 'PEM' | 'PKCS12' | 'JKS' | 'JCEKS' | 'an unknown format';

function readStore(source: Source): Buffer {
  const file = source.file!;
  let stats: Stats;
  try {
    stats = statSync(file);
  } catch (e) {
    throw new TlsConfigError(source.config, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file, cause: e });
  }
  if (!stats.isFile()) throw new TlsConfigError(source.config, 'is not a file', { file });
  if (stats.size > MAX_STORE_BYTES) throw new TlsConfigError(source.config, `is ${stats.size} bytes, more than a key or trust store holds (${MAX_STORE_BYTES})`, { file });
  try {
    return readFileSync(file);
  } catch (e) {
    throw new TlsConfigError(source.config, `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { file, cause: e });
  }
}

/** By the magic numbers: JKS 0xFEEDFEED, JCEKS 0xCECECECE, PEM a BEGIN line, PKCS12 a long DER SEQUENCE. */
function storeFormat(bytes: Buffer): StoreFormat {
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0xfeedfeed) return 'JKS';
  if (bytes.length >= 4 && bytes.readUInt32BE(0) === 0xcececece) return 'JCEKS';
  if (bytes.subarray(0, 64 * 1024).toString('latin1').includes('-----BEGIN ')) return 'PEM';
  if (bytes.length >= 2 && bytes[0] === 0x30 && (bytes[1]! & 0x80) !== 0) return 'PKCS12';
  return 'an unknown format';
}

interface PemBlock {
  /** The label with its whitespace collapsed: `CERTIFICATE`, `PRIVATE KEY`, `ENCRYPTED PRIVATE KEY`, ... */
  readonly label: string;
  /** RFC 1421 headers (`Proc-Type: 4,ENCRYPTED`, `DEK-Info: ...`) of a legacy encrypted key. */
  readonly headers: readonly string[];
  readonly der: Buffer;
}

/**
 * The PEM blocks of `text`, read as leniently as Kafka's PemParser: text around the blocks is ignored, and the
 * base64 may be broken by any whitespace, so a PEM value written on one line (spaces for newlines, as in an
 * environment variable) reads too. Linear in the text.
 */
function pemBlocks(text: string, source: Source): PemBlock[] {
  const blocks: PemBlock[] = [];
  const fail = (what: string): TlsConfigError => new TlsConfigError(source.config, what, { file: source.file });
  for (let at = text.indexOf('-----BEGIN'); at !== -1; at = text.indexOf('-----BEGIN', at)) {
    const labelEnd = text.indexOf('-----', at + 10);
    if (labelEnd === -1) throw fail(`PEM block ${blocks.length + 1} has an unterminated BEGIN line`);
    const label = text.slice(at + 10, labelEnd).trim().replace(/\s+/g, ' ');
    if (!/^[A-Z0-9 ]{1,64}$/.test(label)) throw fail(`PEM block ${blocks.length + 1} has no valid label`);
    const end = new RegExp(`-----END\\s+${label.replace(/ /g, '\\s+')}\\s*-----`, 'g');
    end.lastIndex = labelEnd + 5;
    const m = end.exec(text);
    if (!m) throw fail(`PEM block ${blocks.length + 1} (${label}) has no END line`);
    const lines = text.slice(labelEnd + 5, m.index).split(/\r?\n|\r/);
    const headers: string[] = [];
    while (lines.length > 0 && (lines[0]!.trim() === '' || /^[^:]+:/.test(lines[0]!.trim()))) {
      const line = lines.shift()!.trim();
      if (line !== '') headers.push(line);
    }
    const base64 = lines.join('').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) throw fail(`PEM block ${blocks.length + 1} (${label}) is not base64`);
    blocks.push({ label, headers, der: Buffer.from(base64, 'base64') });
    at = m.index + m[0].length;
  }
  return blocks;
}

/** A block as canonical PEM text, which Node's PEM reader wants (64-column base64, headers then a blank line). */
function pemText(block: PemBlock): string {
  const body = block.der.toString('base64').replace(/.{64}/g, '$&\n').replace(/\n$/, '');
  const headers = block.headers.length > 0 ? `${block.headers.join('\n')}\n\n` : '';
  return `-----BEGIN ${block.label}-----\n${headers}${body}\n-----END ${block.label}-----\n`;
}

const isKeyBlock = (b: PemBlock): boolean => b.label.endsWith('PRIVATE KEY');
const isCertificateBlock = (b: PemBlock): boolean => b.label === 'CERTIFICATE' || b.label === 'X509 CERTIFICATE';

function certificates(blocks: readonly PemBlock[], source: Source): X509Certificate[] {
  const certs = blocks.filter(isCertificateBlock);
  if (certs.length === 0) throw new TlsConfigError(source.config, 'at least one certificate expected, but none found', { file: source.file });
  return certs.map((b, i) => {
    try {
      return new X509Certificate(b.der);
    } catch (e) {
      throw new TlsConfigError(source.config, `certificate ${i + 1} does not parse (${opensslReason(e)})`, { file: source.file, cause: e });
    }
  });
}

/** PemStore(certificateChain, privateKey, keyPassword): one private key, a chain whose first certificate is its. */
function pemKeystore(keyBlocks: readonly PemBlock[], keySource: Source, chainBlocks: readonly PemBlock[], chainSource: Source, keyPassword: string | null): Keystore {
  const keys = keyBlocks.filter(isKeyBlock);
  const keyError = (what: string, cause?: unknown): TlsConfigError => new TlsConfigError(keySource.config, what, { file: keySource.file, cause });
  if (keys.length === 0) throw keyError('no private key found (a PEM key store holds the private key and its certificate chain)');
  if (keys.length > 1) throw keyError(`expected one private key, but found ${keys.length}`);
  const block = keys[0]!;
  const encrypted = block.label === 'ENCRYPTED PRIVATE KEY' || block.headers.some((h) => /^Proc-Type:\s*4,\s*ENCRYPTED/i.test(h));
  if (encrypted && keyPassword === null) throw keyError('the private key is encrypted, but ssl.key.password is not set');
  if (!encrypted && keyPassword !== null) throw keyError('ssl.key.password is set, but the private key is not encrypted');
  const key = pemText(block);
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey({ key, format: 'pem', ...(encrypted ? { passphrase: keyPassword! } : {}) });
  } catch (e) {
    throw keyError(encrypted ? `the private key cannot be decrypted with ssl.key.password (${opensslReason(e)})` : `the private key does not parse (${opensslReason(e)})`, e);
  }
  const chain = certificates(chainBlocks, chainSource);
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(keyObject)) {
    throw new TlsConfigError(chainSource.config, `the first certificate (${leaf.subject.replace(/\n/g, ', ')}) is not the private key's: the chain starts with the key's certificate`, { file: chainSource.file });
  }
  return {
    options: { key, cert: chain.map((c) => c.toString()).join(''), ...(encrypted ? { passphrase: keyPassword! } : {}) },
    certificate: leaf,
    config: keySource.config,
    file: keySource.file,
  };
}

function trustedCertificates(blocks: readonly PemBlock[], source: Source): string[] {
  return certificates(blocks, source).map((c) => c.toString());
}

function secureContextOf(options: tls.SecureContextOptions, config: string, file: string | null): tls.SecureContext {
  try {
    return tls.createSecureContext(options);
  } catch (e) {
    throw new TlsConfigError(config, `cannot be used (${opensslReason(e)})`, { file, cause: e });
  }
}

/** The certificate a secure context serves (for a PKCS12 key store, which only OpenSSL opens). */
function contextCertificate(context: tls.SecureContext, config: string, file: string | null): X509Certificate {
  // SecureContext.getCertificate() is Node's own accessor (internal, stable since Node 0.11): the DER of SSL_CTX's certificate.
  const der: unknown = typeof context.context?.getCertificate === 'function' ? context.context.getCertificate() : null;
  if (!Buffer.isBuffer(der)) throw new TlsConfigError(config, 'holds no certificate', { file });
  return new X509Certificate(der);
}

/** An OpenSSL error's reason without the library prefix (`error:1C800064:Provider routines::bad decrypt` → `bad decrypt`). */
function opensslReason(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  return message.replace(/^error:[0-9A-F]+:[^:]*:[^:]*:/i, '');
}

// ---------------------------------------------------------------------------------------------------------------
// Protocols and cipher suites
// ---------------------------------------------------------------------------------------------------------------

function list(value: string | null): string[] {
  return (value ?? '').split(',').map((s) => s.trim()).filter(Boolean);
}

function readProtocolsAndCiphers(get: ConfigGetter): { minVersion: tls.SecureVersion; maxVersion: tls.SecureVersion; ciphers: string | undefined } {
  const protocol = (get('ssl.protocol') ?? 'TLSv1.3').trim();
  if (!SSL_CONTEXT_PROTOCOLS.has(protocol.toLowerCase())) throw new TlsConfigError('ssl.protocol', `${JSON.stringify(protocol)} is not a TLS protocol name (TLSv1.3, TLSv1.2, TLS)`);

  // Kafka leaves an empty list to the engine's defaults, which on a JSSE server are TLSv1.3 and TLSv1.2.
  const names = list(get('ssl.enabled.protocols') ?? DEFAULT_ENABLED_PROTOCOLS);
  const versions = new Set<number>();
  for (const name of names.length > 0 ? names : list(DEFAULT_ENABLED_PROTOCOLS)) {
    if (name === 'SSLv2Hello') continue;
    const index = TLS_VERSIONS.indexOf(name as tls.SecureVersion);
    if (index === -1) throw new TlsConfigError('ssl.enabled.protocols', `${JSON.stringify(name)} is not supported (${TLS_VERSIONS.join(', ')})`);
    versions.add(index);
  }
  if (versions.size === 0) throw new TlsConfigError('ssl.enabled.protocols', 'names no TLS version');
  let min = Math.min(...versions);
  let max = Math.max(...versions);
  if (max - min + 1 !== versions.size) throw new TlsConfigError('ssl.enabled.protocols', `must be a contiguous range of versions (Node.js sets a minimum and a maximum), not ${names.join(',')}`);

  const suites = list(get('ssl.cipher.suites'));
  if (suites.length === 0) return { minVersion: TLS_VERSIONS[min]!, maxVersion: TLS_VERSIONS[max]!, ciphers: undefined };
  const tls13: string[] = [];
  const tls12: string[] = [];
  for (const suite of suites) {
    if (TLS13_SUITES.has(suite)) tls13.push(suite);
    else if (OPENSSL_CIPHER_NAMES.has(suite)) tls12.push(OPENSSL_CIPHER_NAMES.get(suite)!);
    else if (suite !== RENEGOTIATION_SCSV) throw new TlsConfigError('ssl.cipher.suites', `${JSON.stringify(suite)} is not a cipher suite OpenSSL has (IANA names: TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, ...)`);
  }
  // As JSSE, a version none of the suites can use is not negotiated.
  if (tls13.length === 0) max = Math.min(max, TLS_VERSIONS.indexOf('TLSv1.2'));
  if (tls12.length === 0) min = Math.max(min, TLS_VERSIONS.indexOf('TLSv1.3'));
  if (min > max) throw new TlsConfigError('ssl.cipher.suites', `has no suite for the versions of ssl.enabled.protocols (${names.join(',')})`);
  return { minVersion: TLS_VERSIONS[min]!, maxVersion: TLS_VERSIONS[max]!, ciphers: [...tls13, ...tls12].join(':') };
}

// ---------------------------------------------------------------------------------------------------------------
// Client certificates
// ---------------------------------------------------------------------------------------------------------------

/**
 * The certificate a client authenticated with, once its TLS handshake is done: undefined when it sent none
 * (ssl.client.auth none, or requested), the verified certificate otherwise. Throws TlsAuthenticationError for a
 * certificate the trust store does not verify, which under ssl.client.auth=requested Node lets through but Java
 * refuses: close the connection then.
 */
export function verifiedClientCertificate(socket: tls.TLSSocket): X509Certificate | undefined {
  const certificate = socket.getPeerX509Certificate();
  if (certificate === undefined) return undefined;
  if (!socket.authorized) {
    throw new TlsAuthenticationError(`client certificate ${distinguishedNameOrSubject(certificate)} is not trusted (${String(socket.authorizationError)})`);
  }
  return certificate;
}

export function distinguishedNameOrSubject(certificate: X509Certificate): string {
  try {
    return distinguishedName(certificate);
  } catch {
    return certificate.subject.replace(/\n/g, ', ');
  }
}
