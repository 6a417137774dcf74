import type en from '../en/audit'

const messages: typeof en = {
  title: '审计日志',
  filters: {
    user: '用户',
    anyUser: '全部用户',
    entityType: '对象类型',
    anyEntity: '全部对象',
    entityId: '对象 ID',
    range: '时间',
    rangeStart: '开始',
    rangeEnd: '结束',
  },
  entities: {
    job: '任务',
    group: '执行器分组',
    user: '用户',
    token: 'API 令牌',
    log: '运行',
  },
  columns: {
    at: '时间',
    user: '用户',
    action: '操作',
    entity: '对象',
    changed: '变更字段',
    remoteAddr: '来源地址',
  },
  deletedUser: '已删除的用户',
  system: '系统',
  show: '查看变更',
  showLabel: '查看记录 {id} 的变更',
  changeTitle: '{entity} 的 {action}',
  before: '变更前',
  after: '变更后',
  nothingBefore: '无：对象为新建',
  nothingAfter: '无：对象已删除',
  field: '字段',
  onlyChanged: '仅显示变更字段',
  table: '字段',
  json: 'JSON',
}

export default messages
