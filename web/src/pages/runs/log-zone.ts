// The zone of a run log's line times. The executor stamps each line with its own local wall
// clock ("2026-11-28 16:00:00.123 message") and no offset, so the console works the offset out:
// the first stamped line is written as the run starts, right after the admin's trigger, whose
// instant the run records. Their difference, rounded to the quarter hour every zone's offset
// is a multiple of, is the executor's offset; a difference too far from any quarter hour (a run
// that waited in the executor's queue) leaves it unknown. Pure: unit tested.

const STAMP = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,3}))?(?=\s|$)/m
const QUARTER_HOUR_MS = 15 * 60_000
/** How far from a quarter hour the difference may fall: the start's delay after the trigger. */
const MAX_START_DELAY_MS = 2 * 60_000
/**
 * How far the first line may read before the trigger's instant: the executor's clock may be
 * behind the database's, and the instant recorded may be taken after the executor started.
 */
const MAX_CLOCK_SKEW_MS = 60_000
/** The widest offsets in use: UTC-12:00 to UTC+14:00. */
const MIN_OFFSET_MIN = -12 * 60
const MAX_OFFSET_MIN = 14 * 60

/** The wall-clock time of the log's first stamped line, read as if it were UTC; null without one. */
export function firstStampAsUtc(text: string): number | null {
  const m = STAMP.exec(text)
  if (!m) return null
  const [, y, mo, d, h, mi, s, ms] = m
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), Number((ms ?? '0').padEnd(3, '0')))
}

/**
 * Minutes the executor's clock was ahead of UTC when it wrote the log (+60 for UTC+01:00), or
 * null when the log has no stamped line, the run was never triggered, or the first line was
 * not written close enough to the trigger to tell.
 */
export function inferLogOffsetMinutes(text: string, triggerTime: number | null | undefined): number | null {
  if (!triggerTime) return null
  const stamp = firstStampAsUtc(text)
  if (stamp === null) return null
  const diff = stamp - triggerTime
  const quarters = Math.round(diff / QUARTER_HOUR_MS)
  const rest = diff - quarters * QUARTER_HOUR_MS
  if (rest < -MAX_CLOCK_SKEW_MS || rest > MAX_START_DELAY_MS) return null
  const minutes = quarters * 15
  return minutes < MIN_OFFSET_MIN || minutes > MAX_OFFSET_MIN ? null : minutes
}
