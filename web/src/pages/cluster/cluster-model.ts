// What the cluster page lists: the admin nodes as GET nodes answers them, and the executors as
// the registry holds them per group (GET groups/{id}/executors). Pure: unit tested.
import type { ExecutorRegistration, Group, NodeStatus } from '@/api/types'

/** One line of the executor table: an online registration, or a group with none. */
export interface ExecutorRow {
  groupId: number
  group: string
  appName: string
  /** Null: the group has no executor online. */
  address: string | null
  updatedAt: number | null
  /** The group routes to its own address list rather than to registrations. */
  manual: boolean
}

/** Live nodes first, then by node id. */
export function sortNodes(nodes: NodeStatus[]): NodeStatus[] {
  return [...nodes].sort((a, b) => Number(b.alive) - Number(a.alive) || a.nodeId.localeCompare(b.nodeId))
}

/**
 * Every group with its online executors by address; a group without one gets a single row with
 * no address (so "nobody to run this group's jobs" shows). Groups whose registrations could not
 * be read are left out. Groups in title order.
 */
export function executorRows(groups: Group[], registrations: Map<number, ExecutorRegistration[]>): ExecutorRow[] {
  const rows: ExecutorRow[] = []
  const sorted = [...groups].sort((a, b) => (a.title ?? '').localeCompare(b.title ?? '') || (a.id ?? 0) - (b.id ?? 0))
  for (const g of sorted) {
    if (g.id === undefined) continue
    const regs = registrations.get(g.id)
    if (!regs) continue
    const base = { groupId: g.id, group: g.title ?? '', appName: g.appName ?? '', manual: g.addressType === 1 }
    if (regs.length === 0) {
      rows.push({ ...base, address: null, updatedAt: null })
      continue
    }
    for (const r of [...regs].sort((a, b) => a.address.localeCompare(b.address))) {
      rows.push({ ...base, address: r.address, updatedAt: r.updatedAt })
    }
  }
  return rows
}

/** Runs `work` on every item, at most `limit` at a time; answers in the items' order. */
export async function mapLimited<I, O>(items: I[], limit: number, work: (item: I) => Promise<O>): Promise<O[]> {
  const out = new Array<O>(items.length)
  let next = 0
  async function worker() {
    while (next < items.length) {
      const i = next++
      out[i] = await work(items[i]!)
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
  return out
}
