/**
 * Certificate reload without a restart, as Kafka's dynamic key store update (DynamicBrokerConfig reconfiguring an
 * SslFactory): the files a TLS listener's settings were read from are polled, and a change installs the new
 * settings for new connections (`server.setSecureContext`), under Kafka's rules for what a new certificate may
 * change (`ssl.allow.dn.changes`, `ssl.allow.san.changes`: SslFactory.CertificateEntries). Connections already
 * open keep the certificate they shook hands with.
 */
import { randomBytes, type X509Certificate } from 'node:crypto';
import { unwatchFile, watchFile, type Stats } from 'node:fs';
import type tls from 'node:tls';
import type { Logger } from '../observability/logger.js';
import { distinguishedName } from './distinguished-name.js';
import { distinguishedNameOrSubject, TlsConfigError, type TlsListenerSettings } from './tls.js';

// ---------------------------------------------------------------------------------------------------------------
// Reloading
// ---------------------------------------------------------------------------------------------------------------

/** Node's subjectAltName text (`DNS:a, IP Address:1.2.3.4`, values with `, ` quoted) as a set of entries. */
function subjectAltNames(certificate: X509Certificate): Set<string> {
  const text = certificate.subjectAltName ?? '';
  const out = new Set<string>();
  let entry = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      entry += c;
      if (c === '\\') entry += text[++i] ?? '';
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
      entry += c;
    } else if (c === ',' && text[i + 1] === ' ') {
      out.add(entry);
      entry = '';
      i++;
    } else {
      entry += c;
    }
  }
  if (entry !== '') out.add(entry);
  return out;
}

/** Java's String.equalsIgnoreCase: equal lengths, each char equal after upper- or lower-casing. */
function equalsIgnoreCase(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    const ux = x.toUpperCase();
    const uy = y.toUpperCase();
    if (ux.length === 1 && uy.length === 1 && (ux === uy || ux.toLowerCase() === uy.toLowerCase())) continue;
    return false;
  }
  return true;
}

/**
 * SslFactory.CertificateEntries.ensureCompatible: unless allowed, a new certificate keeps the subject and every
 * subject alternative name of the current one.
 */
function ensureCompatible(current: TlsListenerSettings, next: TlsListenerSettings): void {
  if (!next.allowDnChanges) {
    const was = distinguishedName(current.certificate);
    const now = distinguishedName(next.certificate);
    if (was !== now && !equalsIgnoreCase(was, now)) {
      throw new TlsConfigError('ssl.keystore.location', `the new certificate's subject ${now} differs from the current ${was} (set ssl.allow.dn.changes=true to allow it)`);
    }
  }
  if (!next.allowSanChanges) {
    const now = subjectAltNames(next.certificate);
    const dropped = [...subjectAltNames(current.certificate)].filter((name) => !now.has(name));
    if (dropped.length > 0) {
      throw new TlsConfigError('ssl.keystore.location', `the new certificate lacks subject alternative names of the current one: ${dropped.join(', ')} (set ssl.allow.san.changes=true to allow it)`);
    }
  }
}

export interface TlsContextReloaderOptions {
  /** How often each file is polled (default 5000 ms). */
  readonly intervalMs?: number;
  /** How long changes must settle before the stores are read (default 1000 ms): a key and a chain written one after the other are read together. */
  readonly settleMs?: number;
}

/**
 * Keeps a TLS listener's certificate current: watches the files its settings were read from and, when they
 * change, reads the settings again and installs them with `server.setSecureContext` (new connections only). A
 * reload that fails (unreadable or half-written file, wrong password, a subject or SAN change Kafka would refuse)
 * is logged and leaves the current context; the next change tries again.
 */
export class TlsContextReloader {
  private current: TlsListenerSettings;
  private readonly watched = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly intervalMs: number;
  private readonly settleMs: number;
  private readonly onChange = (now: Stats, before: Stats): void => {
    if (now.mtimeMs === before.mtimeMs && now.size === before.size && now.ino === before.ino) return;
    this.schedule();
  };

  /**
   * `current`: the settings the server was created with; `load`: reads them again (tlsServerOptions over the
   * listener's configs).
   */
  constructor(
    private readonly server: tls.Server,
    current: TlsListenerSettings,
    private readonly load: () => TlsListenerSettings,
    private readonly logger: Logger,
    options: TlsContextReloaderOptions = {},
  ) {
    this.current = current;
    this.intervalMs = options.intervalMs ?? 5000;
    this.settleMs = options.settleMs ?? 1000;
    this.watch(current.files);
  }

  /** The settings in force. */
  get settings(): TlsListenerSettings {
    return this.current;
  }

  /** Reads the stores now and installs them: true when the server has the new context. */
  reload(): boolean {
    if (this.closed) return false;
    let next: TlsListenerSettings;
    try {
      next = this.load();
      ensureCompatible(this.current, next);
      // New ticket keys: sessions of the old context are not resumed, as Java's new SSLContext has a new cache.
      this.server.setSecureContext({ ...next.secureContext, ticketKeys: randomBytes(48) });
    } catch (err) {
      this.logger.error({ err, files: this.current.files }, 'TLS key/trust store reload failed; the listener keeps its current certificate');
      return false;
    }
    this.current = next;
    this.watch(next.files);
    const cert = next.certificate;
    this.logger.info({ files: next.files, subject: distinguishedNameOrSubject(cert), serialNumber: cert.serialNumber, validTo: cert.validTo }, 'TLS key/trust stores reloaded');
    return true;
  }

  /** Stops watching. */
  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    for (const file of this.watched) unwatchFile(file, this.onChange);
    this.watched.clear();
  }

  private schedule(): void {
    if (this.closed) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.reload();
    }, this.settleMs);
    this.timer.unref();
  }

  private watch(files: readonly string[]): void {
    for (const file of this.watched) {
      if (!files.includes(file)) {
        unwatchFile(file, this.onChange);
        this.watched.delete(file);
      }
    }
    for (const file of files) {
      if (this.watched.has(file)) continue;
      watchFile(file, { interval: this.intervalMs, persistent: false }, this.onChange);
      this.watched.add(file);
    }
  }
}
