// Golden data for common/cron: what Quartz 2.3.2's org.quartz.CronExpression (the cron
// dialect of XXL-JOB) answers, so the C++ implementation can be checked against the real thing
// without Java at test time. Run it through generate.sh, which documents the output format.
//
//   java QuartzOracle OUTPUT_FILE   writes the golden file (the cases below)
//   java QuartzOracle --stdin       reads "expression<TAB>zone<TAB>start_ms<TAB>count" lines
//                                   and prints "next" lines for them, for ad-hoc comparisons
//
// Everything is deterministic (fixed instants, fixed random seeds), so re-running with the
// same Quartz and tz data reproduces the file byte for byte.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.text.ParseException;
import java.time.Instant;
import java.time.ZoneId;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Random;
import java.util.TimeZone;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.quartz.CronExpression;

public final class QuartzOracle {
  // Fire times recorded per case.
  private static final int COUNT = 10;

  // Fire times are compared up to the end of 2099. Quartz stops searching at its MAX_YEAR
  // (the current year + 100), so what it answers beyond that changes with the year the file
  // is generated in; "end" in the file means "null or a time after 2099".
  private static final long HORIZON_MS = Instant.parse("2100-01-01T00:00:00Z").toEpochMilli();

  // A few expressions make Quartz loop forever; such cases are left out.
  private static final long TIMEOUT_MS = 5000;

  private static final String[] ZONES = {
      "UTC", "America/New_York", "Europe/London", "Europe/Berlin", "Australia/Sydney",
      "Australia/Lord_Howe", "Asia/Kolkata", "America/Sao_Paulo", "Pacific/Chatham"};

  // One of every construct, evaluated in three zones from three start instants.
  private static final String[] CONSTRUCTS = {
      // seconds, minutes, hours: values, lists, ranges, steps, wrapping ranges
      "* * * * * ?", "0 * * * * ?", "0 0 * * * ?", "0 0 0 * * ?", "30 15 10 * * ?",
      "0 */5 * * * ?", "*/10 * * * * ?", "/20 * * * * ?", "15/20 * * * * ?", "0 5/15 * * * ?",
      "0 0 */3 * * ?", "0 0 9-17 * * ?", "0 0/30 9-17 * * ?", "0 0 9-17/2 * * ?",
      "0 0 22-2 * * ?", "50-10 * * * * ?", "0 50-10/7 * * * ?", "0 0,15,30,45 * * * ?",
      "5,10-12,*/20 * * * * ?", "59 59 23 * * ?", "0 0 0-23/5 * * ?",
      // year
      "0 0 12 * * ? 2027", "0 0 0 1 1 ? 2030", "0 0 0 1 1 ? 2025", "0 0 0 * * ? 2027-2028",
      "0 0 0 1 * ? */2", "0 0 0 1 1 ? 2026/3", "0 0 0 1 1 ? 2027,2029,2099",
      "0 0 0 29 2 ? 2028,2032", "0 15 10 ? * 6#3 2027", "0 0 12 ? * 6L 2027-2028",
      // month
      "0 0 12 1 JAN,APR,JUL,OCT ?", "0 0 12 ? jan-mar MON", "0 0 12 15 NOV-FEB ?",
      "0 0 12 1 */4 ?", "0 0 12 1 2/5 ?", "0 0 12 1 12 ?", "0 0 12 10 10-2/3 ?",
      // day of month
      "0 0 12 31 * ?", "0 0 12 30 * ?", "0 0 0 29 2 ?", "0 0 0 28-29 2 ?", "0 0 0 30 2 ?",
      "0 0 0 31 2,4,6,9,11 ?", "0 0 0 1,15 * ?", "0 0 0 25-5 * ?", "0 0 0 */10 * ?",
      "0 0 0 L * ?", "0 0 0 L 2 ?", "0 30 8 L-3 * ?", "0 30 8 L-30 * ?", "0 0 8 LW * ?",
      "0 0 8 L-2W * ?", "0 0 8 15W * ?", "0 0 8 1W * ?", "0 0 8 31W * ?", "0 0 8 30W * ?",
      "0 0 8 lw * ?", "59 59 23 31 12 ?", "59 59 23 L 12 ?", "0 0 0 1 1 ?",
      // day of week
      "0 0 12 ? * MON-FRI", "0 15 10 ? * MON-FRI", "0 0 12 ? * 2-6", "0 0 12 ? * SUN",
      "0 0 12 ? * 1,7", "0 0 12 ? * SAT,SUN", "0 0 12 ? * FRI-MON", "0 0 12 ? * 6-2",
      "0 0 12 ? * */2", "0 0 12 ? * 2/3", "0 0 12 ? * L", "0 0 12 ? * 6L", "0 15 10 ? * 6L",
      "0 0 12 ? * 1L", "0 0 12 ? * FRIL", "0 0 12 ? * 2#1", "0 0 12 ? * 6#3",
      "0 0 12 ? * MON#5", "0 0 12 ? * 1#5", "0 0 12 ? 2 2#5", "0 0 12 ? * 7#4",
      "0 0 0 ? * *", "0 0 0 ? 1 2#1", "1-5 0 0 1 1 ?", "0 0 12 ? * Tue,thu"};

  // Expressions whose answers move around daylight-saving transitions.
  private static final String[] DST_EXPRESSIONS = {
      "*/20 * * * * ?", "0 * * * * ?", "0 */15 * * * ?", "0 */20 * * * ?", "30 */7 * * * ?",
      "0 0 * * * ?", "0 30 * * * ?", "0 0 */2 * * ?", "0 30 2 * * ?", "0 0 2 * * ?",
      "0 30 1 * * ?", "0 0 1 * * ?", "0 0 3 * * ?", "0 45 2 * * ?", "0 15 2 * * ?",
      "0 45 1 * * ?", "0 15 3 * * ?", "0 0 0 * * ?", "0 0 1-3 * * ?", "0 0,30 0-4 * * ?",
      "0 59 1 * * ?", "59 59 1 * * ?", "0 0 2 ? * SUN", "0 30 2 ? * 1#2", "0 0 2 ? * 1L",
      "0 15 10 ? * 6L", "0 0 2 L * ?", "0 30 2 1W * ?", "0 0 22-2 * * ?", "0 0 12 ? * MON-FRI"};

  private static final String[] EVERY_SECOND = {"* * * * * ?", "*/5 * * * * ?"};

  // Expressions Quartz refuses; cronwheel must refuse every one of them.
  private static final String[] REJECTED = {
      "", "* * * * *", "0 0 12 * *", "* * * * ? * * *x", "60 * * * * ?", "* 60 * * * ?",
      "* * 24 * * ?", "* * * 32 * ?", "* * * 0 * ?", "* * * * 13 ?", "* * * * 0 ?",
      "* * * ? * 8", "* * * ? * 0", "0 0 12 * * *", "0 0 12 ? * ?", "0 0 12 5 * MON",
      "? * * * * ?", "* ? * * * ?", "* * ? * * ?", "* * * * ? ?", "* * * ? * ? 2030 x",
      "*/60 * * * * ?", "0/60 * * * * ?", "* */60 * * * ?", "* * */24 * * ?", "* * * */32 * ?",
      "* * * * */13 ?", "* * * ? * */8", "5/ * * * * ?", "*/ * * * * ?", "/ * * * * ?",
      "5- * * * * ?", "5-x * * * * ?", "x * * * * ?", "0 0 12 * FOO ?", "0 0 12 ? * FOO",
      "0 0 12 ? * MON-FOO", "0 0 12 ? JAN-FOO *", "0 0 MON * * ?", "0 0 12 * MON ?",
      "0 0 12 ? * JAN", "0 0 12 L * MON", "0 0 12 L,5 * ?", "0 0 12 5,L * ?",
      "0 0 12 LW,5 * ?", "0 0 12 L-31 * ?", "0 0 12 L- * ?", "0 0 12 LX * ?", "0 0 12 ? * 5L,3",
      "0 0 12 ? * 2#6", "0 0 12 ? * 2#0", "0 0 12 ? * 2#", "0 0 12 ? * 2#1,3#2",
      "0 0 12 ? * 2#1#2", "0 0 12 ? * 8L", "0 0 12 ? * 0L", "0 0 12 5L * ?", "0 0 12 32W * ?",
      "0 0 12 5W ? *", "0 0 12W * * ?", "0 0 12 ? * 5W", "0 0 12 5# * ?", "0 0 12# * * ?",
      "0 0 5L * * ?", "0 0 12 * * ? 2030-2020", "0 0 12 * * ? x", "0 0 12 * * ? 2030/x",
      "0 0 12 ?x1 * MON", "0 0 12 1-x * ?", "0 0 12 1/x * ?", "0 0 12 1-5/x * ?", "0 0 12 W * ?",
      "0 0 12 ? * MO", "0 0 12 JA * ?", "0 0 12 ? * 1-8", "0 0 12 1-32 * ?", "0 0 25-2 * * ?",
      "0 0 12 ? * -1", "-1 * * * * ?", "99999999999 * * * * ?", "0 0 12 * 1-13 ?",
      "0 0 12 ? * SUN-8", "*/x * * * * ?", "0 0 12 ? * */x", "0 0 12 L-3X * ?"};

  // Expressions Quartz accepts although part of them is ignored or meaningless; cronwheel
  // refuses them on purpose (the file records Quartz's acceptance as evidence).
  private static final String[] LENIENT = {
      "0 0 12abc * * ?", "5X * * * * ?", "*X * * * * ?", "** * * * * ?", "0 0 12 ?X * MON",
      "0 0 12 ? * MONDAY", "0 0 12 ? * MON-FRI/2", "0 0 12 1 JAN/2 ?", "0 0 12 1 JAN-JUN/2 ?",
      "0 0 12 ?,5 * MON", "0 0 12 5,? * MON", "0 0 12 1W,15 * ?", "0 0 12 15,1W * ?",
      "0 0 12 ? * 6#3,2", "0 0 12 ? * L-3", "0 0 12 0W * ?", "0 0 12 ? * 9#3", "0 0 12 5-0 * ?",
      "0 0 12 ? * 3-0", "0 0 12 1 5-0 ?", "*/0 * * * * ?", "0/0 * * * * ?", "0-59/60 * * * * ?",
      "0 0 12 1-5-7 * ?", "5/10/3 * * * * ?", "0 0 12 5-10W * ?", "0 0 L * * ?",
      "0 0 12 * * ? 2150", "0 0 12 * * ? 1960", "0 0 12 * * ? 2030 extra", "0 0 12 ,5 * ?",
      "0 0 12 5,,6 * ?", "*/+5 * * * * ?", "0 0 12 ? * MON-FRIL", "0 0 12 10-15/3W * ?"};

  private static final Instant[] CONSTRUCT_STARTS = {
      Instant.parse("2026-02-26T13:47:31Z"),  // an ordinary afternoon
      Instant.parse("2027-12-30T23:59:59Z"),  // just before a year rollover
      Instant.parse("2028-02-27T10:00:00Z")}; // before a leap day

  private static ExecutorService executor = Executors.newSingleThreadExecutor(daemon());

  public static void main(String[] args) throws Exception {
    if (args.length == 1 && args[0].equals("--stdin")) {
      readStdin();
      return;
    }
    if (args.length != 1) {
      System.err.println("usage: java QuartzOracle OUTPUT_FILE | --stdin");
      System.exit(2);
    }
    List<String> lines = new ArrayList<>();
    List<String> body = new ArrayList<>();
    int skipped = 0;
    skipped += constructCases(body);
    skipped += dstCases(body);
    skipped += randomCases(body);
    rejectedCases(body);
    lenientCases(body);

    lines.add("# Golden data: next fire times from Quartz " + quartzVersion()
        + " org.quartz.CronExpression.getTimeAfter with setTimeZone(zone).");
    lines.add("# Generated by tests/unit/common/cron/quartz/generate.sh (QuartzOracle.java); do not edit.");
    lines.add("# Java " + System.getProperty("java.version") + ", Java tzdb "
        + ZoneRulesProvider.getVersions("UTC").lastKey() + ", Quartz MAX_YEAR "
        + CronExpression.MAX_YEAR + ", " + skipped + " case(s) left out because Quartz never returned.");
    lines.add("#");
    lines.add("# next<TAB>expression<TAB>zone<TAB>start_ms<TAB>fire times");
    lines.add("#   fire times: epoch ms separated by spaces, each the next after the previous (the");
    lines.add("#   first after start_ms); a final \"end\" means Quartz then answered null or a time");
    lines.add("#   after 2099 (beyond 2099 its answers depend on the year it runs in).");
    lines.add("# reject<TAB>expression<TAB>Quartz's ParseException message");
    lines.add("# lenient<TAB>expression<TAB>Quartz accepts it; cronwheel refuses it on purpose");
    lines.addAll(body);
    Files.write(Paths.get(args[0]), lines, StandardCharsets.UTF_8);
    System.err.println("wrote " + body.size() + " cases to " + args[0] + ", skipped " + skipped);
    System.exit(0);  // daemon threads of timed-out cases may still spin
  }

  private static int constructCases(List<String> out) {
    int skipped = 0;
    for (int i = 0; i < CONSTRUCTS.length; i++) {
      String[] zones = {"UTC", "America/New_York", ZONES[2 + i % (ZONES.length - 2)]};
      for (int k = 0; k < zones.length; k++) {
        skipped += next(out, CONSTRUCTS[i], zones[k], CONSTRUCT_STARTS[k].toEpochMilli()) ? 0 : 1;
      }
    }
    return skipped;
  }

  // Around every transition of the daylight-saving zones in 2024-2027, some in 2040 (past the
  // transitions the tz files list explicitly), and São Paulo's last ones (it dropped daylight
  // saving in 2019): from 2 hours before, 30 minutes before (inside the repeated hour of a
  // fall-back), 10 seconds before and 20 minutes after.
  private static int dstCases(List<String> out) {
    String[][] ranges = {
        {"America/New_York", "2024", "2028"}, {"Europe/London", "2024", "2028"},
        {"Europe/Berlin", "2024", "2028"}, {"Australia/Sydney", "2024", "2028"},
        {"Australia/Lord_Howe", "2024", "2028"}, {"Pacific/Chatham", "2024", "2028"},
        {"America/Sao_Paulo", "2017", "2020"}, {"America/New_York", "2040", "2041"},
        {"Australia/Sydney", "2040", "2041"}, {"Australia/Lord_Howe", "2040", "2041"},
        {"Pacific/Chatham", "2040", "2041"}};
    long[] offsets = {-2 * 3600_000L, -30 * 60_000L, -10_000L, 20 * 60_000L};
    int skipped = 0;
    int pick = 0;
    for (String[] range : ranges) {
      for (Instant transition : transitions(range[0], range[1], range[2])) {
        for (long offset : offsets) {
          long start = transition.toEpochMilli() + offset;
          if (offset == -10_000L) {
            skipped += next(out, EVERY_SECOND[pick++ % 2], range[0], start) ? 0 : 1;
            continue;
          }
          for (int j = 0; j < 2; j++) {
            String expression = DST_EXPRESSIONS[(pick++ * 7) % DST_EXPRESSIONS.length];
            skipped += next(out, expression, range[0], start) ? 0 : 1;
          }
        }
      }
    }
    return skipped;
  }

  private static List<Instant> transitions(String zone, String fromYear, String toYear) {
    ZoneRules rules = ZoneId.of(zone).getRules();
    Instant end = Instant.parse(toYear + "-01-01T00:00:00Z");
    List<Instant> result = new ArrayList<>();
    Instant t = Instant.parse(fromYear + "-01-01T00:00:00Z");
    while (true) {
      ZoneOffsetTransition next = rules.nextTransition(t);
      if (next == null || !next.getInstant().isBefore(end)) break;
      t = next.getInstant();
      result.add(t);
    }
    return result;
  }

  // Seeded random expressions over the whole grammar, random zones and instants.
  private static int randomCases(List<String> out) {
    Random random = new Random(20261122L);
    long from = Instant.parse("2024-01-01T00:00:00Z").toEpochMilli();
    long to = Instant.parse("2031-01-01T00:00:00Z").toEpochMilli();
    int skipped = 0;
    for (int i = 0; i < 240; i++) {
      String expression = randomExpression(random);
      String zone = ZONES[random.nextInt(ZONES.length)];
      long start = from + (long) (random.nextDouble() * (to - from)) / 1000 * 1000;
      if (random.nextInt(8) == 0) start += 1 + random.nextInt(999);
      skipped += next(out, expression, zone, start) ? 0 : 1;
    }
    return skipped;
  }

  private static final String[] MONTHS = {
      "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
  private static final String[] DAYS = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};
  private static final int[][] RANGES = {{0, 59}, {0, 59}, {0, 23}, {1, 31}, {1, 12}, {1, 7}};

  private static String randomExpression(Random r) {
    String[] f = new String[6];
    for (int i = 0; i < 6; i++) f[i] = randomField(r, i);
    if (r.nextBoolean()) {
      f[3] = "?";
      int special = r.nextInt(6);
      if (special == 0) f[5] = (1 + r.nextInt(7)) + "L";
      if (special == 1) f[5] = (1 + r.nextInt(7)) + "#" + (1 + r.nextInt(5));
      if (special == 2) f[5] = DAYS[r.nextInt(7)] + "#" + (1 + r.nextInt(4));
    } else {
      f[5] = "?";
      int special = r.nextInt(8);
      if (special == 0) f[3] = "L";
      if (special == 1) f[3] = "L-" + r.nextInt(6);
      if (special == 2) f[3] = "LW";
      if (special == 3) f[3] = (1 + r.nextInt(31)) + "W";
    }
    String expression = String.join(" ", f);
    int year = r.nextInt(5);
    if (year == 0) expression += " *";
    if (year == 1) expression += " " + (2024 + r.nextInt(8));
    if (year == 2) expression += " " + (2024 + r.nextInt(4)) + "-" + (2028 + r.nextInt(10));
    if (year == 3) expression += " " + (2020 + r.nextInt(10)) + "/" + (1 + r.nextInt(4));
    return expression;
  }

  private static String randomField(Random r, int field) {
    int items = r.nextInt(10) < 7 ? 1 : 2 + r.nextInt(2);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < items; i++) {
      if (i > 0) b.append(',');
      b.append(randomItem(r, field));
    }
    return b.toString();
  }

  private static String randomItem(Random r, int field) {
    int lo = RANGES[field][0];
    int hi = RANGES[field][1];
    int kind = r.nextInt(10);
    boolean names = (field == 4 || field == 5) && r.nextInt(3) == 0;
    switch (kind) {
      case 0:
      case 1:
        return "*";
      case 2:
      case 3:
        return names ? name(field, lo + r.nextInt(hi - lo + 1)) : "" + (lo + r.nextInt(hi - lo + 1));
      case 4:
      case 5: {
        int a = lo + r.nextInt(hi - lo + 1);
        int c = lo + r.nextInt(hi - lo + 1);
        return names ? name(field, a) + "-" + name(field, c) : a + "-" + c;
      }
      case 6:
        return "*/" + (1 + r.nextInt(Math.max(1, (hi - lo) / 2)));
      case 7:
        return (lo + r.nextInt(hi - lo + 1)) + "/" + (1 + r.nextInt(Math.max(1, (hi - lo) / 2)));
      default: {
        int a = lo + r.nextInt(hi - lo + 1);
        int c = lo + r.nextInt(hi - lo + 1);
        return a + "-" + c + "/" + (1 + r.nextInt(Math.max(1, (hi - lo) / 3)));
      }
    }
  }

  private static String name(int field, int value) {
    String n = field == 4 ? MONTHS[value - 1] : DAYS[value - 1];
    return n;
  }

  private static void rejectedCases(List<String> out) {
    List<String> rejected = new ArrayList<>();
    for (String e : REJECTED) rejected.add(e);
    // Mutations of valid expressions, kept when Quartz refuses them.
    Random random = new Random(7L);
    String[] junk = {"X", "-", "/", ",", "?", "L", "W", "#", "#9", "/0", "60", "32", "13", "8", "!"};
    int added = 0;
    while (added < 80) {
      String[] f = randomExpression(random).split(" ");
      int i = random.nextInt(f.length);
      int p = random.nextInt(f[i].length() + 1);
      f[i] = f[i].substring(0, p) + junk[random.nextInt(junk.length)] + f[i].substring(p);
      String e = String.join(" ", f);
      if (parseError(e) != null && !rejected.contains(e)) {
        rejected.add(e);
        added++;
      }
    }
    for (String e : rejected) {
      String error = parseError(e);
      if (error == null) throw new IllegalStateException("Quartz accepts '" + e + "'");
      out.add("reject\t" + e + "\t" + error.replace('\t', ' ').replace('\n', ' '));
    }
  }

  private static void lenientCases(List<String> out) {
    for (String e : LENIENT) {
      String error = parseError(e);
      if (error != null) throw new IllegalStateException("Quartz refuses '" + e + "': " + error);
      out.add("lenient\t" + e + "\tQuartz accepts");
    }
  }

  private static String parseError(String expression) {
    try {
      new CronExpression(expression);
      return null;
    } catch (ParseException e) {
      return e.getMessage();
    }
  }

  // Appends a "next" line; false when Quartz did not answer in time.
  private static boolean next(List<String> out, String expression, String zone, long start) {
    return next(out, expression, zone, start, COUNT);
  }

  private static boolean next(List<String> out, String expression, String zone, long start,
      int count) {
    Future<String> result = executor.submit(() -> fireTimes(expression, zone, start, count));
    try {
      out.add("next\t" + expression + "\t" + zone + "\t" + start + "\t"
          + result.get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
      return true;
    } catch (TimeoutException e) {
      System.err.println("left out (Quartz does not return): " + expression + " in " + zone
          + " after " + start);
      result.cancel(true);
      executor.shutdownNow();
      executor = Executors.newSingleThreadExecutor(daemon());
      return false;
    } catch (Exception e) {
      throw new IllegalStateException(expression + " in " + zone, e);
    }
  }

  private static String fireTimes(String expression, String zone, long start, int count)
      throws ParseException {
    CronExpression cron = new CronExpression(expression);
    cron.setTimeZone(TimeZone.getTimeZone(ZoneId.of(zone)));
    StringBuilder b = new StringBuilder();
    long t = start;
    for (int i = 0; i < count; i++) {
      Date next = cron.getTimeAfter(new Date(t));
      if (b.length() > 0) b.append(' ');
      if (next == null || next.getTime() >= HORIZON_MS) {
        b.append("end");
        break;
      }
      t = next.getTime();
      b.append(t);
    }
    return b.toString();
  }

  private static void readStdin() throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) continue;
      String[] p = line.split("\t");
      List<String> out = new ArrayList<>();
      String error = parseError(p[0]);
      if (error != null) {
        System.out.println("reject\t" + p[0] + "\t" + error);
      } else if (next(out, p[0], p[1], Long.parseLong(p[2]),
          p.length > 3 ? Integer.parseInt(p[3]) : COUNT)) {
        System.out.println(out.get(0));
      } else {
        System.out.println("timeout\t" + line);
      }
    }
    System.exit(0);
  }

  // Debian's quartz2.jar carries no version in its manifest; its path names it.
  private static String quartzVersion() {
    String v = CronExpression.class.getPackage().getImplementationVersion();
    if (v != null) return v;
    String jar = CronExpression.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    try {
      jar = Paths.get(jar).toRealPath().getFileName().toString();
    } catch (java.io.IOException e) {
      // keep the path as given
    }
    return "(" + jar + ")";
  }

  private static java.util.concurrent.ThreadFactory daemon() {
    return runnable -> {
      Thread thread = new Thread(runnable);
      thread.setDaemon(true);
      return thread;
    };
  }
}
