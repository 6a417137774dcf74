// Instants (epoch ms) shown in a named IANA zone, always with the zone's offset, so a time on
// screen never leaves its zone to guesswork. Pure functions over Intl: unit tested with fixed
// instants and zones.

const partsCache = new Map<string, Intl.DateTimeFormat>()

function partsFormatter(zone: string): Intl.DateTimeFormat {
  let f = partsCache.get(zone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      weekday: 'short',
    })
    partsCache.set(zone, f)
  }
  return f
}

export interface ZonedParts {
  year: number
  month: number
  day: number
  hour: number
  minute: number
  second: number
  /** 0 = Sunday … 6 = Saturday */
  weekday: number
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']

/** The wall-clock fields of an instant in a zone. */
export function zonedParts(ms: number, zone: string): ZonedParts {
  const out: Record<string, string> = {}
  for (const p of partsFormatter(zone).formatToParts(new Date(ms))) out[p.type] = p.value
  return {
    year: Number(out.year),
    month: Number(out.month),
    day: Number(out.day),
    hour: Number(out.hour) % 24,
    minute: Number(out.minute),
    second: Number(out.second),
    weekday: WEEKDAYS.indexOf(out.weekday ?? 'Sun'),
  }
}

/** Minutes the zone is ahead of UTC at that instant (New York in summer: -240). */
export function zoneOffsetMinutes(ms: number, zone: string): number {
  const p = zonedParts(ms, zone)
  const asUtc = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second)
  const whole = Math.floor(ms / 1000) * 1000
  return Math.round((asUtc - whole) / 60000)
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0')

/** "UTC+08:00", "UTC-04:00", "UTC+05:45", "UTC+00:00". */
export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+'
  const m = Math.abs(minutes)
  return `UTC${sign}${pad(Math.floor(m / 60))}:${pad(m % 60)}`
}

export interface FormatOptions {
  /** Append the zone's offset (default true). */
  offset?: boolean
  /** Append the zone's name, e.g. "America/New_York" (default false). */
  zoneName?: boolean
  /** Leave out the seconds (default false). */
  noSeconds?: boolean
}

/** "2024-07-01 09:30:00 UTC-04:00": the instant in the zone, with the zone's offset. */
export function formatInZone(ms: number, zone: string, opts: FormatOptions = {}): string {
  const p = zonedParts(ms, zone)
  let s = `${pad(p.year, 4)}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}`
  if (!opts.noSeconds) s += `:${pad(p.second)}`
  if (opts.offset ?? true) s += ` ${formatOffset(zoneOffsetMinutes(ms, zone))}`
  if (opts.zoneName) s += ` (${zone})`
  return s
}

let browserZone: string | undefined

/** The browser's zone ("UTC" when it cannot tell), read once: asking Intl costs a formatter. */
export function browserTimeZone(): string {
  if (browserZone === undefined) {
    try {
      browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC'
    } catch {
      browserZone = 'UTC'
    }
  }
  return browserZone
}

/** The browser's time zone and its offset now, as pages name it: "Europe/Paris (UTC+01:00)". */
export function browserZoneText(now = Date.now()): string {
  const zone = browserTimeZone()
  return `${zone} (${formatOffset(zoneOffsetMinutes(now, zone))})`
}

/** An instant in the browser's zone, with its offset; "" for null, undefined and 0 (unset). */
export function formatLocal(ms: number | null | undefined, opts: FormatOptions = {}): string {
  if (!ms) return ''
  return formatInZone(ms, browserTimeZone(), opts)
}

export function isValidTimeZone(zone: string): boolean {
  if (!zone) return false
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** Used when the runtime cannot list its zones (Intl.supportedValuesOf is from 2022). */
export const FALLBACK_TIME_ZONES = [
  'UTC',
  'Africa/Cairo',
  'Africa/Johannesburg',
  'Africa/Lagos',
  'America/Anchorage',
  'America/Argentina/Buenos_Aires',
  'America/Bogota',
  'America/Chicago',
  'America/Denver',
  'America/Halifax',
  'America/Los_Angeles',
  'America/Mexico_City',
  'America/New_York',
  'America/Phoenix',
  'America/Santiago',
  'America/Sao_Paulo',
  'America/St_Johns',
  'America/Toronto',
  'America/Vancouver',
  'Asia/Bangkok',
  'Asia/Dhaka',
  'Asia/Dubai',
  'Asia/Hong_Kong',
  'Asia/Jakarta',
  'Asia/Jerusalem',
  'Asia/Karachi',
  'Asia/Kathmandu',
  'Asia/Kolkata',
  'Asia/Manila',
  'Asia/Seoul',
  'Asia/Shanghai',
  'Asia/Singapore',
  'Asia/Taipei',
  'Asia/Tehran',
  'Asia/Tokyo',
  'Atlantic/Reykjavik',
  'Australia/Adelaide',
  'Australia/Brisbane',
  'Australia/Perth',
  'Australia/Sydney',
  'Europe/Amsterdam',
  'Europe/Athens',
  'Europe/Berlin',
  'Europe/Istanbul',
  'Europe/Lisbon',
  'Europe/London',
  'Europe/Madrid',
  'Europe/Moscow',
  'Europe/Paris',
  'Europe/Rome',
  'Europe/Stockholm',
  'Europe/Warsaw',
  'Europe/Zurich',
  'Pacific/Auckland',
  'Pacific/Honolulu',
]

/** Every IANA zone the runtime knows, UTC first. */
export function listTimeZones(): string[] {
  let zones: string[] = []
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] }
  try {
    if (typeof intl.supportedValuesOf === 'function') zones = intl.supportedValuesOf('timeZone')
  } catch {
    zones = []
  }
  if (zones.length === 0) zones = FALLBACK_TIME_ZONES
  return ['UTC', ...zones.filter((z) => z !== 'UTC')]
}

/** "850 ms", "12.3 s", "4 min 5 s", "2 h 3 min". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return ''
  if (ms < 1000) return `${Math.round(ms)} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`
  const s = Math.round(ms / 1000)
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/**
 * The instant of a wall-clock time in a zone (e.g. what a date picker in that zone means). A time
 * the clocks repeat (they go back) names its first instant; a time they skip (they go forward)
 * names the same time after the gap, shifted by the gap's length (New York's 02:30 on the spring
 * Sunday is 03:30 EDT), as java.time and Temporal's "compatible" disambiguation do.
 */
export function instantFromZoned(
  zone: string,
  year: number,
  month: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
): number {
  const guess = Date.UTC(year, month - 1, day, hour, minute, second)
  const first = guess - zoneOffsetMinutes(guess, zone) * 60000
  // A second pass settles instants near an offset change.
  const settled = guess - zoneOffsetMinutes(first, zone) * 60000
  const names = (t: number) => {
    const p = zonedParts(t, zone)
    return p.year === year && p.month === month && p.day === day && p.hour === hour && p.minute === minute && p.second === second
  }
  if (names(settled)) return settled
  if (names(first)) return first
  // Neither reads back as the time: the zone skips it. The offset before the gap puts it after.
  return Math.max(first, settled)
}
