import { describe, expect, it } from 'vitest'
import type { NodeStatus } from '@/api/types'
import { executorRows, mapLimited, sortNodes } from '@/pages/cluster/cluster-model'

const node = (nodeId: string, alive: boolean): NodeStatus => ({
  nodeId,
  alive,
  address: '',
  version: '',
  startedAt: 0,
  heartbeatAt: 0,
  leaseUntil: 0,
})

describe('the cluster page', () => {
  it('lists live nodes first, each part by node id', () => {
    expect(sortNodes([node('b', false), node('c', true), node('a', false), node('a2', true)]).map((n) => n.nodeId)).toEqual(['a2', 'c', 'a', 'b'])
  })

  it('lists each group’s executors by address, and a group with none as one row without an address', () => {
    const rows = executorRows(
      [
        { id: 2, title: 'Reports', appName: 'reports', addressType: 0 },
        { id: 1, title: 'Billing', appName: 'billing', addressType: 1 },
        { id: 3, title: 'Unreadable', appName: 'x', addressType: 0 },
      ],
      new Map([
        [1, []],
        [
          2,
          [
            { address: 'http://b:9999/', updatedAt: 20 },
            { address: 'http://a:9999/', updatedAt: 10 },
          ],
        ],
      ]),
    )
    expect(rows).toEqual([
      { groupId: 1, group: 'Billing', appName: 'billing', manual: true, address: null, updatedAt: null },
      { groupId: 2, group: 'Reports', appName: 'reports', manual: false, address: 'http://a:9999/', updatedAt: 10 },
      { groupId: 2, group: 'Reports', appName: 'reports', manual: false, address: 'http://b:9999/', updatedAt: 20 },
    ])
  })

  it('reads many groups a few at a time, answering in order', async () => {
    let running = 0
    let most = 0
    const out = await mapLimited([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      running++
      most = Math.max(most, running)
      for (let k = 0; k < (8 - n) % 3; k++) await Promise.resolve()
      running--
      return n * 10
    })
    expect(out).toEqual([10, 20, 30, 40, 50, 60, 70])
    expect(most).toBe(3)
  })
})
