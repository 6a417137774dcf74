// A list's first page asked for as soon as the router knows who is logged in, while the page's
// own code is still downloading: the rows and the code then arrive together instead of one after
// the other, and the page's first render already shows them. A route names its list's URL and
// loader in `meta.list` (the same ListQuery its page passes to usePagedList), and usePagedList
// takes the answer when it loads that very URL.
//
// At most one answer waits at a time: each navigation replaces the one before, taken or not.
import type { PageAnswer } from './usePagedList'

export interface PrefetchedList<T> {
  answer: Promise<PageAnswer<T>>
  /** Set once the answer is in, so a page mounting after it can show it without waiting. */
  settled?: { ok: true; value: PageAnswer<T> } | { ok: false; error: unknown }
}

let waiting: { fullPath: string; list: PrefetchedList<unknown> } | null = null

/** Starts loading `fullPath`'s first page; a failure surfaces when usePagedList takes it. */
export function prefetchList(fullPath: string, load: () => Promise<PageAnswer<unknown>>): void {
  const list: PrefetchedList<unknown> = { answer: load() }
  list.answer.then(
    (value) => (list.settled = { ok: true, value }),
    (error: unknown) => (list.settled = { ok: false, error }),
  )
  waiting = { fullPath, list }
}

/** The answer started for `fullPath`, once; null when none was. */
export function takePrefetchedList<T>(fullPath: string): PrefetchedList<T> | null {
  if (!waiting || waiting.fullPath !== fullPath) return null
  const { list } = waiting
  waiting = null
  return list as PrefetchedList<T>
}

/** Forgets any answer not taken. */
export function dropPrefetchedList(): void {
  waiting = null
}
