import type en from '../en/cluster'

const messages: typeof en = {
  title: '集群',
  refresh: '刷新',
  intro: '负责调度任务的调度节点与运行任务的执行器；每 10 秒刷新一次。',
  zoneHint: '时间为 {zone}。',
  nodes: {
    title: '调度节点',
    node: '节点',
    state: '状态',
    alive: '在线',
    down: '离线',
    scanning: '执行了最近一次扫描',
    version: '版本',
    started: '启动时间',
    heartbeat: '最近心跳',
    leaseUntil: '租约到期 {time}',
    lastScan: '最近一次调度扫描由 {node} 于 {time} 执行。',
    noScan: '尚未执行过调度扫描。',
    none: '尚无调度节点注册。',
  },
  executors: {
    title: '执行器',
    group: '执行器分组',
    address: '地址',
    registered: '最近注册',
    noneOnline: '无在线执行器',
    manual: '使用手动录入的地址',
    summary: '{groups} 个分组中共 {online} 个在线。',
    unread: '{n} 个分组无法读取。',
    tooMany: '仅列出前 {n} 个分组。',
    onlyGroups: '应用名不属于任何分组的执行器不在此列出。',
    noGroups: '尚无执行器分组。',
  },
}

export default messages
