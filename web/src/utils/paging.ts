// Paging limits the admin's job and run lists keep (openapi.yaml: KeyedOffset, KeyedPage).

// The deepest offset GET jobs and GET logs accept.
export const MAX_LIST_OFFSET = 10_000

// The total the pager counts pages of. An exact total is used as it is. A lower bound (the
// list stopped counting) offers one page beyond what is known, and never a page whose offset
// the admin would refuse.
export function pagerTotal(total: number, exact: boolean, size: number, maxOffset: number): number {
  if (exact) return total
  const lastOffset = Math.floor(maxOffset / size) * size
  return Math.min(Math.max(total, 1) + size, lastOffset + size)
}
