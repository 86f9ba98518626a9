/**
 * A throwaway PKI for TLS tests and benchmarks, made with the `openssl` CLI (OpenSSL 3: `req -x509 -CA` issues
 * a certificate in one run) in a temporary directory: a CA, server certificates for 127.0.0.1 / localhost,
 * client certificates with any subject, and the keystore layouts Kafka reads (KIP-651 PEM: key and chain in
 * one file; PKCS#8 encrypted keys for `ssl.key.password`; PKCS12 for `ssl.keystore.type=PKCS12`).
 *
 * Shared by the tests (test/support/certs.ts re-exports it as TestPki) and by `npm run bench -- compare
 * --security`, which must not import from test/. Keys are EC P-256, so a certificate costs one openssl run of
 * a few milliseconds. Everything is synchronous: tests build their PKI in `beforeAll` and call `cleanup()` in
 * `afterAll`; the benchmark builds one at start in its temporary directory.
 *
 *   dir/
 *     openssl.cnf            a minimal config, so the host's openssl.cnf adds no extensions
 *     ca.crt  ca.key         the CA (`Pki.ca`)
 *     <name>.crt <name>.key  an issued certificate and its PKCS#8 key
 *     <name>.keystore.pem    key + certificate + CA certificate: Kafka's PEM keystore file
 *     <name>.enc.key         the key encrypted (PKCS#8, PBES2 AES-256-CBC)       encryptedKey()
 *     <name>.p12             key + chain, PKCS12                                   pkcs12()
 */
import { execFileSync } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const OPENSSL = process.env.OPENSSL ?? 'openssl';

/** Section names match the -extensions arguments below; `string_mask = utf8only` is OpenSSL 3's default. */
const OPENSSL_CNF = `[req]
distinguished_name = dn
string_mask = utf8only
[dn]
`;

export interface IssuedCertificate {
  /** The file name stem in the PKI directory. */
  readonly name: string;
  readonly certPath: string;
  readonly keyPath: string;
  /** The certificate, PEM. */
  readonly cert: string;
  /** The private key, unencrypted PKCS#8 PEM. */
  readonly key: string;
  /** key, certificate and issuer certificate in one PEM file, as `ssl.keystore.location` with `ssl.keystore.type=PEM`. */
  readonly keystorePath: string;
  /** The certificate chain (certificate, then issuer), PEM: `ssl.keystore.certificate.chain`. */
  readonly chain: string;
  /** Serial number, upper-case hex as X509Certificate.serialNumber prints it. */
  readonly serialNumber: string;
  readonly x509: X509Certificate;
}

export interface IssueOptions {
  /** Validity in days (default 2). */
  days?: number;
  /** subjectAltName entries, OpenSSL syntax (`DNS:localhost`, `IP:127.0.0.1`). */
  altNames?: readonly string[];
  /** extendedKeyUsage values (default: serverAuth for servers, clientAuth for clients). */
  extendedKeyUsage?: readonly string[];
  /** The issuer (default: the PKI's CA). */
  issuer?: IssuedCertificate;
  /** Make a CA certificate (basicConstraints CA:TRUE, keyCertSign). */
  isCa?: boolean;
}

export class Pki {
  readonly ca: IssuedCertificate;
  private readonly cnf: string;
  private names = new Set<string>();

  private constructor(readonly dir: string) {
    this.cnf = join(dir, 'openssl.cnf');
    writeFileSync(this.cnf, OPENSSL_CNF);
    this.ca = this.issue('ca', '/O=Ledgerline/CN=Ledgerline Test CA', { isCa: true, days: 3 });
  }

  /** A new PKI (and its CA) in a new temporary directory (under `parent`, default the system's). */
  static create(parent: string = tmpdir()): Pki {
    return new Pki(mkdtempSync(join(parent, 'ledgerline-pki-')));
  }

  /**
   * A server certificate for 127.0.0.1, ::1 and localhost (SAN), issued by the CA (or `options.issuer`).
   * `subject` in openssl's `-subj` syntax.
   */
  server(name: string, subject = '/O=Ledgerline/CN=localhost', options: IssueOptions = {}): IssuedCertificate {
    return this.issue(name, subject, {
      altNames: ['DNS:localhost', 'IP:127.0.0.1', 'IP:::1'],
      extendedKeyUsage: ['serverAuth', 'clientAuth'],
      ...options,
    });
  }

  /** A client certificate with this subject (`/C=US/O=Ledgerline/OU=Test/CN=alice`; `+` joins a multi-valued RDN). */
  client(name: string, subject: string, options: IssueOptions = {}): IssuedCertificate {
    return this.issue(name, subject, { extendedKeyUsage: ['clientAuth'], ...options });
  }

  /**
   * Issues a certificate: `name` is its file stem (unique within the PKI), `subject` openssl's `-subj` syntax,
   * read as UTF-8. A self-signed certificate when `options.issuer` is null and this is the CA itself.
   */
  issue(name: string, subject: string, options: IssueOptions = {}): IssuedCertificate {
    if (!/^[a-z0-9][a-z0-9.-]*$/i.test(name) || this.names.has(name)) throw new Error(`certificate name ${name} is taken or not a file stem`);
    this.names.add(name);
    const certPath = join(this.dir, `${name}.crt`);
    const keyPath = join(this.dir, `${name}.key`);
    const issuer = options.isCa && !options.issuer ? null : (options.issuer ?? this.ca);
    const ext: string[] = options.isCa
      ? ['basicConstraints=critical,CA:TRUE', 'keyUsage=critical,keyCertSign,cRLSign', 'subjectKeyIdentifier=hash']
      : ['basicConstraints=critical,CA:FALSE', 'keyUsage=critical,digitalSignature,keyEncipherment'];
    if (options.altNames?.length) ext.push(`subjectAltName=${options.altNames.join(',')}`);
    if (options.extendedKeyUsage?.length) ext.push(`extendedKeyUsage=${options.extendedKeyUsage.join(',')}`);
    const serial = `0x${randomBytes(8).toString('hex').replace(/^0/, '1')}`;
    openssl([
      'req', '-x509', '-new', '-utf8', '-config', this.cnf,
      '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', keyPath,
      '-subj', subject, '-days', String(options.days ?? 2), '-set_serial', serial, '-sha256',
      ...(issuer ? ['-CA', issuer.certPath, '-CAkey', issuer.keyPath] : []),
      ...ext.flatMap((e) => ['-addext', e]),
      '-out', certPath,
    ]);
    const cert = readFileSync(certPath, 'utf8');
    const key = readFileSync(keyPath, 'utf8');
    const chain = issuer ? cert + issuer.chain : cert;
    const keystorePath = join(this.dir, `${name}.keystore.pem`);
    writeFileSync(keystorePath, key + chain);
    const x509 = new X509Certificate(cert);
    return { name, certPath, keyPath, cert, key, keystorePath, chain, serialNumber: x509.serialNumber, x509 };
  }

  /** `issued`'s key encrypted with `password` (PKCS#8, PBES2 with AES-256-CBC): path and PEM. */
  encryptedKey(issued: IssuedCertificate, password: string): { path: string; pem: string } {
    const path = join(this.dir, `${issued.name}.enc.key`);
    openssl(['pkcs8', '-topk8', '-v2', 'aes-256-cbc', '-in', issued.keyPath, '-passout', `pass:${password}`, '-out', path]);
    return { path, pem: readFileSync(path, 'utf8') };
  }

  /** `issued`'s key and chain as a PKCS12 file protected by `password` (OpenSSL 3's defaults: AES-256, SHA-256 MAC). */
  pkcs12(issued: IssuedCertificate, password: string, file = `${issued.name}.p12`): string {
    const path = join(this.dir, file);
    const chainPath = join(this.dir, `${issued.name}.chain.pem`);
    writeFileSync(chainPath, issued.chain);
    openssl(['pkcs12', '-export', '-inkey', issued.keyPath, '-in', chainPath, '-passout', `pass:${password}`, '-out', path]);
    return path;
  }

  /** A PKCS12 file holding only `certs` (no key): what keytool makes of a truststore. */
  pkcs12Truststore(certs: readonly IssuedCertificate[], password: string, file: string): string {
    const path = join(this.dir, file);
    const certsPath = join(this.dir, `${file}.certs.pem`);
    writeFileSync(certsPath, certs.map((c) => c.cert).join(''));
    openssl(['pkcs12', '-export', '-nokeys', '-in', certsPath, '-passout', `pass:${password}`, '-out', path]);
    return path;
  }

  /** Writes `text` to a file in the PKI directory and returns its path. */
  write(file: string, text: string | Uint8Array): string {
    const path = join(this.dir, file);
    writeFileSync(path, text);
    return path;
  }

  /** Removes the directory and everything in it. */
  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function openssl(args: readonly string[]): void {
  try {
    execFileSync(OPENSSL, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args[0]} failed: ${err.stderr?.toString().trim() || err.message}`);
  }
}
