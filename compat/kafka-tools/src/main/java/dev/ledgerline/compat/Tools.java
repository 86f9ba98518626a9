package dev.ledgerline.compat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.kafka.common.utils.internals.Exit;

/**
 * The kafka-tools scenario: Kafka 4.4's own command-line tools (the classes behind kafka-topics.sh,
 * kafka-features.sh, kafka-leader-election.sh, kafka-reassign-partitions.sh, kafka-metadata-quorum.sh,
 * kafka-transactions.sh) run against one broker, all in this one JVM, their printed output reported line by line. Each tool's
 * public main is called with Kafka's Exit procedure replaced, so its exit status is recorded instead of
 * ending the JVM.
 *
 * The runner compares the outputs against Kafka and against Ledgerline, so what legitimately differs
 * between two brokers is replaced here (see normalise): the cluster id, topic ids, random directory ids,
 * ports, wall-clock times, and the positions in the KRaft metadata log (its high watermark and end offset,
 * the features' epoch), which Ledgerline does not have. Everything else a tool prints is compared as
 * printed: node ids (both brokers are node 1), listener names, a zero directory id, a -1 time, the lag.
 * Stack frames (tab + "at ") are dropped: they name the tools' source lines, not what the broker said.
 *
 * Usage: Tools kafka-tools <bootstrap> <prefix>; prints {"result": ..., "violations": [...]}.
 */
public final class Tools {
  /** What this program prints: one JSON object of strings, numbers, lists and maps (Jackson, which kafka-tools brings). */
  private static final ObjectMapper JSON = new ObjectMapper();

  private static final long WAIT_MS = 15_000;

  private final String bootstrap;
  private final String prefix;
  private final Map<String, Object> result = new LinkedHashMap<>();
  private final List<String> violations = new ArrayList<>();

  /** Thrown by the replaced Exit procedure: a tool asked the JVM to exit with this status. */
  private static final class ToolExit extends RuntimeException {
    final int status;

    ToolExit(int status) {
      super("exit " + status, null, false, false);
      this.status = status;
    }
  }

  private record Run(int status, List<String> out) {}

  /** What the running tool has printed so far, and where and how it first asked to exit. */
  private static ByteArrayOutputStream printed;
  private static int exitStatus;
  private static int printedAtExit = -1;

  /**
   * The replaced Exit procedure. A tool's main may catch the ToolExit of an inner Exit.exit and exit
   * again (TopicCommand.execute exits, and mainNoExit reports the "exception" and exits 1): the JVM would
   * have ended at the first call, so that call's status and what was printed before it are the outcome.
   */
  private static void exit(int status) {
    if (printedAtExit < 0) {
      exitStatus = status;
      printedAtExit = printed.size();
    }
    throw new ToolExit(status);
  }

  private Tools(String bootstrap, String prefix) {
    this.bootstrap = bootstrap;
    this.prefix = prefix;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 3 || !args[0].equals("kafka-tools")) {
      System.err.println("usage: Tools kafka-tools <bootstrap> <prefix>");
      System.exit(2);
    }
    PrintStream stdout = System.out;
    Exit.setExitProcedure((status, message) -> exit(status));
    Exit.setHaltProcedure((status, message) -> exit(status));
    Tools t = new Tools(args[1], args[2]);
    try {
      t.run();
    } catch (Throwable e) {
      e.printStackTrace();
      t.violations.add("aborted: " + e.getClass().getSimpleName() + ": " + e.getMessage());
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("result", t.result);
    out.put("violations", t.violations);
    stdout.println(JSON.writeValueAsString(out));
    stdout.flush();
    System.exit(0);
  }

  private void run() throws Exception {
    String t = prefix;
    String b = bootstrap;
    step("topicsCreate", 0, org.apache.kafka.tools.TopicCommand::main,
        "--bootstrap-server", b, "--create", "--topic", t, "--partitions", "3", "--replication-factor", "1");
    // CreateTopics answers once the controller has the topic; the broker's metadata can trail it, so the
    // describe is repeated (bounded) until it names three partitions with a leader.
    Run described = until(() -> invoke(org.apache.kafka.tools.TopicCommand::main, "--bootstrap-server", b, "--describe", "--topic", t),
        r -> r.status == 0 && r.out.stream().filter(l -> l.contains("Partition: ") && !l.contains("Leader: none")).count() == 3);
    record("topicsDescribe", 0, described);
    step("topicsCreateExisting", 1, org.apache.kafka.tools.TopicCommand::main,
        "--bootstrap-server", b, "--create", "--topic", t, "--partitions", "3", "--replication-factor", "1");
    step("topicsDescribeMissing", 1, org.apache.kafka.tools.TopicCommand::main,
        "--bootstrap-server", b, "--describe", "--topic", t + "-missing");
    step("featuresDescribe", 0, org.apache.kafka.tools.FeatureCommand::main, "--bootstrap-server", b, "describe");
    step("electPreferredAll", 0, org.apache.kafka.tools.LeaderElectionCommand::main,
        "--bootstrap-server", b, "--election-type", "preferred", "--all-topic-partitions");
    step("electPreferredOne", 0, org.apache.kafka.tools.LeaderElectionCommand::main,
        "--bootstrap-server", b, "--election-type", "preferred", "--topic", t, "--partition", "0");
    step("reassignList", 0, org.apache.kafka.tools.reassign.ReassignPartitionsCommand::main, "--bootstrap-server", b, "--list");
    Path plan = Files.createTempFile("reassign", ".json");
    try {
      Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"" + t + "\",\"partition\":0,\"replicas\":[99]}]}");
      step("reassignToMissingBroker", 1, org.apache.kafka.tools.reassign.ReassignPartitionsCommand::main,
          "--bootstrap-server", b, "--execute", "--reassignment-json-file", plan.toString());
    } finally {
      Files.deleteIfExists(plan);
    }
    step("quorumStatus", 0, org.apache.kafka.tools.MetadataQuorumCommand::main, "--bootstrap-server", b, "describe", "--status");
    step("quorumReplication", 0, org.apache.kafka.tools.MetadataQuorumCommand::main, "--bootstrap-server", b, "describe", "--replication");
    transactions();
  }

  /**
   * kafka-transactions.sh over one transaction left open: list (filtered to this run's ids), describe,
   * describe-producers, find-hanging, then abort by start offset (the admin client writes the ABORT marker
   * itself, through WriteTxnMarkers to the partition's leader) and describe-producers again. Producer ids,
   * times and durations are replaced in the tables (see normaliseTable); the rest is compared as printed.
   */
  private void transactions() throws Exception {
    String b = bootstrap;
    String t = prefix + "-txn";
    String id = prefix + "-open-txn";
    step("txnTopicCreate", 0, org.apache.kafka.tools.TopicCommand::main,
        "--bootstrap-server", b, "--create", "--topic", t, "--partitions", "1", "--replication-factor", "1");
    java.util.Properties props = new java.util.Properties();
    props.put("bootstrap.servers", b);
    props.put("transactional.id", id);
    props.put("transaction.timeout.ms", "60000");
    props.put("key.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
    props.put("value.serializer", org.apache.kafka.common.serialization.StringSerializer.class.getName());
    try (org.apache.kafka.clients.producer.KafkaProducer<String, String> producer = new org.apache.kafka.clients.producer.KafkaProducer<>(props)) {
      producer.initTransactions();
      producer.beginTransaction();
      producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(t, 0, "k", "v0")).get();
      producer.send(new org.apache.kafka.clients.producer.ProducerRecord<>(t, 0, "k", "v1")).get();
      Main txns = org.apache.kafka.tools.TransactionsCommand::main;
      table("txnList", 0, until(() -> invoke(txns, "--bootstrap-server", b, "list", "--transactional-id-pattern", java.util.regex.Pattern.quote(id)),
          r -> r.status == 0 && r.out.size() >= 2));
      table("txnDescribe", 0, invoke(txns, "--bootstrap-server", b, "describe", "--transactional-id", id));
      table("txnDescribeMissing", 1, invoke(txns, "--bootstrap-server", b, "describe", "--transactional-id", id + "-missing"));
      table("txnDescribeProducers", 0, invoke(txns, "--bootstrap-server", b, "describe-producers", "--topic", t, "--partition", "0"));
      table("txnFindHanging", 0, invoke(txns, "--bootstrap-server", b, "find-hanging", "--broker-id", "1"));
      table("txnAbort", 0, invoke(txns, "--bootstrap-server", b, "abort", "--topic", t, "--partition", "0", "--start-offset", "0"));
      table("txnDescribeProducersAfterAbort", 0, until(() -> invoke(txns, "--bootstrap-server", b, "describe-producers", "--topic", t, "--partition", "0"),
          r -> r.status == 0 && r.out.size() >= 2 && r.out.get(1).matches(".*\\s(None|-1)$")));
      producer.close(java.time.Duration.ZERO);
    }
  }

  /** Header names whose cells are producer ids, record or wall-clock times, or durations: they differ between runs. */
  private static final java.util.Set<String> VARYING_COLUMNS = java.util.Set.of(
      "ProducerId", "LastTimestamp", "CurrentTransactionStartTimeMs", "TransactionDurationMs", "TransactionStartTimeMs", "Duration(min)");

  /**
   * Records a kafka-transactions step whose output is a table padded to its widest cells (ToolsUtils.prettyPrintTable):
   * cells are separated by one tab instead of the padding, and the cells of VARYING_COLUMNS replaced (-1 stays).
   */
  private void table(String name, int expectedStatus, Run r) {
    List<String> out = new ArrayList<>();
    String[] header = null;
    for (String line : r.out) {
      String[] cells = line.strip().split("\\s+");
      if (header == null && cells.length > 1 && java.util.Arrays.stream(cells).allMatch(c -> c.matches("[A-Z][A-Za-z]+(\\(min\\))?"))) {
        header = cells;
      } else if (header != null && cells.length == header.length && !RAW) {
        for (int i = 0; i < cells.length; i++) {
          if (VARYING_COLUMNS.contains(header[i]) && !cells[i].equals("-1")) cells[i] = "<n>";
        }
      }
      out.add(header != null ? String.join("\t", cells) : line);
    }
    record(name, expectedStatus, new Run(r.status, out));
  }

  private interface Main {
    void main(String... args) throws Exception;
  }

  private interface Attempt {
    Run get() throws Exception;
  }

  private Run until(Attempt attempt, java.util.function.Predicate<Run> done) throws Exception {
    long deadline = System.currentTimeMillis() + WAIT_MS;
    Run r = attempt.get();
    while (!done.test(r) && System.currentTimeMillis() < deadline) {
      Thread.sleep(100);
      r = attempt.get();
    }
    return r;
  }

  private void step(String name, int expectedStatus, Main tool, String... args) {
    record(name, expectedStatus, invoke(tool, args));
  }

  private void record(String name, int expectedStatus, Run r) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("exit", r.status);
    m.put("out", r.out);
    result.put(name, m);
    if (r.status != expectedStatus) {
      violations.add(name + ": exit " + r.status + " (expected " + expectedStatus + "): " + (r.out.isEmpty() ? "" : r.out.get(0)));
    }
  }

  /** Runs one tool's main with stdout and stderr captured (both are what a user of the tool sees). */
  private Run invoke(Main tool, String... args) {
    ByteArrayOutputStream buf = new ByteArrayOutputStream();
    PrintStream capture = new PrintStream(buf, true, StandardCharsets.UTF_8);
    PrintStream out = System.out;
    PrintStream err = System.err;
    printed = buf;
    printedAtExit = -1;
    exitStatus = 0;
    System.setOut(capture);
    System.setErr(capture);
    try {
      tool.main(args);
    } catch (ToolExit e) {
      // recorded by exit()
    } catch (Throwable e) {
      if (printedAtExit < 0) {
        capture.println("uncaught " + e.getClass().getName() + ": " + e.getMessage());
        exitStatus = -1;
      }
    } finally {
      System.setOut(out);
      System.setErr(err);
    }
    capture.flush();
    byte[] bytes = buf.toByteArray();
    String text = new String(bytes, 0, printedAtExit < 0 ? bytes.length : printedAtExit, StandardCharsets.UTF_8);
    List<String> lines = new ArrayList<>();
    for (String line : text.split("\n")) {
      // Stack frames name the tool's source lines and this program's, not anything the broker said.
      if (!line.isBlank() && !line.startsWith("\tat ") && !line.startsWith("\t... ")) {
        lines.add(normalise(line.stripTrailing()));
      }
    }
    return new Run(exitStatus, lines);
  }

  private static final Pattern PORT = Pattern.compile("((?:localhost|127\\.0\\.0\\.1|\\[?::1\\]?)):\\d+");
  /**
   * `Name: figure` fields whose figure is a position in the KRaft metadata log: the finalized features'
   * epoch (the offset of the log's last FeatureLevelRecord) and the log's high watermark. The lag figures
   * stay: one node lags nothing, in any log.
   */
  private static final Pattern LOG_FIGURE = Pattern.compile("\\b(Epoch|HighWatermark): *\\d+");
  /** Uuid.ZERO, which the tools print for "no directory id": kept, as it says something a random id does not. */
  private static final String ZERO_ID = "AAAAAAAAAAAAAAAAAAAAAA";
  /** COMPAT_TOOLS_RAW=1 reports the lines as printed, to look at what normalise replaces. */
  private static final boolean RAW = "1".equals(System.getenv("COMPAT_TOOLS_RAW"));

  private static String dirId(String id) {
    return id.equals(ZERO_ID) ? id : "<dir-id>";
  }

  /** Replaces in one printed line what legitimately differs between two brokers (see the class comment). */
  static String normalise(String line) {
    if (RAW) {
      return line;
    }
    String s = line;
    s = replaceAll(s, Pattern.compile("ClusterId: *\\S+"), m -> "ClusterId: <cluster-id>");
    s = replaceAll(s, Pattern.compile("TopicId: *\\S+"), m -> "TopicId: <topic-id>");
    s = replaceAll(s, Pattern.compile("\"directoryId\": *\"([^\"]*)\""), m -> "\"directoryId\": \"" + dirId(m.group(1)) + "\"");
    s = replaceAll(s, PORT, m -> m.group(1) + ":<port>");
    s = replaceAll(s, LOG_FIGURE, m -> m.group(1) + ": <n>");
    // kafka-metadata-quorum describe --replication, a tab-separated table padded to its widest value:
    // NodeId DirectoryId LogEndOffset Lag LastFetchTimestamp LastCaughtUpTimestamp Status. The padding
    // goes (it follows the values), the log end offset and real times go; -1 ("never") stays.
    String[] cells = s.split("\t", -1);
    if (cells.length == 7 && (cells[0].strip().equals("NodeId") || cells[0].strip().matches("\\d+"))) {
      for (int i = 0; i < cells.length; i++) {
        cells[i] = cells[i].strip();
      }
      if (cells[0].matches("\\d+")) {
        cells[1] = dirId(cells[1]);
        cells[2] = "<n>";
        for (int i = 4; i <= 5; i++) {
          cells[i] = cells[i].equals("-1") ? "-1" : "<ts>";
        }
      }
      s = String.join("\t", cells);
    }
    return s;
  }

  private static String replaceAll(String s, Pattern p, java.util.function.Function<Matcher, String> f) {
    Matcher m = p.matcher(s);
    StringBuilder sb = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(sb, Matcher.quoteReplacement(f.apply(m)));
    }
    m.appendTail(sb);
    return sb.toString();
  }
}
