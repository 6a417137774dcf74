// Golden data for common/cron/business_calendar: what Quartz 2.3.2's HolidayCalendar,
// WeeklyCalendar, DailyCalendar and AnnualCalendar, alone and chained through their base
// calendars, answer, so BusinessCalendar can be checked against the real thing without Java at
// test time. Run it through generate_calendars.sh, which documents the output format.
//
//   java QuartzCalendarOracle OUTPUT_FILE
//
// Each calendar below is one CalendarSpec and, beside it, the Quartz chain that means the same:
//   WeeklyCalendar (the days not excluded)  -> business_days, checked in mode kOnly
//   HolidayCalendar (dates of a year)       -> excluded_dates with that year
//   AnnualCalendar (a month and day)        -> excluded_dates with year 0 (every year)
//   DailyCalendar (one range, not inverted) -> one of excluded_times
// A chain is the conjunction of its parts (BaseCalendar asks its base first), so the order of
// the parts does not change what it answers; some calendars chain the same parts in different
// orders on purpose.
//
// Where the two models part ways on purpose, the file says so instead of leaving the case out
// silently: DailyCalendar.isTimeIncluded compares an instant strictly with the start and the end
// of its day, so it excludes 00:00:00.000 and 23:59:59.999 of every day whatever its range, and
// it places a range's ends with a lenient java.util.Calendar, so on a day with a daylight-saving
// transition its ends can land an hour away from the wall times they name. cronwheel's ranges
// are wall time (business_calendar.h). The instants where Quartz's answer differs from a
// wall-time range are written as "quirk" lines with both answers; fire-time cases whose search
// passes through such an instant are left out (the header counts them).
//
// Everything is deterministic (fixed instants), so re-running with the same Quartz and tz data
// reproduces the file byte for byte.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.DayOfWeek;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.LocalTime;
import java.time.OffsetDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.zone.ZoneOffsetTransition;
import java.time.zone.ZoneRules;
import java.time.zone.ZoneRulesProvider;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.TimeZone;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.quartz.CronExpression;
import org.quartz.CronScheduleBuilder;
import org.quartz.TriggerBuilder;
import org.quartz.TriggerUtils;
import org.quartz.impl.calendar.AnnualCalendar;
import org.quartz.impl.calendar.BaseCalendar;
import org.quartz.impl.calendar.DailyCalendar;
import org.quartz.impl.calendar.HolidayCalendar;
import org.quartz.impl.calendar.WeeklyCalendar;
import org.quartz.spi.OperableTrigger;

public final class QuartzCalendarOracle {
  // Fire times recorded per case.
  private static final int COUNT = 10;

  // Consecutive fire times further apart than this are refused: Quartz gives up at its MAX_YEAR
  // (the current year + 100) and cronwheel after kCalendarSearchMs, so a calendar that blocks a
  // schedule for years has no answer the two share.
  private static final long MAX_GAP_MS = 400L * 24 * 3600 * 1000;

  // A schedule still going past this instant has not ended.
  private static final long HORIZON_MS = Instant.parse("2100-01-01T00:00:00Z").toEpochMilli();

  private static final long TIMEOUT_MS = 20_000;

  private static final String[] WEEKDAYS = {"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"};

  // One part of a chain: a Quartz calendar without a base (built anew for each use), and how it
  // reads in the spec column.
  private static final class Part {
    final String kind;  // weekly, holiday, annual, daily
    final String spec;
    final Supplier<BaseCalendar> make;
    final int startS;  // daily only: the range in seconds of the day
    final int endS;

    Part(String kind, String spec, Supplier<BaseCalendar> make, int startS, int endS) {
      this.kind = kind;
      this.spec = spec;
      this.make = make;
      this.startS = startS;
      this.endS = endS;
    }
  }

  private static final class Fire {
    final String cron;
    final String zone;
    final long startMs;

    Fire(String cron, String zone, String start) {
      this.cron = cron;
      this.zone = zone;
      this.startMs = OffsetDateTime.parse(start).toInstant().toEpochMilli();
      if (startMs % 1000 != 0) throw new IllegalArgumentException("start in whole seconds: " + start);
    }
  }

  private static final class Cal {
    final String id;
    final String zone;
    final int year;  // the year whose transitions and sample week are probed
    final List<Part> parts = new ArrayList<>();  // the chain, top first
    final List<LocalDate> dates = new ArrayList<>();  // days probed around
    final List<Fire> fires = new ArrayList<>();
    org.quartz.Calendar chain;
    List<BaseCalendar> standalone;

    Cal(String id, String zone, int year) {
      this.id = id;
      this.zone = zone;
      this.year = year;
    }

    TimeZone tz() {
      return TimeZone.getTimeZone(ZoneId.of(zone));
    }

    // The days of the week that are business days, e.g. "MON-FRI", "SAT,SUN", "WED".
    Cal weekly(String days) {
      boolean[] business = new boolean[7];
      for (String item : days.split(",")) {
        String[] range = item.split("-");
        int from = weekday(range[0]);
        int to = weekday(range[range.length - 1]);
        for (int d = from; d <= to; d++) business[d] = true;
      }
      List<String> names = new ArrayList<>();
      List<String> excluded = new ArrayList<>();
      for (int d = 0; d < 7; d++) (business[d] ? names : excluded).add(WEEKDAYS[d]);
      parts.add(new Part("weekly", "weekly=" + String.join(",", names), () -> {
        WeeklyCalendar c = new WeeklyCalendar();
        c.setTimeZone(tz());
        // Quartz's WeeklyCalendar excludes Saturday and Sunday until told otherwise.
        for (int d = 0; d < 7; d++) c.setDayExcluded(javaDayOfWeek(d), !business[d]);
        return c;
      }, 0, 0));
      return this;
    }

    Cal holiday(String... isoDates) {
      parts.add(new Part("holiday", "holiday=" + String.join(",", isoDates), () -> {
        HolidayCalendar c = new HolidayCalendar();
        // The zone first: addExcludedDate keeps the start of the date's day in the zone set then.
        c.setTimeZone(tz());
        for (String d : isoDates) {
          c.addExcludedDate(Date.from(LocalDate.parse(d).atTime(12, 0).atZone(ZoneId.of(zone)).toInstant()));
        }
        return c;
      }, 0, 0));
      for (String d : isoDates) dates.add(LocalDate.parse(d));
      return this;
    }

    // Month-days "MM-DD" excluded every year.
    Cal annual(String... monthDays) {
      parts.add(new Part("annual", "annual=" + String.join(",", monthDays), () -> {
        AnnualCalendar c = new AnnualCalendar();
        c.setTimeZone(tz());
        for (String md : monthDays) {
          // A leap year, so that 02-29 is a day; only month and day are compared.
          java.util.Calendar day = java.util.Calendar.getInstance(tz());
          day.clear();
          day.set(2028, Integer.parseInt(md.substring(0, 2)) - 1, Integer.parseInt(md.substring(3)), 12, 0);
          c.setDayExcluded(day, true);
        }
        return c;
      }, 0, 0));
      for (String md : monthDays) {
        for (int y = year; y <= year + 1; y++) {
          try {
            dates.add(LocalDate.parse(y + "-" + md));
          } catch (java.time.DateTimeException e) {
            // 02-29 of a common year
          }
        }
      }
      return this;
    }

    // A DailyCalendar range "HH:MM:SS" to "HH:MM:SS", both ends excluded to the millisecond.
    Cal daily(String start, String end) {
      parts.add(new Part("daily", "daily=" + start + "-" + end, () -> {
        DailyCalendar c = new DailyCalendar(start, end);
        c.setTimeZone(tz());
        return c;
      }, LocalTime.parse(start).toSecondOfDay(), LocalTime.parse(end).toSecondOfDay()));
      return this;
    }

    Cal dates(String... isoDates) {
      for (String d : isoDates) dates.add(LocalDate.parse(d));
      return this;
    }

    Cal fire(String cron, String zone, String start) {
      fires.add(new Fire(cron, zone, start));
      return this;
    }

    void build() {
      List<BaseCalendar> chainParts = new ArrayList<>();
      standalone = new ArrayList<>();
      for (Part p : parts) {
        chainParts.add(p.make.get());
        standalone.add(p.make.get());
      }
      // The base is set after each part has its own rules: AnnualCalendar.setDayExcluded asks
      // its base first and would not record a day the base already excludes.
      for (int i = 0; i + 1 < chainParts.size(); i++) chainParts.get(i).setBaseCalendar(chainParts.get(i + 1));
      chain = chainParts.get(0);
    }

    String spec() {
      List<String> s = new ArrayList<>();
      for (Part p : parts) s.add(p.spec);
      return String.join(" ", s);
    }

    String chainDescription() {
      List<String> s = new ArrayList<>();
      for (Part p : parts) {
        String name = p.kind.substring(0, 1).toUpperCase() + p.kind.substring(1) + "Calendar";
        s.add(name);
      }
      return String.join(" > ", s);
    }
  }

  private static int weekday(String name) {
    for (int d = 0; d < 7; d++) if (WEEKDAYS[d].equals(name)) return d;
    throw new IllegalArgumentException(name);
  }

  // [0] Monday ... [6] Sunday to java.util.Calendar's SUNDAY=1 ... SATURDAY=7.
  private static int javaDayOfWeek(int d) {
    return d == 6 ? java.util.Calendar.SUNDAY : java.util.Calendar.MONDAY + d;
  }

  private static List<Cal> calendars() {
    List<Cal> c = new ArrayList<>();

    c.add(new Cal("utc-holidays", "UTC", 2026)
        .holiday("2026-01-01", "2026-12-25", "2026-12-26", "2026-12-31")
        .fire("0 0 0 * * ?", "UTC", "2026-12-20T00:00:00Z")
        .fire("0 0 12 * * ?", "Asia/Shanghai", "2026-12-22T00:00:00Z")
        .fire("0 0 23 * * ?", "America/New_York", "2026-12-20T00:00:00Z")
        .fire("*/20 59 23 * * ?", "UTC", "2026-12-24T23:58:00Z"));

    c.add(new Cal("ny-holidays", "America/New_York", 2026)
        .holiday("2026-03-08", "2026-11-01", "2026-11-26", "2026-12-25")
        .fire("0 30 1 * * ?", "America/New_York", "2026-10-29T00:00:00-04:00")
        .fire("0 0 * * * ?", "UTC", "2026-03-07T20:00:00Z")
        .fire("0 0 * * * ?", "UTC", "2026-10-31T22:00:00Z")
        .fire("0 0 9 ? * MON-FRI", "Europe/Berlin", "2026-11-20T00:00:00Z")
        .fire("*/15 * * * * ?", "America/New_York", "2026-11-25T23:59:00-05:00")
        .fire("0 0 0 * * ?", "Asia/Shanghai", "2026-12-22T00:00:00Z"));

    c.add(new Cal("ny-weekdays", "America/New_York", 2026)
        .weekly("MON-FRI")
        .fire("0 0 9 * * ?", "America/New_York", "2026-03-05T00:00:00-05:00")
        .fire("0 0 6 * * ?", "Asia/Shanghai", "2026-03-05T00:00:00Z")
        .fire("0 0 */6 * * ?", "UTC", "2026-03-06T00:00:00Z")
        .fire("0 30 2 * * ?", "Europe/Berlin", "2026-03-26T00:00:00Z")
        .fire("0 0 0 * * ?", "America/New_York", "2026-10-29T00:00:00-04:00"));

    c.add(new Cal("ny-weekdays-holidays", "America/New_York", 2026)
        .weekly("MON-FRI")
        .holiday("2026-11-26", "2026-11-27", "2026-12-25", "2027-01-01")
        .fire("0 0 9 ? * *", "America/New_York", "2026-11-20T00:00:00-05:00")
        .fire("0 0 17 ? * MON-FRI", "Europe/London", "2026-11-20T00:00:00Z")
        .fire("0 0 12 * * ?", "UTC", "2026-12-20T00:00:00Z")
        .fire("0 */30 * * * ?", "America/New_York", "2026-11-25T22:00:00-05:00")
        .fire("0 0 12 ? * MON-FRI 2026", "America/New_York", "2026-12-20T00:00:00Z"));

    // The same rules as above with the chain's order reversed.
    c.add(new Cal("ny-holidays-weekdays", "America/New_York", 2026)
        .holiday("2026-11-26", "2026-11-27", "2026-12-25", "2027-01-01")
        .weekly("MON-FRI")
        .fire("0 0 9 ? * *", "America/New_York", "2026-11-20T00:00:00-05:00")
        .fire("0 0 4 * * ?", "Australia/Sydney", "2026-12-20T00:00:00Z"));

    c.add(new Cal("berlin-annual", "Europe/Berlin", 2026)
        .annual("01-01", "05-01", "10-03", "12-24", "12-25", "12-26", "12-31")
        .fire("0 0 0 * * ?", "Europe/Berlin", "2026-12-22T00:00:00+01:00")
        .fire("0 0 12 * * ?", "America/New_York", "2026-12-20T00:00:00Z")
        .fire("0 0 20 * * ?", "America/New_York", "2026-12-20T00:00:00Z")
        .fire("0 0 12 1 * ?", "Europe/Berlin", "2026-03-15T00:00:00Z")
        .fire("0 0 12 ? * FRI", "Europe/Berlin", "2027-04-20T00:00:00Z"));

    c.add(new Cal("berlin-leap-day", "Europe/Berlin", 2027)
        .annual("02-29", "03-01")
        .dates("2027-02-28", "2028-02-28")
        .fire("0 0 12 * * ?", "Europe/Berlin", "2027-02-26T00:00:00Z")
        .fire("0 0 12 * * ?", "Europe/Berlin", "2028-02-26T00:00:00Z")
        .fire("0 0 23 * * ?", "UTC", "2028-02-26T00:00:00Z"));

    c.add(new Cal("berlin-office-hours", "Europe/Berlin", 2026)
        .daily("09:00:00", "17:00:00")
        .fire("0 30 * * * ?", "Europe/Berlin", "2026-03-28T12:00:00+01:00")
        .fire("1 0 17 * * ?", "Europe/Berlin", "2026-03-27T00:00:00Z")
        .fire("0 0/30 8-18 * * ?", "Europe/Berlin", "2026-10-24T08:00:00+02:00")
        .fire("0 10/20 * * * ?", "UTC", "2026-10-24T05:00:00Z")
        .fire("*/1 * * * * ?", "Europe/Berlin", "2026-06-10T16:59:55+02:00")
        .fire("0 0 17 * * ?", "America/New_York", "2026-03-05T00:00:00Z"));

    c.add(new Cal("berlin-night", "Europe/Berlin", 2026)
        .daily("02:00:00", "03:00:00")
        .fire("0 */10 * * * ?", "Europe/Berlin", "2026-03-29T01:30:00+01:00")
        .fire("0 0/10 1-3 * * ?", "Europe/Berlin", "2026-10-25T01:30:00+02:00")
        .fire("0 15 10 * * ?", "Australia/Sydney", "2026-03-27T00:00:00Z")
        .fire("0 */20 * * * ?", "UTC", "2026-03-28T23:30:00Z")
        .fire("0 */20 * * * ?", "UTC", "2026-10-24T23:30:00Z"));

    c.add(new Cal("ny-night-across-dst", "America/New_York", 2026)
        .daily("01:30:00", "02:30:00")
        .fire("0 */15 * * * ?", "America/New_York", "2026-03-08T01:00:00-05:00")
        .fire("0 */15 * * * ?", "America/New_York", "2026-11-01T01:00:00-04:00")
        .fire("0 0 7 * * ?", "UTC", "2026-03-06T00:00:00Z")
        .fire("0 30 3 * * ?", "America/New_York", "2026-03-06T00:00:00Z"));

    c.add(new Cal("ny-inside-gap", "America/New_York", 2026)
        .daily("02:10:00", "02:50:00")
        .fire("0 */20 * * * ?", "America/New_York", "2026-03-08T01:00:00-05:00")
        .fire("0 */20 * * * ?", "America/New_York", "2026-11-01T00:50:00-04:00"));

    c.add(new Cal("sydney-night", "Australia/Sydney", 2026)
        .daily("02:00:00", "03:00:00")
        .fire("0 */15 * * * ?", "Australia/Sydney", "2026-04-05T01:00:00+11:00")
        .fire("0 */15 * * * ?", "Australia/Sydney", "2026-10-04T01:00:00+10:00")
        .fire("0 30 * * * ?", "UTC", "2026-04-04T12:00:00Z")
        .fire("0 0 17 * * ?", "Europe/Berlin", "2026-03-27T00:00:00Z"));

    c.add(new Cal("sydney-lunch-weekdays-holidays", "Australia/Sydney", 2026)
        .daily("12:00:00", "13:00:00")
        .weekly("MON-FRI")
        .holiday("2026-04-03", "2026-04-06", "2026-10-05")
        .fire("0 0 * * * ?", "Australia/Sydney", "2026-04-02T08:00:00+11:00")
        .fire("0 30 12,13 * * ?", "Australia/Sydney", "2026-10-01T00:00:00+10:00")
        .fire("0 0 1 * * ?", "UTC", "2026-04-01T00:00:00Z")
        .fire("0 0 21 ? * SUN-THU", "America/New_York", "2026-09-30T00:00:00Z"));

    c.add(new Cal("shanghai-national-day", "Asia/Shanghai", 2026)
        .weekly("MON-FRI")
        .holiday("2026-10-01", "2026-10-02", "2026-10-03", "2026-10-04", "2026-10-05",
            "2026-10-06", "2026-10-07")
        .fire("0 0 9 * * ?", "Asia/Shanghai", "2026-09-28T00:00:00+08:00")
        .fire("0 */30 * * * ?", "UTC", "2026-09-30T15:00:00Z")
        .fire("* * * * * ?", "Asia/Shanghai", "2026-09-30T23:59:57+08:00")
        .fire("0 0 20 * * ?", "America/New_York", "2026-09-25T00:00:00Z"));

    c.add(new Cal("shanghai-1988-holidays", "Asia/Shanghai", 1988)
        .holiday("1988-04-17", "1988-09-11", "1988-10-01")
        .fire("0 0 * * * ?", "Asia/Shanghai", "1988-04-16T20:00:00+08:00")
        .fire("0 0 0 * * ?", "Asia/Shanghai", "1988-09-08T00:00:00+08:00")
        .fire("0 30 16 * * ?", "UTC", "1988-09-08T00:00:00Z"));

    c.add(new Cal("shanghai-1988-night", "Asia/Shanghai", 1988)
        .daily("01:00:00", "02:30:00")
        .fire("0 */15 * * * ?", "Asia/Shanghai", "1988-04-17T00:30:00+08:00")
        .fire("0 */15 * * * ?", "Asia/Shanghai", "1988-09-11T00:30:00+09:00"));

    c.add(new Cal("utc-wednesdays", "UTC", 2026)
        .weekly("WED")
        .fire("0 0 12 * * ?", "Australia/Sydney", "2026-06-01T00:00:00Z")
        .fire("0 0 23 * * ?", "America/New_York", "2026-06-01T00:00:00Z")
        .fire("0 0 0 * * ?", "UTC", "2026-06-01T00:00:00Z"));

    c.add(new Cal("utc-two-ranges", "UTC", 2026)
        .daily("00:00:01", "06:00:00")
        .daily("18:00:00", "23:59:58")
        .fire("30 59 5,17,23 * * ?", "UTC", "2026-06-01T00:00:00Z")
        .fire("*/1 59 23 * * ?", "UTC", "2026-06-01T23:58:00Z")
        .fire("0 30 * * * ?", "America/New_York", "2026-06-01T00:00:00Z"));

    c.add(new Cal("utc-year-end", "UTC", 2026)
        .annual("12-31", "01-01")
        .holiday("2026-12-30", "2027-01-02")
        .fire("0 0 8 * * ?", "UTC", "2026-12-28T00:00:00Z")
        .fire("0 0 */8 * * ?", "Asia/Shanghai", "2026-12-29T00:00:00Z")
        .fire("0 0 12 31 12 ? 2026-2027", "UTC", "2026-01-01T00:00:00Z"));

    c.add(new Cal("ny-weekend-mornings", "America/New_York", 2026)
        .weekly("SAT,SUN")
        .daily("00:00:00", "06:00:00")
        .fire("0 0 * * * ?", "UTC", "2026-10-30T12:00:00Z")
        .fire("0 0 * * * ?", "America/New_York", "2026-03-07T04:00:00-05:00")
        .fire("0 0 5-7 * * ?", "Europe/Berlin", "2026-10-29T00:00:00Z"));

    c.add(new Cal("berlin-dst-days-evenings", "Europe/Berlin", 2026)
        .holiday("2026-03-29", "2026-10-25")
        .daily("22:00:00", "23:59:59")
        .fire("0 0 * * * ?", "Europe/Berlin", "2026-03-28T20:00:00+01:00")
        .fire("0 0 1-3 * * ?", "Europe/Berlin", "2026-10-24T00:00:00Z"));

    c.add(new Cal("sydney-annual-weekdays", "Australia/Sydney", 2026)
        .annual("12-25", "12-26", "01-01", "01-26")
        .weekly("MON-FRI")
        .fire("0 0 9 ? * *", "Australia/Sydney", "2026-12-20T00:00:00+11:00")
        .fire("0 0 17 * * ?", "America/New_York", "2026-12-20T00:00:00Z")
        .fire("0 0 9 * * ?", "Australia/Sydney", "2027-01-20T00:00:00+11:00"));

    c.add(new Cal("berlin-weekdays-lunch-night", "Europe/Berlin", 2026)
        .weekly("MON-FRI")
        .daily("12:00:00", "13:00:00")
        .daily("00:00:00", "07:00:00")
        .fire("0 0 * * * ?", "UTC", "2026-03-27T12:00:00Z")
        .fire("0 0 12 * * ?", "America/New_York", "2026-10-20T00:00:00Z")
        .fire("0 30 6,7,12,13 ? * *", "Europe/Berlin", "2026-10-22T00:00:00Z"));

    c.add(new Cal("ny-sundays-2027", "America/New_York", 2027)
        .weekly("SUN")
        .holiday("2027-03-14")
        .fire("0 0 */4 * * ?", "UTC", "2027-03-06T00:00:00Z")
        .fire("0 0 */4 * * ?", "UTC", "2027-11-06T00:00:00Z")
        .fire("0 0 0 * * ?", "Asia/Shanghai", "2027-03-10T00:00:00Z"));

    c.add(new Cal("shanghai-morning-weekdays", "Asia/Shanghai", 2026)
        .daily("08:00:00", "08:59:59")
        .weekly("MON-FRI")
        .annual("01-01")
        .fire("0 */20 8,9 * * ?", "Asia/Shanghai", "2026-12-30T00:00:00+08:00")
        .fire("0 0 1 * * ?", "UTC", "2026-12-28T00:00:00Z")
        .fire("0 0 9 * * ?", "Asia/Shanghai", "2026-06-01T00:00:00+08:00"));

    return c;
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 1) {
      System.err.println("usage: java QuartzCalendarOracle OUTPUT_FILE");
      System.exit(2);
    }
    TimeZone.setDefault(TimeZone.getTimeZone("UTC"));  // nothing below may depend on it
    List<String> body = new ArrayList<>();
    int times = 0;
    int quirks = 0;
    int fires = 0;
    List<String> leftOut = new ArrayList<>();
    for (Cal cal : calendars()) {
      cal.build();
      body.add("calendar\t" + cal.id + "\t" + cal.zone + "\t" + cal.spec() + "\t" + cal.chainDescription());
      for (long t : probes(cal)) {
        boolean quartz = cal.chain.isTimeIncluded(t);
        boolean wallTime = wallTimeIncluded(cal, t);
        String local = local(t, cal.zone);
        if (quartz == wallTime) {
          body.add("time\t" + cal.id + "\t" + t + "\t" + answer(quartz) + "\t" + local);
          times++;
        } else {
          body.add("quirk\t" + cal.id + "\t" + t + "\t" + answer(quartz) + "\t" + answer(wallTime)
              + "\t" + quirkReason(cal, t) + "\t" + local);
          quirks++;
        }
      }
      for (Fire f : cal.fires) {
        String result = fireTimes(cal, f);
        if (result.startsWith("quirk ")) {
          leftOut.add(cal.id + " '" + f.cron + "' in " + f.zone + " after " + f.startMs + ": "
              + result.substring(6));
          continue;
        }
        body.add("fires\t" + cal.id + "\t" + f.cron + "\t" + f.zone + "\t" + f.startMs + "\t" + result);
        fires++;
      }
    }

    List<String> lines = new ArrayList<>();
    lines.add("# Golden data: Quartz 2.3.2's calendars (" + quartzJar() + "): isTimeIncluded, and a CronTrigger's");
    lines.add("# fire times with the calendar (TriggerUtils.computeFireTimes).");
    lines.add("# Generated by tests/unit/common/cron/quartz/generate_calendars.sh (QuartzCalendarOracle.java); do not edit.");
    lines.add("# Java " + System.getProperty("java.version") + ", Java tzdb "
        + ZoneRulesProvider.getVersions("UTC").lastKey() + "; " + times + " time, " + quirks + " quirk and "
        + fires + " fires lines; " + leftOut.size() + " fire case(s) left out because their search");
    lines.add("# passes through a quirk instant:");
    for (String l : leftOut) lines.add("#   " + l);
    lines.add("#");
    lines.add("# calendar<TAB>id<TAB>zone<TAB>spec<TAB>the Quartz chain, top first (each part's base is the next)");
    lines.add("#   spec: space-separated parts of one CalendarSpec in that zone:");
    lines.add("#     weekly=MON,TUE,...   business_days (a WeeklyCalendar excluding the other days); such a");
    lines.add("#                          calendar is checked in mode kOnly only, the others in kSkip and kOnly");
    lines.add("#     holiday=YYYY-MM-DD,...  excluded_dates of that year (a HolidayCalendar)");
    lines.add("#     annual=MM-DD,...     excluded_dates of every year, year 0 (an AnnualCalendar)");
    lines.add("#     daily=HH:MM:SS-HH:MM:SS  one of excluded_times (a DailyCalendar, not inverted)");
    lines.add("# time<TAB>id<TAB>epoch_ms<TAB>included|excluded<TAB>the instant in the calendar's zone");
    lines.add("#   Quartz's isTimeIncluded, which a wall-time reading of the ranges agrees with.");
    lines.add("# quirk<TAB>id<TAB>epoch_ms<TAB>Quartz's answer<TAB>cronwheel's answer<TAB>why<TAB>local instant");
    lines.add("#   an instant where DailyCalendar and business_calendar.h differ on purpose: why is");
    lines.add("#   day-bounds (Quartz excludes 00:00:00.000 and 23:59:59.999 of every day whatever the");
    lines.add("#   range) or dst (a day with a transition, where Quartz places a range's ends with a");
    lines.add("#   lenient java.util.Calendar and cronwheel reads them as wall time).");
    lines.add("# fires<TAB>id<TAB>cron expression<TAB>trigger's zone<TAB>start_ms<TAB>fire times");
    lines.add("#   the first " + COUNT + " fire times of a CronTrigger in that zone with the calendar, strictly");
    lines.add("#   after start_ms (epoch ms, space-separated); a final \"end\" means the schedule ended.");
    lines.addAll(body);
    Files.write(Paths.get(args[0]), lines, StandardCharsets.UTF_8);
    System.err.println("wrote " + body.size() + " lines to " + args[0] + "; left out " + leftOut.size());
    System.exit(0);
  }

  private static String answer(boolean included) {
    return included ? "included" : "excluded";
  }

  // The instants asked about: around the start of each probed day (and noon), around each
  // range's ends on an ordinary day and on the days of the zone's transitions (both offsets
  // where a wall time repeats), and around each transition of the probed year.
  private static TreeSet<Long> probes(Cal cal) {
    ZoneId zone = ZoneId.of(cal.zone);
    TreeSet<Long> out = new TreeSet<>();
    List<Instant> transitions = transitions(cal.zone, cal.year);
    List<LocalDate> days = new ArrayList<>(cal.dates);
    for (Instant t : transitions) days.add(t.atZone(zone).toLocalDate());
    boolean weekly = cal.parts.stream().anyMatch(p -> p.kind.equals("weekly"));
    LocalDate monday = LocalDate.of(cal.year, 6, 1);
    while (monday.getDayOfWeek() != DayOfWeek.MONDAY) monday = monday.plusDays(1);
    if (weekly) {
      for (int d = 0; d < 7; d++) days.add(monday.plusDays(d));
    }
    for (LocalDate day : days) {
      long start = day.atStartOfDay(zone).toInstant().toEpochMilli();
      out.add(start - 1);
      out.add(start);
      out.add(start + 1);
      out.add(ZonedDateTime.of(day, LocalTime.NOON, zone).toInstant().toEpochMilli());
    }
    List<LocalDate> rangeDays = new ArrayList<>();
    rangeDays.add(monday.plusDays(2));
    for (Instant t : transitions) rangeDays.add(t.atZone(zone).toLocalDate());
    for (Part p : cal.parts) {
      if (!p.kind.equals("daily")) continue;
      for (LocalDate day : rangeDays) {
        for (int s : new int[] {p.startS, p.endS}) {
          for (long at : wallInstants(day.atTime(LocalTime.ofSecondOfDay(s)), zone)) {
            out.add(at - 1);
            out.add(at);
            out.add(at + 1);
          }
        }
      }
    }
    for (Instant t : transitions) {
      long at = t.toEpochMilli();
      for (long d : new long[] {-3600_000L, -1800_000L, -1, 0, 1, 1800_000L, 3600_000L}) out.add(at + d);
    }
    return out;
  }

  // The instants a wall time names: two in a repeated hour, and in a skipped hour the instant
  // java.time moves it to (the length of the gap later).
  private static List<Long> wallInstants(LocalDateTime wall, ZoneId zone) {
    List<Long> out = new ArrayList<>();
    ZonedDateTime z = ZonedDateTime.of(wall, zone);
    out.add(z.withEarlierOffsetAtOverlap().toInstant().toEpochMilli());
    long later = z.withLaterOffsetAtOverlap().toInstant().toEpochMilli();
    if (later != out.get(0)) out.add(later);
    return out;
  }

  private static List<Instant> transitions(String zone, int year) {
    ZoneRules rules = ZoneId.of(zone).getRules();
    Instant end = Instant.parse((year + 1) + "-01-01T00:00:00Z");
    List<Instant> result = new ArrayList<>();
    Instant t = Instant.parse(year + "-01-01T00:00:00Z");
    while (true) {
      ZoneOffsetTransition next = rules.nextTransition(t);
      if (next == null || !next.getInstant().isBefore(end)) break;
      t = next.getInstant();
      result.add(t);
    }
    return result;
  }

  // What business_calendar.h says: every part but the daily ones as Quartz answers it alone (the
  // corpus's time lines check those), and each daily range read as wall time, both ends
  // included, so that an instant is excluded when its local time of day falls in the range.
  private static boolean wallTimeIncluded(Cal cal, long t) {
    LocalTime local = Instant.ofEpochMilli(t).atZone(ZoneId.of(cal.zone)).toLocalTime();
    long ms = local.toNanoOfDay() / 1_000_000;
    for (int i = 0; i < cal.parts.size(); i++) {
      Part p = cal.parts.get(i);
      if (p.kind.equals("daily")) {
        if (ms >= p.startS * 1000L && ms <= p.endS * 1000L) return false;
      } else if (!cal.standalone.get(i).isTimeIncluded(t)) {
        return false;
      }
    }
    return true;
  }

  private static String quirkReason(Cal cal, long t) {
    ZonedDateTime local = Instant.ofEpochMilli(t).atZone(ZoneId.of(cal.zone));
    long ms = local.toLocalTime().toNanoOfDay() / 1_000_000;
    if (ms == 0 || ms == 86_399_999) return "day-bounds";
    ZoneRules rules = ZoneId.of(cal.zone).getRules();
    LocalDate day = local.toLocalDate();
    ZoneOffsetTransition next = rules.nextTransition(day.atStartOfDay(ZoneId.of(cal.zone)).toInstant().minusMillis(1));
    if (next != null && next.getInstant().atZone(ZoneId.of(cal.zone)).toLocalDate().equals(day)) return "dst";
    throw new IllegalStateException(cal.id + ": Quartz and wall time differ at " + t + " (" + local
        + ") for no known reason");
  }

  // The trigger's first COUNT fire times with the calendar, as Quartz's scheduler computes them,
  // or "quirk ..." when a fire time the search passed over (or found) is a quirk instant.
  private static String fireTimes(Cal cal, Fire f) throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor(runnable -> {
      Thread thread = new Thread(runnable);
      thread.setDaemon(true);
      return thread;
    });
    Future<String> result = executor.submit(() -> {
      OperableTrigger trigger = (OperableTrigger) TriggerBuilder.newTrigger()
          .withSchedule(CronScheduleBuilder.cronSchedule(f.cron)
              .inTimeZone(TimeZone.getTimeZone(ZoneId.of(f.zone))))
          // computeFirstFireTime asks for the first fire after start - 1 s: the first fire is
          // the first one strictly after start_ms.
          .startAt(new Date(f.startMs + 1000))
          .build();
      List<Date> times = TriggerUtils.computeFireTimes(trigger, cal.chain, COUNT);
      // Every instant of the schedule up to the last fire time, each of which Quartz asked the
      // calendar about: the case is left out when one of them is a quirk instant.
      CronExpression cron = new CronExpression(f.cron);
      cron.setTimeZone(TimeZone.getTimeZone(ZoneId.of(f.zone)));
      long last = times.isEmpty() ? f.startMs : times.get(times.size() - 1).getTime();
      Date at = cron.getTimeAfter(new Date(f.startMs));
      boolean ended = times.size() < COUNT;
      while (at != null && (at.getTime() <= last || ended)) {
        if (at.getTime() >= HORIZON_MS) {
          // Quartz answered null because it reached its MAX_YEAR, not because the schedule ended.
          throw new IllegalStateException(cal.id + " '" + f.cron + "': the calendar blocks the rest of the schedule");
        }
        if (cal.chain.isTimeIncluded(at.getTime()) != wallTimeIncluded(cal, at.getTime())) {
          return "quirk at " + at.getTime() + " (" + local(at.getTime(), cal.zone) + ")";
        }
        at = cron.getTimeAfter(at);
      }
      StringBuilder b = new StringBuilder();
      long previous = f.startMs;
      for (Date d : times) {
        if (d.getTime() - previous > MAX_GAP_MS) {
          throw new IllegalStateException(cal.id + " '" + f.cron + "': the calendar blocks the schedule for over "
              + MAX_GAP_MS / 86_400_000 + " days after " + previous);
        }
        previous = d.getTime();
        if (b.length() > 0) b.append(' ');
        b.append(d.getTime());
      }
      if (ended) b.append(b.length() > 0 ? " end" : "end");
      return b.toString();
    });
    try {
      return result.get(TIMEOUT_MS, TimeUnit.MILLISECONDS);
    } finally {
      executor.shutdownNow();
    }
  }

  private static String local(long t, String zone) {
    return Instant.ofEpochMilli(t).atZone(ZoneId.of(zone))
        .format(DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSxxx EEE", java.util.Locale.ROOT));
  }

  // Debian's quartz2.jar carries no version in its manifest; its path names it.
  private static String quartzJar() {
    String jar = CronExpression.class.getProtectionDomain().getCodeSource().getLocation().getPath();
    try {
      return Paths.get(jar).toRealPath().getFileName().toString();
    } catch (java.io.IOException e) {
      return jar;
    }
  }
}
