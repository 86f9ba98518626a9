package dev.ledgerline.compat.bookkeeper;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.PrintStream;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.bookkeeper.client.api.BKException;
import org.apache.bookkeeper.client.api.BookKeeper;
import org.apache.bookkeeper.client.api.DigestType;
import org.apache.bookkeeper.client.api.LedgerEntries;
import org.apache.bookkeeper.client.api.LedgerEntry;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.ListLedgersResult;
import org.apache.bookkeeper.client.api.ReadHandle;
import org.apache.bookkeeper.client.api.WriteHandle;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.bookkeeper.net.BookieId;

/**
 * Looks at ledgers with BookKeeper's own client, so that tests can prove that ledgers written by another client
 * are BookKeeper's: what BookKeeper's client reads back is what was written. Prints JSON lines on stdout; on a
 * failure, one JSON object {"error", "code", "message"} on stderr and exit status 1.
 *
 * <pre>
 *   BkTool --metadata-service-uri zk+hierarchical://127.0.0.1:2181/ledgers [options] list
 *   BkTool ... meta LEDGER_ID
 *   BkTool ... read LEDGER_ID [--recovery] [--from N] [--to N] [--base64]
 *   BkTool ... write [--ensemble 3] [--write-quorum 2] [--ack-quorum 2] [--entries 10] [--entry-size 100]
 *                    [--custom KEY=VALUE ...] [--no-close]
 *   options: --password STRING (default ""), --digest crc32c|crc32|mac|dummy (default: the ledger's own,
 *            read from its metadata; crc32c for write)
 * </pre>
 *
 * <p>{@code read} without {@code --recovery} opens the ledger as a reader does (BookKeeper's openLedgerNoRecovery:
 * a ledger still being written stays open), reading to the last add confirmed that the bookies report; with
 * {@code --recovery} it opens it as a new owner does (recovery: the ledger is fenced and closed at what a quorum
 * holds). {@code write} creates a ledger and adds entries whose bytes are "entry-N" padded to the size asked,
 * printing the ledger's id.
 */
public final class BkTool {
  private static final ObjectMapper JSON = new ObjectMapper();

  private BkTool() {}

  public static void main(String[] argv) {
    PrintStream out = System.out;
    int status = 0;
    try {
      try {
        status = run(new ArrayList<>(List.of(argv)), out);
      } catch (java.util.concurrent.ExecutionException e) {
        // The futures of BookKeeper's client carry its BKException: report that, with its code.
        throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
      }
    } catch (BKException e) {
      fail("BKException", e.getCode(), BKException.getMessage(e.getCode()) + ": " + e.getMessage());
      status = 1;
    } catch (IllegalArgumentException e) {
      fail("usage", -1, e.getMessage());
      status = 2;
    } catch (Exception e) {
      fail(e.getClass().getSimpleName(), -1, String.valueOf(e.getMessage()));
      status = 1;
    }
    out.flush();
    // BookKeeper's client leaves non-daemon threads behind on some failures: leave without waiting for them.
    System.exit(status);
  }

  private static void fail(String error, int code, String message) {
    ObjectNode o = JSON.createObjectNode();
    o.put("error", error);
    o.put("code", code);
    o.put("message", message);
    System.err.println(o);
  }

  private static String take(List<String> args, String flag, String dflt) {
    int i = args.indexOf(flag);
    if (i < 0) return dflt;
    if (i + 1 >= args.size()) throw new IllegalArgumentException(flag + " needs a value");
    String v = args.get(i + 1);
    args.remove(i + 1);
    args.remove(i);
    return v;
  }

  private static boolean flag(List<String> args, String flag) {
    return args.remove(flag);
  }

  private static DigestType digest(String name) {
    switch (name.toLowerCase()) {
      case "crc32c": return DigestType.CRC32C;
      case "crc32": return DigestType.CRC32;
      case "mac": return DigestType.MAC;
      case "dummy": return DigestType.DUMMY;
      default: throw new IllegalArgumentException("unknown digest " + name + " (crc32c, crc32, mac, dummy)");
    }
  }

  private static int run(List<String> args, PrintStream out) throws Exception {
    String uri = take(args, "--metadata-service-uri", System.getenv("BK_METADATA_SERVICE_URI"));
    if (uri == null) throw new IllegalArgumentException("--metadata-service-uri is required");
    byte[] password = take(args, "--password", "").getBytes(StandardCharsets.UTF_8);
    String digestName = take(args, "--digest", null);
    if (args.isEmpty()) throw new IllegalArgumentException("a command is required: list, meta, read, write");
    String command = args.remove(0);

    ClientConfiguration conf = new ClientConfiguration();
    conf.setMetadataServiceUri(uri);
    conf.setZkTimeout(10_000);
    conf.setAddEntryTimeout(30);
    conf.setReadEntryTimeout(30);
    // Without --digest the digest type comes from the ledger's metadata (format version 3 stores it).
    conf.setEnableDigestTypeAutodetection(digestName == null);
    try (BookKeeper bk = BookKeeper.newBuilder(conf).build()) {
      switch (command) {
        case "list": {
          if (!args.isEmpty()) throw new IllegalArgumentException("list takes no arguments: " + args);
          try (ListLedgersResult result = bk.newListLedgersOp().execute().get()) {
            List<Long> ids = new ArrayList<>();
            for (Long id : result.toIterable()) ids.add(id);
            ids.sort(null);
            for (long id : ids) {
              LedgerMetadata md;
              try {
                md = bk.getLedgerMetadata(id).get();
              } catch (java.util.concurrent.ExecutionException e) {
                // Deleted between the listing and the read: not a ledger any more.
                if (e.getCause() instanceof BKException
                    && ((BKException) e.getCause()).getCode() == BKException.Code.NoSuchLedgerExistsOnMetadataServerException) continue;
                throw e;
              }
              out.println(metadata(md));
            }
          }
          return 0;
        }
        case "meta": {
          long id = ledgerId(args);
          out.println(metadata(bk.getLedgerMetadata(id).get()));
          return 0;
        }
        case "read": {
          boolean recovery = flag(args, "--recovery");
          boolean base64 = flag(args, "--base64");
          long from = Long.parseLong(take(args, "--from", "0"));
          String toArg = take(args, "--to", null);
          long id = ledgerId(args);
          var open = bk.newOpenLedgerOp().withLedgerId(id).withRecovery(recovery).withPassword(password);
          if (digestName != null) open = open.withDigestType(digest(digestName));
          try (ReadHandle rh = open.execute().get()) {
            long last = rh.isClosed() ? rh.getLastAddConfirmed() : rh.readLastAddConfirmed();
            long to = toArg == null ? last : Math.min(Long.parseLong(toArg), last);
            for (long start = from; start <= to; start += 100) {
              try (LedgerEntries entries = rh.read(start, Math.min(to, start + 99))) {
                for (LedgerEntry e : entries) {
                  ObjectNode o = JSON.createObjectNode();
                  o.put("entryId", e.getEntryId());
                  o.put("length", e.getLength());
                  byte[] bytes = e.getEntryBytes();
                  if (base64) o.put("base64", Base64.getEncoder().encodeToString(bytes));
                  else o.put("hex", HexFormat.of().formatHex(bytes));
                  out.println(o);
                }
              }
            }
          }
          return 0;
        }
        case "write": {
          int ensemble = Integer.parseInt(take(args, "--ensemble", "3"));
          int writeQuorum = Integer.parseInt(take(args, "--write-quorum", "2"));
          int ackQuorum = Integer.parseInt(take(args, "--ack-quorum", "2"));
          int count = Integer.parseInt(take(args, "--entries", "10"));
          int size = Integer.parseInt(take(args, "--entry-size", "0"));
          boolean noClose = flag(args, "--no-close");
          Map<String, byte[]> custom = new LinkedHashMap<>();
          for (String kv; (kv = take(args, "--custom", null)) != null; ) {
            int eq = kv.indexOf('=');
            if (eq <= 0) throw new IllegalArgumentException("--custom takes KEY=VALUE: " + kv);
            custom.put(kv.substring(0, eq), kv.substring(eq + 1).getBytes(StandardCharsets.UTF_8));
          }
          if (!args.isEmpty()) throw new IllegalArgumentException("unexpected arguments: " + args);
          WriteHandle wh = bk.newCreateLedgerOp()
              .withEnsembleSize(ensemble).withWriteQuorumSize(writeQuorum).withAckQuorumSize(ackQuorum)
              .withPassword(password).withDigestType(digest(digestName == null ? "crc32c" : digestName))
              .withCustomMetadata(custom).execute().get();
          long lastEntry = -1;
          for (int i = 0; i < count; i++) {
            byte[] head = ("entry-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] payload = new byte[Math.max(size, head.length)];
            System.arraycopy(head, 0, payload, 0, head.length);
            lastEntry = wh.append(payload);
          }
          if (!noClose) wh.close();
          ObjectNode o = JSON.createObjectNode();
          o.put("ledgerId", wh.getId());
          o.put("lastEntryId", lastEntry);
          o.put("closed", !noClose);
          out.println(o);
          out.flush();
          if (noClose) {
            // The writer stays alive (an open ledger) until stdin closes or the process is killed.
            while (System.in.read() >= 0) {}
          }
          return 0;
        }
        default:
          throw new IllegalArgumentException("unknown command " + command + " (list, meta, read, write)");
      }
    }
  }

  private static long ledgerId(List<String> args) {
    if (args.size() != 1) throw new IllegalArgumentException("one ledger id expected, got " + args);
    return Long.parseLong(args.get(0));
  }

  private static ObjectNode metadata(LedgerMetadata md) {
    ObjectNode o = JSON.createObjectNode();
    o.put("ledgerId", md.getLedgerId());
    o.put("state", md.getState().name());
    o.put("lastEntryId", md.getLastEntryId());
    o.put("length", md.getLength());
    o.put("ensembleSize", md.getEnsembleSize());
    o.put("writeQuorumSize", md.getWriteQuorumSize());
    o.put("ackQuorumSize", md.getAckQuorumSize());
    o.put("digestType", md.getDigestType().name());
    o.put("hasPassword", md.hasPassword());
    o.put("ctime", md.getCtime());
    o.put("metadataFormatVersion", md.getMetadataFormatVersion());
    // The ensemble of the last segment (the one written to now), then every segment by its first entry id.
    ArrayNode current = o.putArray("ensemble");
    var all = md.getAllEnsembles();
    if (!all.isEmpty()) for (BookieId b : all.lastEntry().getValue()) current.add(b.toString());
    ObjectNode ensembles = o.putObject("ensembles");
    for (var e : all.entrySet()) {
      ArrayNode a = ensembles.putArray(String.valueOf(e.getKey()));
      for (BookieId b : e.getValue()) a.add(b.toString());
    }
    // Custom metadata: values as UTF-8 text when they are, and always as hex.
    ObjectNode custom = o.putObject("customMetadata");
    ObjectNode customHex = o.putObject("customMetadataHex");
    for (var e : md.getCustomMetadata().entrySet()) {
      customHex.put(e.getKey(), HexFormat.of().formatHex(e.getValue()));
      try {
        custom.put(e.getKey(), StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(e.getValue())).toString());
      } catch (CharacterCodingException notText) {
        custom.putNull(e.getKey());
      }
    }
    return o;
  }
}
